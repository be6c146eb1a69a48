"""Every reader on its real file in ../shared/data, with the counts observed when the reader was written.

A change in any of these numbers means a reader regressed (or the data changed): look before updating them.
"""

import pytest

from medlink.terminology import NameKind, ReadReport, SourceSpec, compile_terminology
from support import shared_file

# source, format, concepts, names, is_a edges, report counts
CASES = [
    (
        "terminologies/obo/hp.obo.gz",
        "obo",
        19_034,
        41_494,
        23_392,
        {"obsolete terms excluded": 450, "obsolete synonyms skipped": 4},
    ),
    ("terminologies/obo/doid.obo.gz", "obo", 6_971, 18_577, 8_155, {"obsolete terms excluded": 2_373}),
    ("terminologies/medic/CTD_diseases.tsv.gz", "ctd", 11_865, 77_994, 20_018, {}),
    ("terminologies/medic/medic_06Jul2012.txt", "biosyn", 11_915, 76_237, 0, {}),
    ("terminologies/mesh/mesh_descriptors.tsv.gz", "mesh-desc-tsv", 30_764, 168_170, 42_020, {"is_a cycles broken": 1}),
    ("terminologies/drugbank/drugbank_vocabulary.csv.gz", "drugbank", 19_853, 55_654, 0, {}),
    ("terminologies/icd/icd10cm_tabular_2026.xml.gz", "icd10cm", 47_139, 59_713, 46_842, {}),
    ("corpora/chip-cdn/icd10_beijing_clinical_v601.tsv", "code-table", 40_474, 40_474, 37_709, {}),
    ("corpora/chip-cdn/icd10_beijing_clinical_v601.xlsx", "code-table", 40_474, 40_474, 37_709, {}),
    ("corpora/cadec/CADEC_0/standard.txt", "tsv", 181, 181, 0, {}),
]


@pytest.mark.parametrize(
    ("relative", "format_name", "concepts", "names", "edges", "counts"),
    CASES,
    ids=[case[0].rsplit("/", 1)[-1] for case in CASES],
)
def test_real_file_counts(relative, format_name, concepts, names, edges, counts) -> None:
    report = ReadReport()
    terminology = compile_terminology([SourceSpec(shared_file(relative), format_name)], report)
    assert (len(terminology), terminology.name_count) == (concepts, names)
    assert sum(1 for _ in terminology.is_a_triples()) == edges
    assert dict(report.counts) == counts


@pytest.mark.slow
def test_mesh_descriptors_and_supplementary_together() -> None:
    """The size the load target is about; supplementary concepts hang under the descriptors they map to."""
    report = ReadReport()
    terminology = compile_terminology(
        [
            SourceSpec(shared_file("terminologies/mesh/mesh_descriptors.tsv.gz"), "mesh-desc-tsv"),
            SourceSpec(shared_file("terminologies/mesh/mesh_supplementary.tsv.gz"), "mesh-supp-tsv"),
        ],
        report,
    )
    assert (len(terminology), terminology.name_count) == (354_068, 783_967)
    assert terminology.parents("MESH:C000002") == ("MESH:D001561",)
    assert report.counts["parents not in the terminology dropped"] == 21  # one malformed row in the data (C483025)
    assert [m.concept_id for m in terminology.lookup("Heart Attack")] == ["MESH:D009203"]


def test_hpo_content() -> None:
    terminology = compile_terminology([SourceSpec(shared_file("terminologies/obo/hp.obo.gz"), "obo")])
    seizure = terminology.concept("HP:0001250")
    assert seizure.preferred_name == "Seizure"
    assert seizure.parents == ("HP:0012638",)
    assert terminology.ancestors("HP:0001250") == ("HP:0012638", "HP:0000707", "HP:0000118", "HP:0000001")
    assert len(terminology.children("HP:0001250")) == 12
    assert "HP:0001250" not in terminology.siblings("HP:0001250")
    assert set(terminology.siblings("HP:0001250")) <= set(terminology.children("HP:0012638"))
    assert terminology.name_counts_by_kind()[NameKind.ABBREVIATION.value] == 576


def test_ctd_alt_ids_resolve_omim() -> None:
    terminology = compile_terminology([SourceSpec(shared_file("terminologies/medic/CTD_diseases.tsv.gz"), "ctd")])
    concept = terminology.concept("MESH:C537806")
    assert concept.preferred_name == "18-Hydroxylase deficiency"
    assert terminology.resolve("OMIM:203400") == "MESH:C537806"
