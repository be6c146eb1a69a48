"""An index's entries are mapped Arrow (millions load at once), an index built before with Parquet entries still
loads, and large files are checked at load by their size and ends."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.index import build as index_build
from medlink.index.entry_table import ENTRIES, PARQUET_ENTRIES, read_entries, write_entries
from medlink.index.manifest import IndexFileError
from medlink.terminology import Name, NameKind, Terminology
from medlink.terminology.records import make_concept


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003920", "Diabetes Mellitus"),
        ]
    )


@pytest.fixture(scope="module")
def built(terminology, encoder, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("entries") / "index"
    return build_index(ontology_entries(terminology), encoder, folder, terminology.fingerprint())


def top_keys(folder: Path, encoder) -> list[str]:
    index = VectorIndex.load(folder)
    return [hits[0].entry.key for hits in index.search(encoder.encode(["heart attack", "high blood pressure"]), k=1)]


def test_an_index_built_with_parquet_entries_still_loads(built, encoder, tmp_path) -> None:
    old = tmp_path / "old"
    shutil.copytree(built, old)
    entries = {source: list(rows) for source, rows in read_entries(old / ENTRIES).items()}
    (old / ENTRIES).unlink()
    write_entries(entries, old / PARQUET_ENTRIES)
    manifest = json.loads((old / "manifest.json").read_text())
    from medlink.folders import sha256_of

    manifest["files"] = {
        name: sha256_of(old / name) for name in [PARQUET_ENTRIES, *manifest["files"]] if (old / name).exists()
    }
    manifest["version"] = 1  # as indexes were written before entries were mapped
    (old / "manifest.json").write_text(json.dumps(manifest))
    assert top_keys(old, encoder) == top_keys(built, encoder) == ["heart attack", "high blood pressure"]


def test_entries_of_a_source_scattered_or_a_damaged_file_are_refused(built, tmp_path) -> None:
    entries = read_entries(built / ENTRIES)["O"]
    rows = list(entries)
    write_entries({"O": rows[:1], "D": [replace(rows[1], source="D")]}, tmp_path / ENTRIES)
    assert {source: len(table) for source, table in read_entries(tmp_path / ENTRIES).items()} == {"O": 1, "D": 1}
    scattered = [rows[0], replace(rows[1], source="D"), rows[2]]
    write_entries({"O": scattered}, tmp_path / "scattered.arrow")  # written under O, sources O, D, O
    with pytest.raises(IndexFileError, match=r"scattered\.arrow: the entries of source O are not together"):
        read_entries(tmp_path / "scattered.arrow")
    (tmp_path / "damaged.arrow").write_bytes(b"ARROW1" + b"\0" * 40)
    with pytest.raises(IndexFileError, match=r"damaged\.arrow cannot be read"):
        read_entries(tmp_path / "damaged.arrow")


def test_sources_are_sliced_across_chunks_and_an_empty_table_has_none(built, tmp_path) -> None:
    import pyarrow as pa

    from medlink.index.entry_table import _runs

    rows = list(read_entries(built / ENTRIES)["O"])
    write_entries({"O": [], "D": []}, tmp_path / "empty.arrow")
    assert read_entries(tmp_path / "empty.arrow") == {}
    # a source's run that goes on into the next chunk is one run; empty chunks have none
    column = pa.chunked_array([["O", "O"], [], ["O", "D"], ["D"], []], pa.string())
    assert list(_runs(column)) == [("O", 0, 3), ("D", 3, 2)]
    added = [replace(rows[0], added=True), rows[1], replace(rows[2], added=True)]
    write_entries({"O": added}, tmp_path / ENTRIES)
    assert [entry.key for entry in read_entries(tmp_path / ENTRIES)["O"].added()] == [rows[0].key, rows[2].key]


def test_large_files_are_checked_by_size_and_ends(terminology, encoder, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(index_build, "QUICK_CHECK_ABOVE", 0)  # every file counts as large
    folder = build_index(ontology_entries(terminology), encoder, tmp_path / "index", terminology.fingerprint())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["quick_checks"]) == set(manifest["files"]) == {ENTRIES, "O.faiss"}
    assert top_keys(folder, encoder)[0] == "heart attack"
    data = (folder / ENTRIES).read_bytes()
    (folder / ENTRIES).write_bytes(data[:-8])
    with pytest.raises(IndexFileError, match=rf"{ENTRIES} has {len(data) - 8:,} bytes.*truncated or replaced"):
        VectorIndex.load(folder)
    (folder / ENTRIES).write_bytes(b"X" + data[1:])
    with pytest.raises(IndexFileError, match=rf"{ENTRIES} does not match the checksum"):
        VectorIndex.load(folder)
    (folder / ENTRIES).write_bytes(data)
    faiss = (folder / "O.faiss").read_bytes()
    (folder / "O.faiss").write_bytes(faiss[:-1] + bytes([faiss[-1] ^ 1]))
    index = VectorIndex.load(folder)  # a FAISS file is checked when first searched
    with pytest.raises(IndexFileError, match=r"O\.faiss does not match the checksum"):
        index.search(encoder.encode(["heart attack"]), k=1)


def test_a_stray_entries_file_the_manifest_does_not_list_is_never_read(built, encoder, tmp_path) -> None:
    from medlink.index.entry_table import entries_file

    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    files = json.loads((folder / "manifest.json").read_text())["files"]
    assert entries_file(folder, files) == folder / ENTRIES
    assert entries_file(folder, {PARQUET_ENTRIES: "…", "O.faiss": "…"}) == folder / PARQUET_ENTRIES
    (folder / PARQUET_ENTRIES).write_bytes(b"not read")  # a stray Parquet beside a manifest listing the Arrow file
    assert top_keys(folder, encoder)[0] == "heart attack"


def test_damage_inside_an_entries_file_is_an_error_not_a_crash(tmp_path) -> None:
    """A large file is checked at load by its size and ends only (see the next test); what lies between is checked
    by reading it, so offsets pointing outside the file are an error rather than a crash at the first search."""
    from medlink.index.entries import IndexEntry

    rows = [
        IndexEntry(f"disease {n} of the liver", f"Disease {n} of the liver", (f"MESH:D{n:06d}",), "O")
        for n in range(40_000)
    ]
    write_entries({"O": rows}, tmp_path / ENTRIES)
    data = bytearray((tmp_path / ENTRIES).read_bytes())
    assert len(data) > 2 * (1 << 20)  # more than the two MiB a quick check hashes
    middle = len(data) // 2
    data[middle : middle + 4096] = b"\xff" * 4096
    (tmp_path / ENTRIES).write_bytes(bytes(data))
    with pytest.raises(IndexFileError, match=rf"{ENTRIES} cannot be read"):
        read_entries(tmp_path / ENTRIES)


def test_entries_with_a_missing_column_or_empty_values_are_refused(tmp_path) -> None:
    import pyarrow as pa

    def written(**columns) -> Path:
        path = tmp_path / "entries.arrow"
        table = pa.table(columns)
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        return path

    good = {"key": ["mi"], "text": ["MI"], "concepts": [["MESH:D009203"]], "source": ["O"]}
    assert len(read_entries(written(**good))["O"]) == 1
    with pytest.raises(IndexFileError, match="no column 'key'"):
        read_entries(written(**{name: value for name, value in good.items() if name != "key"}))
    with pytest.raises(IndexFileError, match="no column 'concepts'"):
        read_entries(written(**{**good, "concepts": ["MESH:D009203"]}))
    with pytest.raises(IndexFileError, match="column 'source' has empty values"):
        read_entries(written(**{**good, "source": pa.array([None], pa.string())}))
