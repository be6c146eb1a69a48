"""UMLS at scale: the synthetic release, its compile into columns, the memory-mapped store, and bad RRF input."""

from pathlib import Path

import pytest

from medlink.benchmark.synthetic_umls import PoolConcept, ReleaseShape, pool_from_terminologies, write_release
from medlink.terminology import (
    ReadReport,
    SourceError,
    SourceSpec,
    compile_terminology,
    load_terminology,
    save_terminology,
)
from medlink.terminology.readers.umls_rrf import read_umls_rrf
from medlink.terminology.records import NameKind


@pytest.fixture
def pool(fixtures: Path) -> list[PoolConcept]:
    real = compile_terminology(
        [SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv"), SourceSpec(fixtures / "tiny.obo", "obo")]
    )
    return pool_from_terminologies([real])


def test_synthetic_release_compiles_to_distinct_real_names(pool, tmp_path: Path) -> None:
    summary = write_release(
        tmp_path / "META",
        pool,
        concepts=10 * len(pool),
        rows=40 * len(pool),
        seed=3,
        shape=ReleaseShape(cycles_per_million=100_000),
    )
    assert summary.concepts == 10 * len(pool) and summary.mrconso_rows >= summary.concepts
    report = ReadReport()
    terminology = compile_terminology([SourceSpec(tmp_path / "META", "umls")], report)
    assert len(terminology) == summary.concepts
    first, reused = terminology.concept("UMLS:C0000001"), terminology.concept(f"UMLS:C{len(pool) + 1:07d}")
    assert first.preferred_name == pool[1].names[0]
    assert reused.preferred_name == f"{pool[1].names[0]}, chronic"  # the first reuse takes the first qualifier
    assert reused.parents == ("UMLS:C0000001",)
    assert report.counts["is_a cycles broken"] > 0
    for concept in terminology:
        assert concept.names[0].kind is NameKind.PREFERRED
        assert len({name.text for name in concept.names}) == len(concept.names)
        assert set(concept.parents) <= set(terminology.ids)
    # The columns hold exactly what the records hold, and a compiled folder answers the same.
    save_terminology(terminology, tmp_path / "compiled")
    loaded = load_terminology(tmp_path / "compiled")
    for concept in terminology:
        assert loaded.concept(concept.id) == concept
        assert loaded.lookup(concept.names[-1].text)[0].concept_id in {
            match.concept_id for match in terminology.lookup(concept.names[-1].text)
        }


def test_synthetic_release_is_deterministic_by_seed(pool, tmp_path: Path) -> None:
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        write_release(tmp_path / name, pool, concepts=3 * len(pool), rows=9 * len(pool), seed=seed)
    read = {name: (tmp_path / name / "MRCONSO.RRF").read_bytes() for name in "abc"}
    assert read["a"] == read["b"] != read["c"]


def test_umls_compiled_with_another_source_goes_through_records(fixtures: Path) -> None:
    merged = compile_terminology([SourceSpec(fixtures / "umls", "umls"), SourceSpec(fixtures / "tiny.obo", "obo")])
    alone = compile_terminology([SourceSpec(fixtures / "umls", "umls")])
    for concept in alone:
        assert merged.concept(concept.id) == concept


def test_rows_with_the_wrong_number_of_fields_are_skipped_with_file_and_line(fixtures: Path, tmp_path: Path) -> None:
    meta = tmp_path / "META"
    meta.mkdir()
    lines = (fixtures / "umls" / "MRCONSO.RRF").read_text().splitlines(keepends=True)
    lines.insert(2, "C0027051|ENG|S|broken row|\n")
    (meta / "MRCONSO.RRF").write_text("".join(lines) + lines[0][:30])  # the last row cut short, as by a failed copy
    report = ReadReport()
    concepts = {concept.id: concept for concept in read_umls_rrf(meta, report)}
    assert "UMLS:C0027051" in concepts and report.counts["malformed lines skipped"] == 2
    examples = " ".join(report.examples["malformed lines skipped"])
    assert "MRCONSO.RRF:3: expected 18 '|'-separated fields, found 4" in examples
    assert f"MRCONSO.RRF:{len(lines) + 1}:" in examples
    with pytest.raises(SourceError, match=r"MRCONSO\.RRF:3: expected 18"):
        list(read_umls_rrf(meta, ReadReport(strict=True)))


def test_a_file_that_is_not_text_is_refused_naming_it(tmp_path: Path) -> None:
    meta = tmp_path / "META"
    meta.mkdir()
    (meta / "MRCONSO.RRF").write_bytes(b"C0000001|ENG|P|L1|PF|S1|Y|A1||||MSH|MH|D1|\xff\xfe bad|0|N||\n")
    with pytest.raises(SourceError, match=r"MRCONSO\.RRF: cannot be read as RRF"):
        compile_terminology([SourceSpec(meta, "umls")])
