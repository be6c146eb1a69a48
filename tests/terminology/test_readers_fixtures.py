"""Each reader on a small hand-written file in its published layout."""

from pathlib import Path

import pytest

from medlink.terminology import NameKind, ReadReport, Relation, SourceError, SourceSpec, compile_terminology
from medlink.terminology.readers import detect_format, read_source


def read(path: Path, format_name: str | None = None, **options):
    report = ReadReport()
    concepts = {concept.id: concept for concept in read_source(path, format_name, report, **options)}
    return concepts, report


def kinds(concept) -> dict[str, NameKind]:
    return {name.text: name.kind for name in concept.names}


def test_obo(fixtures: Path) -> None:
    concepts, report = read(fixtures / "tiny.obo")
    assert set(concepts) == {"TP:0000001", "TP:0000002", "TP:0000003"}
    assert report.counts["obsolete terms excluded"] == 1
    assert report.counts["obsolete synonyms skipped"] == 1
    heart = concepts["TP:0000002"]
    assert heart.preferred_name == "Abnormality of the heart"
    assert kinds(heart) == {
        "Abnormality of the heart": NameKind.PREFERRED,
        "Cardiac abnormality": NameKind.EXACT,
        "Heart defect": NameKind.RELATED,
        "CA": NameKind.ABBREVIATION,
    }
    assert heart.definition == 'Any anomaly of the heart, the "pump".'
    assert heart.parents == ("TP:0000001",)
    assert heart.alt_ids == ("TP:0000099",)
    assert heart.xrefs == ("UMLS:C0000001",)
    assert heart.semantic_types == ("tiny_phenotype",)
    vsd = concepts["TP:0000003"]
    assert vsd.parents == ("TP:0000002",)
    assert kinds(vsd)["Hole in heart wall"] is NameKind.BROAD
    assert kinds(vsd)["Perimembranous VSD"] is NameKind.NARROW
    assert vsd.relations == (Relation("TP:0000003", "part_of", "TP:0000002"),)


def test_ctd(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "ctd_diseases_tiny.tsv", "ctd")
    infarction = concepts["MESH:D009203"]
    assert infarction.alt_ids == ("OMIM:608446", "DO:DOID:5844")
    assert infarction.parents == ("MESH:D002318",)
    assert infarction.tree_numbers == ("C14.280.647.500",)
    assert [n.text for n in infarction.names] == ["Myocardial Infarction", "Heart Attack", "Infarction, Myocardial"]
    assert concepts["OMIM:277900"].preferred_name == "Wilson disease"
    assert concepts["MESH:D002318"].definition == "Pathological conditions of the heart and vessels."


def test_biosyn_dictionary(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "medic_tiny.txt")
    assert set(concepts) == {"MESH:D009203", "MESH:C567755", "OMIM:613150", "MESH:D002318"}
    assert concepts["MESH:C567755"].alt_ids == ("OMIM:613097",)
    assert [n.text for n in concepts["MESH:C567755"].names] == ["Tooth Agenesis, Selective, 6", "STHAG6"]


