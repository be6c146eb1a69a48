"""The compiled terminology folder: round trip, atomic replacement, refusal of other schemas and corrupt files."""

import json
from pathlib import Path

import pytest

from medlink.terminology import (
    MedlinkError,
    SourceSpec,
    TerminologyFormatError,
    compile_terminology,
    load_terminology,
    save_terminology,
)
from medlink.text import Normalizer, NormalizerConfig


@pytest.fixture
def compiled(fixtures: Path):
    return compile_terminology(
        [
            SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv"),
            SourceSpec(fixtures / "ctd_diseases_tiny.tsv", "ctd"),
            SourceSpec(fixtures / "tiny.obo", "obo"),
        ]
    )


def test_round_trip_keeps_every_field(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    loaded = load_terminology(tmp_path / "term")
    assert len(loaded) == len(compiled) and loaded.name_count == compiled.name_count
    for concept in compiled:
        assert loaded.concept(concept.id) == concept
        assert loaded.concept(concept.id).relations == concept.relations
    assert loaded.resolve("OMIM:608446") == "MESH:D009203"
    assert loaded.children("MESH:D006331") == ("MESH:D017202",)
    assert loaded.sources == compiled.sources
    assert [m.concept_id for m in loaded.lookup("heart attacks")] == ["MESH:D009203"]


def test_manifest_records_sources_checksums_and_counts(compiled, tmp_path: Path, fixtures: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    manifest = json.loads((tmp_path / "term" / "manifest.json").read_text())
    assert manifest["counts"] == {"concepts": len(compiled), "names": compiled.name_count, "relations": 1}
    assert [s["path"] for s in manifest["sources"]] == [
        "mesh_descriptors_tiny.tsv",
        "ctd_diseases_tiny.tsv",
        "tiny.obo",
    ]
    import hashlib

    expected = hashlib.sha256((fixtures / "tiny.obo").read_bytes()).hexdigest()
    assert manifest["sources"][2]["sha256"] == expected
    assert set(manifest["files"]) == {
        "concepts.arrow",
        "names.arrow",
        "relations.arrow",
        "name_offsets.npy",
        "ids.hashes.npy",
        "ids.rows.npy",
        "norms.hashes.npy",
        "norms.rows.npy",
        "heads.hashes.npy",
        "heads.rows.npy",
    }
    names = manifest["files"]["names.arrow"]
    assert names["size"] == (tmp_path / "term" / "names.arrow").stat().st_size and len(names["sha256"]) == 64


def test_other_schema_version_is_refused_with_how_to_rebuild(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    manifest_path = tmp_path / "term" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["schema_version"] = 999
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(TerminologyFormatError, match=r"schema version 999.*Rebuild it .*medlink terminology compile"):
        load_terminology(tmp_path / "term")


def test_lookup_tables_made_with_another_key_hash_are_refused(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    manifest_path = tmp_path / "term" / "manifest.json"
    manifest_path.write_text(manifest_path.read_text().replace('"crc32-adler32"', '"blake2b-64"'))
    with pytest.raises(TerminologyFormatError, match=r"another key hash \(blake2b-64.*rebuild it"):
        load_terminology(tmp_path / "term")


def test_corrupt_table_is_refused(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    with open(tmp_path / "term" / "names.arrow", "r+b") as handle:
        handle.seek(100)
        handle.write(b"garbage")
    with pytest.raises(TerminologyFormatError, match=r"names\.arrow does not match the checksum"):
        load_terminology(tmp_path / "term")


def test_truncated_or_missing_file_is_refused_naming_it(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    table = tmp_path / "term" / "norms.hashes.npy"
    table.write_bytes(table.read_bytes()[:-8])
    with pytest.raises(TerminologyFormatError, match=r"norms\.hashes\.npy has .* bytes where its manifest says"):
        load_terminology(tmp_path / "term")
    table.unlink()
    with pytest.raises(TerminologyFormatError, match=r"norms\.hashes\.npy is missing"):
        load_terminology(tmp_path / "term")


def test_full_verification_reads_the_middle_of_a_file_the_quick_check_skips(tmp_path: Path) -> None:
    from medlink.terminology import Terminology
    from medlink.terminology.records import make_concept

    # Enough names that the text column runs past the quick check's two sampled MiB.
    concepts = [make_concept(f"X:{i}", f"condition number {i} of a long synthetic list") for i in range(60_000)]
    save_terminology(Terminology.from_concepts(concepts), tmp_path / "term")
    names = tmp_path / "term" / "names.arrow"
    size = names.stat().st_size
    assert size > 3 << 20
    with open(names, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"#")
    load_terminology(tmp_path / "term")  # the quick check does not read the middle
    with pytest.raises(TerminologyFormatError, match=r"names\.arrow does not match the checksum"):
        load_terminology(tmp_path / "term", verify="full")


def test_not_a_terminology_folder(tmp_path: Path) -> None:
    with pytest.raises(TerminologyFormatError, match="not a compiled terminology"):
        load_terminology(tmp_path)


def test_save_replaces_an_old_terminology_atomically(compiled, tmp_path: Path, fixtures: Path) -> None:
    target = tmp_path / "term"
    save_terminology(compiled, target)
    smaller = compile_terminology([SourceSpec(fixtures / "tiny.obo", "obo")])
    save_terminology(smaller, target)
    assert len(load_terminology(target)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["term"]  # no staging or old folders left behind


def test_save_refuses_to_overwrite_an_unrelated_folder(compiled, tmp_path: Path) -> None:
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("do not delete")
    with pytest.raises(MedlinkError, match="not a compiled terminology; refusing to overwrite"):
        save_terminology(compiled, tmp_path / "precious")
    assert (tmp_path / "precious" / "thesis.tex").read_text() == "do not delete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_failed_save_leaves_the_old_terminology(compiled, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "term"
    save_terminology(compiled, target)
    import numpy as np

    def broken_write(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", broken_write)
    with pytest.raises(OSError, match="disk full"):
        save_terminology(compiled, target)
    monkeypatch.undo()
    assert len(load_terminology(target)) == len(compiled)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["term"]


def test_keys_are_recomputed_for_another_normalizer(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    literal = Normalizer(NormalizerConfig(uninvert=False, plurals=False))
    loaded = load_terminology(tmp_path / "term", normalizer=literal)
    assert loaded.lookup("heart attacks") == []
    assert [m.concept_id for m in loaded.lookup("heart attack")] == ["MESH:D009203"]


def test_loaded_terminology_answers_from_its_key_tables_without_converting_columns(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    loaded = load_terminology(tmp_path / "term")
    assert loaded.lookups is not None
    for concept in compiled:
        assert loaded.resolve(concept.id) == concept.id
        assert loaded.names_of(concept.id) == concept.names
        for name in concept.names:
            assert loaded.lookup(name.text) == compiled.lookup(name.text)
    assert loaded.resolve("OMIM:608446") == "MESH:D009203" and loaded.resolve("MESH:D999999") is None
    assert not loaded.has_normalized("no such name at all") and loaded.lookup("no such name at all") == []
    for concept in compiled:
        assert loaded.relations(concept.id) == compiled.relations(concept.id)
    assert any(compiled.relations(concept.id) for concept in compiled)  # the fixture has a relation to find
    assert loaded.relations("MESH:D999999") == []
    # nothing was turned into Python lists, and no relation index was built in memory
    assert loaded.concepts._lists == {} and loaded.names._lists == {} and loaded.relations_table._lists == {}
    assert "_relations_of_head" not in vars(loaded)


def test_a_store_written_before_the_relation_heads_table_still_finds_relations(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    manifest_path = tmp_path / "term" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for name in ("heads.hashes.npy", "heads.rows.npy"):
        del manifest["files"][name]
        (tmp_path / "term" / name).unlink()
    manifest_path.write_text(json.dumps(manifest))
    loaded = load_terminology(tmp_path / "term")
    assert loaded.lookups is not None and loaded.lookups.relation_heads is None
    for concept in compiled:
        assert loaded.relations(concept.id) == compiled.relations(concept.id)


def test_key_table_keeps_every_row_of_a_key_in_order(tmp_path: Path) -> None:
    import numpy as np

    from medlink.terminology.key_table import KeyTable
    from medlink.terminology.point_reads import FileKeyTable

    table = KeyTable.build(["b", "a", "b", "c", "b"], np.array([3, 1, 0, 7, 5]))
    assert list(table.candidates("b")) == [3, 0, 5] and list(table.candidates("a")) == [1]
    assert list(table.candidates("zzz")) == []
    table.save(tmp_path, "keys")
    on_disk = FileKeyTable.load(tmp_path, "keys")
    assert list(on_disk.candidates("b")) == [3, 0, 5] and len(on_disk) == 5
