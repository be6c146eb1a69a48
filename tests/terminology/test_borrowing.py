"""Synonyms borrowed from a richer terminology (terminology/borrowing.py): the rules that keep a concept's meaning,
the compile option, the benchmark option, and the real case it was made for (CADEC's one-name SNOMED subset)."""

import subprocess
import sys
from pathlib import Path

import pytest

from medlink.benchmark.config import DatasetSpec
from medlink.benchmark.runner import prepare
from medlink.linking import Linker
from medlink.terminology import (
    Name,
    NameKind,
    SourceSpec,
    Terminology,
    compile_terminology,
    load_default_terminology,
    load_terminology,
)
from medlink.terminology.borrowing import borrow_synonyms
from medlink.terminology.records import make_concept
from support import shared_file


def terminology(*concepts: tuple[str, list[str]]) -> Terminology:
    return Terminology.from_concepts(
        make_concept(cid, names[0], [Name(n, NameKind.ENTRY_TERM) for n in names[1:]]) for cid, names in concepts
    )


DONOR = terminology(
    ("MESH:D063806", ["Myalgia", "Muscle Pain", "Muscle Soreness"]),
    ("MESH:D013035", ["Spasm", "Muscle Spasm", "Clonic Spasm"]),
    ("MESH:D006261", ["Headache", "Head Pain"]),
    ("MESH:D003371", ["Cough", "Coughing"]),
    ("MESH:D012135", ["Respiratory Sounds", "Coughing"]),
    ("MESH:D009120", ["Muscle Cramp", "Cramp"]),
)


def names(borrower: Terminology, concept_id: str) -> list[str]:
    return [name.text for name in borrower.names_of(concept_id)]


def test_a_concept_gains_the_names_of_the_donor_concept_it_shares_a_name_with() -> None:
    target = terminology(("SNOMEDCT:68962001", ["myalgia"]), ("SNOMEDCT:25064002", ["headache"]))
    enriched, report = borrow_synonyms(target, DONOR, "toy MeSH")
    assert names(enriched, "SNOMEDCT:68962001") == ["myalgia", "Muscle Pain", "Muscle Soreness"]
    assert names(enriched, "SNOMEDCT:25064002") == ["headache", "Head Pain"]
    assert (report.concepts, report.names) == (2, 3)
    assert enriched.concept("SNOMEDCT:68962001").preferred_name == "myalgia"  # ids and preferred names stay
    assert [match.concept_id for match in enriched.lookup("muscle soreness")] == ["SNOMEDCT:68962001"]
    assert enriched.fingerprint() != target.fingerprint()  # an index of the plain one is not reused
    assert enriched.sources[-1].path == "synonyms from toy MeSH"


def test_borrowing_never_moves_a_name_from_its_concept_or_makes_one_ambiguous() -> None:
    target = terminology(
        ("X:spasm", ["spasm"]),
        ("X:muscle-spasm", ["muscle spasm", "cramp"]),  # holds a name Spasm would lend: it stays here
        ("X:cough", ["cough"]),
        ("X:sounds", ["respiratory sounds"]),  # both would borrow "Coughing": neither does
    )
    enriched, _ = borrow_synonyms(target, DONOR)
    assert names(enriched, "X:spasm") == ["spasm", "Clonic Spasm"]
    assert names(enriched, "X:muscle-spasm") == ["muscle spasm", "cramp"]  # two donor concepts: borrows nothing
    assert names(enriched, "X:cough") == ["cough"] and names(enriched, "X:sounds") == ["respiratory sounds"]


def test_a_concept_whose_names_point_to_two_donor_concepts_borrows_nothing_nor_do_two_sharing_one() -> None:
    target = terminology(
        ("X:both", ["myalgia", "headache"]),  # which one would it be?
        ("X:pain1", ["muscle pain"]),
        ("X:pain2", ["muscle soreness"]),  # two concepts of the target for one donor concept
    )
    enriched, report = borrow_synonyms(target, DONOR)
    assert report.concepts == 0 and report.names == 0 and enriched.name_count == target.name_count


def test_only_names_that_mean_the_concept_are_matched_or_lent() -> None:
    donor = Terminology.from_concepts(
        [
            make_concept(
                "DOID:1",
                "asthma",
                [
                    Name("bronchial asthma", NameKind.EXACT),
                    Name("wheezing", NameKind.RELATED),
                    Name("lung disease", NameKind.BROAD),
                ],
            )
        ]
    )
    target = terminology(("X:asthma", ["asthma"]), ("X:wheeze", ["wheezing"]))
    enriched, report = borrow_synonyms(target, donor)
    assert names(enriched, "X:asthma") == ["asthma", "bronchial asthma"]  # no related or broader name lent
    assert names(enriched, "X:wheeze") == ["wheezing"] and report.concepts == 1  # a related name matches nothing