def test_mesh_descriptor_tsv_hierarchy_from_tree_numbers(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv")
    assert concepts["MESH:D009203"].parents == ("MESH:D017202",)
    assert concepts["MESH:D017202"].parents == ("MESH:D006331", "MESH:D014652")
    assert concepts["MESH:D006331"].parents == ("MESH:D002318",)
    assert concepts["MESH:D002318"].parents == ()
    assert concepts["MESH:D009203"].semantic_types == ("Diseases",)
    assert concepts["MESH:D000001"].semantic_types == ("Chemicals and Drugs",)
    assert kinds(concepts["MESH:D009203"])["Heart Attack"] is NameKind.ENTRY_TERM


def test_mesh_term_list_keeps_each_terms_kind(fixtures: Path) -> None:
    concepts, report = read(fixtures / "mesh2024_descriptor_terms_tiny.tsv")  # the format told by the file's name
    infarction = concepts["MESH:D009203"]
    assert infarction.preferred_name == "Myocardial Infarction" and not report.counts
    assert kinds(infarction) == {
        "Myocardial Infarction": NameKind.PREFERRED,
        "Infarction, Myocardial": NameKind.PERMUTED,
        "Myocardial Infarctions": NameKind.PERMUTED,
        "Heart Attack": NameKind.ENTRY_TERM,
        "MI": NameKind.ABBREVIATION,
    }


def test_mesh_term_list_then_descriptor_tsv_gives_names_and_hierarchy(fixtures: Path) -> None:
    terminology = compile_terminology(
        [
            SourceSpec(fixtures / "mesh2024_descriptor_terms_tiny.tsv", "mesh-terms-tsv"),
            SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv"),
        ]
    )
    infarction = terminology.concept("MESH:D009203")
    assert infarction.parents == ("MESH:D017202",) and infarction.semantic_types == ("Diseases",)
    # the term list's kinds win the merge: the descriptor TSV has "Infarction, Myocardial" as an entry term
    assert kinds(infarction)["Infarction, Myocardial"] is NameKind.PERMUTED
    assert {name.text for name in infarction.names} >= {"Myocardial Infarctions", "Heart Attack"}


def test_mesh_term_list_errors_name_the_file_and_line(tmp_path: Path) -> None:
    header = "DescriptorUI\tTermName\tIsPermutedTermYN\tLexicalTag\tRecordPreferredTermYN\n"
    short = tmp_path / "mesh2024_descriptor_terms.tsv"
    short.write_text(header + "D009203\tHeart Attack\tN\tNON\tY\nD006331\tHeart Diseases\n")
    concepts, report = read(short)
    assert list(concepts) == ["MESH:D009203"]
    assert report.examples["malformed lines skipped"] == [f"{short}:3: expected 5 tab-separated columns, found 2"]
    odd = tmp_path / "odd_descriptor_terms.tsv"
    rows = ["D1\tAlpha\tN\tNON\tY", "D1\tBeta\tN\tNON\tY", "D1\tGamma\tYes\tNON\tN", "D2\tGammas\tY\tNON\tN"]
    odd.write_text(header + "\n".join([*rows, "D2\tGamma \tN \tNON\tN"]) + "\n")
    concepts, report = read(odd, "mesh-terms-tsv")
    assert kinds(concepts["MESH:D1"]) == {"Alpha": NameKind.PREFERRED, "Beta": NameKind.ENTRY_TERM}
    assert report.examples["malformed lines skipped"] == [f"{odd}:4: IsPermutedTermYN is 'Yes', not Y or N"]
    assert concepts["MESH:D2"].preferred_name == "Gamma"  # no preferred row: an entry term, not the permuted one
    assert report.counts["second preferred terms kept as entry terms"] == 1
    headless = tmp_path / "mesh_descriptor_terms.tsv"
    headless.write_text("D009203\tHeart Attack\tN\tNON\tY\n")
    with pytest.raises(
        SourceError, match=r"mesh_descriptor_terms\.tsv:1: the header lacks the column\(s\) DescriptorUI"
    ):
        read(headless)
    empty = tmp_path / "empty_descriptor_terms.tsv"
    empty.write_text("")
    with pytest.raises(SourceError, match=r"empty_descriptor_terms\.tsv:1: empty file"):
        read(empty, "mesh-terms-tsv")


def test_mesh_supplementary_tsv_maps_to_descriptors(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "mesh_supplementary_tiny.tsv", "mesh-supp-tsv")
    assert concepts["MESH:C000006"].parents == ("MESH:D006331", "MESH:D017202")
    assert '"NPH" insulin' in kinds(concepts["MESH:C000006"])  # quotes are plain characters


def test_mesh_xml_descriptors(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "desc_tiny.xml")
    infarction = concepts["MESH:D009203"]
    assert kinds(infarction) == {
        "Myocardial Infarction": NameKind.PREFERRED,
        "Heart Attack": NameKind.ENTRY_TERM,
        "MI": NameKind.ABBREVIATION,
        "Cardiovascular Stroke": NameKind.NARROW,
    }
    assert infarction.parents == ("MESH:D006331",)
    assert infarction.definition.startswith("NECROSIS of the MYOCARDIUM")
    assert infarction.relations == (Relation("MESH:D009203", "pharmacological_action", "MESH:D006331"),)
    assert kinds(concepts["MESH:D006331"])["Diseases, Cardiac"] is NameKind.PERMUTED


def test_mesh_xml_supplementary(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "supp_tiny.xml")
    assert concepts["MESH:C000002"].parents == ("MESH:D009203",)
    assert concepts["MESH:C000002"].semantic_types == ("Chemical",)
    assert concepts["MESH:C535305"].semantic_types == ("Rare disease",)


def test_umls_rrf(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "umls")
    infarction = concepts["UMLS:C0027051"]
    assert infarction.preferred_name == "Myocardial Infarction"
    assert kinds(infarction) == {
        "Myocardial Infarction": NameKind.PREFERRED,
        "Heart Attack": NameKind.EXACT,
        "MI": NameKind.ABBREVIATION,
    }  # French and suppressed rows are filtered out
    assert infarction.semantic_types == ("T047",)
    assert infarction.parents == ("UMLS:C0018799",)
    assert infarction.relations == (Relation("UMLS:C0027051", "has_manifestation", "UMLS:C0018799"),)
    assert "UMLS:C9999999" in concepts


def test_umls_rrf_filters(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "umls" / "MRCONSO.RRF", "umls", vocabularies={"MSH"}, include_suppressed=True)
    assert "UMLS:C9999999" not in concepts
    assert "Old obsolete infarct name" in kinds(concepts["UMLS:C0027051"])
    assert "MI" not in kinds(concepts["UMLS:C0027051"])  # MTH row, not MSH
    french, _ = read(fixtures / "umls", "umls", languages={"FRE"})
    assert french["UMLS:C0027051"].preferred_name == "Infarctus du myocarde"


def test_drugbank(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "drugbank_tiny.csv", "drugbank")
    ibuprofen = concepts["DRUGBANK:DB01050"]
    assert ibuprofen.preferred_name == "Ibuprofen"
    assert "(±)-ibuprofen" in kinds(ibuprofen)
    assert ibuprofen.alt_ids == ("DRUGBANK:APRD00372",)
    assert "CAS:15687-27-1" in ibuprofen.xrefs
    assert "[Leu1, Thr2]-63-desulfohirudin" in kinds(concepts["DRUGBANK:DB00001"])


def test_icd10cm(fixtures: Path) -> None:
    concepts, report = read(fixtures / "icd10cm_tabular_tiny.xml")
    assert set(concepts) == {"ICD10CM:A00-A09", "ICD10CM:A00", "ICD10CM:A00.0", "ICD10CM:A00.9", "ICD10CM:B10"}
    assert concepts["ICD10CM:A00-A09"].preferred_name == "Intestinal infectious diseases"
    assert concepts["ICD10CM:A00"].parents == ("ICD10CM:A00-A09",)
    assert concepts["ICD10CM:A00.0"].parents == ("ICD10CM:A00",)
    assert kinds(concepts["ICD10CM:A00.0"])["Classical cholera"] is NameKind.ENTRY_TERM
    assert concepts["ICD10CM:B10"].parents == ()  # a one-code section is the code itself
    assert concepts["ICD10CM:A00"].semantic_types == ("Certain infectious and parasitic diseases",)
    assert not report.counts


def test_generic_tsv(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "generic_tiny.tsv", namespace="GEN")
    assert list(concepts) == ["GEN:X1", "GEN:X2"]
    assert kinds(concepts["GEN:X1"]) == {
        "first thing": NameKind.PREFERRED,
        "the 1st thing": NameKind.EXACT,
        "FT": NameKind.ABBREVIATION,
    }


def test_code_table_prefix_hierarchy(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "codes_tiny.tsv", "code-table", namespace="ICD10BJ")
    assert concepts["ICD10BJ:A00.001"].parents == ("ICD10BJ:A00.0",)
    assert concepts["ICD10BJ:A00.0"].parents == ("ICD10BJ:A00",)
    assert concepts["ICD10BJ:A01.000x001"].parents == ("ICD10BJ:A01",)
    assert concepts["ICD10BJ:A00"].parents == ()


def test_code_table_xlsx(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in (("code", "name"), ("A00", "霍乱"), ("A00.0", "古典生物型霍乱"), ("A00.0", "霍乱弧菌感染")):
        sheet.append(row)
    path = tmp_path / "kb.xlsx"
    workbook.save(path)
    concepts, _ = read(path, namespace="ICD10BJ")
    assert concepts["ICD10BJ:A00.0"].parents == ("ICD10BJ:A00",)
    assert [n.text for n in concepts["ICD10BJ:A00.0"].names] == ["古典生物型霍乱", "霍乱弧菌感染"]


def test_jsonl(fixtures: Path) -> None:
    concepts, _ = read(fixtures / "generic_tiny.jsonl", namespace="X")
    child = concepts["X:2"]
    assert kinds(child) == {
        "child thing": NameKind.PREFERRED,
        "kid thing": NameKind.EXACT,
        "small thing": NameKind.NARROW,
        "CT": NameKind.ABBREVIATION,
    }
    assert child.parents == ("X:1",)
    assert child.relations == (Relation("X:2", "next_to", "X:1"),)
    assert "X:3" in concepts


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hp.obo.gz", "obo"),
        ("CTD_diseases.tsv.gz", "ctd"),
        ("medic_06Jul2012.txt", "biosyn"),
        ("mesh_descriptors.tsv.gz", "mesh-desc-tsv"),
        ("mesh_supplementary.tsv.gz", "mesh-supp-tsv"),
        ("mesh2024_descriptor_terms.tsv.gz", "mesh-terms-tsv"),
        ("desc2025.xml", "mesh-xml"),
        ("supp2025.xml.gz", "mesh-xml"),
        ("MRCONSO.RRF", "umls"),
        ("drugbank_vocabulary.csv.gz", "drugbank"),
        ("icd10cm_tabular_2026.xml.gz", "icd10cm"),
        ("kb.xlsx", "code-table"),
        ("standard.txt", "tsv"),
        ("terms.jsonl", "jsonl"),
    ],
)
def test_format_detection(name: str, expected: str) -> None:
    assert detect_format(Path(name)) == expected


def test_several_sources_merge(fixtures: Path) -> None:
    terminology = compile_terminology(
        [
            SourceSpec.parse(str(fixtures / "mesh_descriptors_tiny.tsv"), "mesh-desc-tsv"),
            SourceSpec.parse(f"ctd:{fixtures / 'ctd_diseases_tiny.tsv'}"),
            SourceSpec.parse(str(fixtures / "tiny.obo")),
        ]
    )
    infarction = terminology.concept("MESH:D009203")
    assert infarction.source == "MeSH descriptors; CTD diseases"
    assert infarction.alt_ids == ("OMIM:608446", "DO:DOID:5844")
    assert terminology.resolve("OMIM:608446") == "MESH:D009203"
    assert "TP:0000003" in terminology
    assert len(terminology.sources) == 3


def test_unknown_format_lists_the_known_ones(tmp_path: Path) -> None:
    path = tmp_path / "vocabulary.dat"
    path.write_text("x")
    with pytest.raises(Exception, match=r"cannot tell the format.*obo, ctd"):
        detect_format(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="file not found"):
        list(read_source(tmp_path / "nope.obo", "obo", ReadReport()))


def test_a_source_line_over_the_limit_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from medlink.terminology.readers import source_files

    monkeypatch.setattr(source_files, "MAX_LINE_BYTES", 100)
    path = tmp_path / "terms.tsv"
    path.write_text("D1\tok\n" + "D2\t" + "x" * 500 + "\n")
    with pytest.raises(SourceError, match=r"terms\.tsv:2: a line over 100 bytes"):
        list(source_files.iter_lines(path))