def test_compile_borrows_from_a_compiled_donor_and_refuses_a_missing_one(tmp_path: Path) -> None:
    (tmp_path / "donor.tsv").write_text("D1\tmyalgia\nD1\tmuscle soreness\n")
    (tmp_path / "second.tsv").write_text("E1\tmuscle soreness\nE1\tsore muscles\n")
    (tmp_path / "target.tsv").write_text("68962001\tmyalgia\n")
    medlink = [sys.executable, "-m", "medlink", "terminology", "compile"]
    subprocess.run(
        [*medlink, f"tsv:{tmp_path / 'donor.tsv'}", "--namespace", "D", "-o", str(tmp_path / "donor")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    done = subprocess.run(
        [
            *medlink,
            f"tsv:{tmp_path / 'target.tsv'}",
            "--namespace",
            "SNOMEDCT",
            "--synonyms-from",
            str(tmp_path / "donor"),
            "--synonyms-from",
            f"tsv:{tmp_path / 'second.tsv'}",
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "borrowed 1 names" in done.stderr
    compiled = load_terminology(tmp_path / "out")  # the second donor is reached through the first one's name
    assert [n.text for n in compiled.names_of("SNOMEDCT:68962001")] == ["myalgia", "muscle soreness", "sore muscles"]
    missing = subprocess.run(
        [
            *medlink,
            f"tsv:{tmp_path / 'target.tsv'}",
            "--synonyms-from",
            str(tmp_path / "nope"),
            "-o",
            str(tmp_path / "out2"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode != 0 and "no terminology to borrow synonyms from" in missing.stderr
    assert not (tmp_path / "out2").exists()


def test_benchmark_dataset_borrows_before_it_links(tmp_path: Path) -> None:
    (tmp_path / "donor.tsv").write_text("D1\tmyalgia\nD1\tmuscle soreness\n")
    donor = compile_terminology([SourceSpec.parse(f"tsv:{tmp_path / 'donor.tsv'}")], namespace="D")
    from medlink.terminology import save_terminology

    save_terminology(donor, tmp_path / "donor")
    (tmp_path / "terms.tsv").write_text("T1\tmyalgia\n")
    (tmp_path / "test.tsv").write_text("muscle soreness\tT1\n")
    spec = DatasetSpec(
        "toy",
        (f"tsv:{tmp_path / 'terms.tsv'}",),
        f"tsv:{tmp_path / 'test.tsv'}",
        namespace="TOY",
        synonyms_from=("{data}/donor",),
    )
    prepared = prepare(spec.for_fold("", tmp_path), "")
    linker = Linker(prepared.terminology)
    assert linker.link("muscle soreness").concepts == ("TOY:T1",)


def test_cadec_snomed_subset_borrows_lay_names_from_the_embedded_mesh() -> None:
    source = SourceSpec.parse(f"tsv:{shared_file('corpora/cadec/CADEC_0/standard.txt')}")
    cadec = compile_terminology([source], namespace="SNOMEDCT")
    enriched, report = borrow_synonyms(cadec, load_default_terminology(), "mesh")
    assert report.concepts >= 40  # measured: 52 of 181 concepts share a name with a MeSH descriptor
    [myalgia] = [concept.id for concept in cadec if concept.preferred_name == "myalgia"]
    assert "Muscle Soreness" in names(enriched, myalgia)
    for lay in ("muscle soreness", "joint pain", "high blood pressure"):  # each one concept only
        assert len(enriched.lookup(lay)) == 1, lay
    with pytest.raises(KeyError):
        enriched.names_of("MESH:D063806")  # no MeSH id enters the terminology


def test_benchmark_configuration_takes_one_donor_or_several(tmp_path: Path) -> None:
    from medlink.benchmark.config import load_config

    dataset = '[[datasets]]\nname = "{name}"\nterminology = "tsv:t"\ncorpus = "tsv:c"\nsynonyms_from = {donors}\n'
    text = dataset.format(name="one", donors='"mesh"') + dataset.format(name="two", donors='["mesh", "obo:hp.obo"]')
    (tmp_path / "suite.toml").write_text(text + '[[systems]]\nname = "exact"\n')
    one, two = load_config(tmp_path / "suite.toml").datasets
    assert one.synonyms_from == ("mesh",) and two.synonyms_from == ("mesh", "obo:hp.obo")
