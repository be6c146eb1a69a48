"""Reading single values of a compiled terminology with pread: the same answers as Arrow and the in-memory tables."""

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.terminology import SourceSpec, compile_terminology, load_terminology, save_terminology
from medlink.terminology.key_table import KeyTable
from medlink.terminology.point_reads import FileArray, FileKeyTable, arrow_point_readers
from medlink.terminology.store import TABLE_FILES


@pytest.fixture
def compiled(fixtures: Path):
    return compile_terminology(
        [
            SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv"),
            SourceSpec(fixtures / "ctd_diseases_tiny.tsv", "ctd"),
            SourceSpec(fixtures / "tiny.obo", "obo"),
        ]
    )


def _tables(folder: Path):
    import pyarrow as pa

    for file_name in TABLE_FILES.values():
        mapped = pa.memory_map(str(folder / file_name))
        table = pa.ipc.open_file(mapped).read_all()
        yield folder / file_name, mapped, table


def test_every_value_of_every_column_reads_as_arrow_gives_it(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term")
    checked = set()
    for path, mapped, table in _tables(tmp_path / "term"):
        readers = arrow_point_readers(path, mapped, table)
        assert set(readers) == set(table.column_names), path  # every type the store writes is read here
        for name, read in readers.items():
            column = table.column(name)
            assert [read(row) for row in range(len(column))] == column.to_pylist(), (path.name, name)
            checked.add((path.name, name))
            with pytest.raises(IndexError):
                read(len(column))
    assert ("concepts.arrow", "alt_ids") in checked and ("names.arrow", "kind") in checked


def test_a_decompressed_table_gets_no_readers_and_arrow_answers(compiled, tmp_path: Path) -> None:
    save_terminology(compiled, tmp_path / "term", compression="zstd")
    for path, mapped, table in _tables(tmp_path / "term"):
        assert arrow_point_readers(path, mapped, table) == {}
    loaded = load_terminology(tmp_path / "term")
    concept = next(iter(compiled))
    assert loaded.concept(concept.id) == concept


def _resident_kb(path: Path) -> int:
    """How much of ``path`` is mapped into this process's resident set (all its mappings)."""
    target, total = str(path.resolve()), 0
    with open(f"/proc/{os.getpid()}/smaps") as smaps:
        lines = smaps.read().splitlines()
    for i, line in enumerate(lines):
        if line.endswith(target):
            total += int(next(entry for entry in lines[i + 1 :] if entry.startswith("Rss:")).split()[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/PID/smaps (Linux)")
def test_lookups_map_almost_nothing_of_the_store(tmp_path: Path) -> None:
    """The point of reading with pread: 400 lookups over 60,000 names leave the names table's pages unmapped
    (through the map, each lookup's pages and the folios around them would stay resident)."""
    from medlink.terminology import Concept, Name, NameKind, Terminology

    concepts = [
        Concept(
            id=f"X:{i:06d}",
            preferred_name=f"term {i:06d} of a larger set",
            names=(Name(f"term {i:06d} of a larger set", NameKind.PREFERRED), Name(f"synonym {i:06d}")),
        )
        for i in range(30_000)
    ]
    save_terminology(Terminology.from_concepts(concepts), tmp_path / "term")
    loaded = load_terminology(tmp_path / "term")
    rng = np.random.default_rng(0)
    for i in rng.choice(30_000, 400, replace=False):
        assert [m.concept_id for m in loaded.lookup(f"synonym {i:06d}")] == [f"X:{i:06d}"]
        assert loaded.names_of(f"X:{i:06d}")[1].text == f"synonym {i:06d}"
    size_kb = (tmp_path / "term" / "names.arrow").stat().st_size // 1024
    assert size_kb > 1000 and _resident_kb(tmp_path / "term" / "names.arrow") < size_kb // 10


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.sampled_from([f"k{i}" for i in range(12)]), min_size=1, max_size=60),
    block=st.integers(min_value=1, max_value=9),
)
def test_key_table_on_disk_finds_what_the_in_memory_one_finds(tmp_path_factory, keys: list, block: int) -> None:
    folder = tmp_path_factory.mktemp("keys")
    table = KeyTable.build(keys, np.arange(len(keys)))
    table.save(folder, "keys")
    on_disk = FileKeyTable(FileArray(folder / "keys.hashes.npy"), FileArray(folder / "keys.rows.npy"), block)
    for key in [f"k{i}" for i in range(14)]:
        assert list(on_disk.candidates(key)) == list(table.candidates(key)), (key, block)
        # may_hold is never False where there are candidates, and (no two of these keys sharing a hash) never True
        # where there are none
        assert on_disk.may_hold(key) == table.may_hold(key) == (len(table.candidates(key)) > 0), key


def test_file_array_reads_values_and_slices(tmp_path: Path) -> None:
    values = np.array([5, 1, 9, 3], dtype=np.int64)
    np.save(tmp_path / "v.npy", values)
    array = FileArray(tmp_path / "v.npy")
    assert len(array) == 4 and [int(array[i]) for i in range(4)] == [5, 1, 9, 3]
    assert list(array.read(1, 3)) == [1, 9] and list(array.read(3, 10)) == [3] and len(array.read(4, 9)) == 0
    assert list(array[1:3]) == [1, 9] and list(array[2:]) == [9, 3] and list(array[3:9]) == [3]
    with pytest.raises(ValueError, match="contiguous"):
        array[::2]
    with pytest.raises(IndexError):
        array[4]
    np.save(tmp_path / "m.npy", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="one-dimensional"):
        FileArray(tmp_path / "m.npy")


def test_reads_the_same_where_the_platform_has_no_pread(compiled, tmp_path: Path, monkeypatch) -> None:
    """Windows has no os.pread: a seek and read under a lock stands in for it."""
    save_terminology(compiled, tmp_path / "term")
    expected = {concept.id: concept for concept in compiled}
    monkeypatch.delattr(os, "pread")
    loaded = load_terminology(tmp_path / "term")
    for concept_id, concept in expected.items():
        assert loaded.concept(concept_id) == concept
        assert [m.concept_id for m in loaded.lookup(concept.names[0].text)][:1] != []


def test_a_table_of_several_record_batches_reads_row_by_row(tmp_path: Path) -> None:
    import pyarrow as pa

    table = pa.table(
        {
            "n": pa.array([1, None, 3, 4, 5], pa.int32()),
            "s": ["a", "bé", None, "", "e"],
            "l": pa.array([["x"], None, [], ["y", "zz"], ["w"]], pa.list_(pa.string())),
            "k": pa.array(["p", "q", "p", None, "q"]).dictionary_encode(),
        }
    )
    path = tmp_path / "t.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    mapped = pa.memory_map(str(path))
    loaded = pa.ipc.open_file(mapped).read_all()
    assert loaded.column("s").num_chunks == 3
    readers = arrow_point_readers(path, mapped, loaded)
    for name in table.column_names:
        assert [readers[name](row) for row in range(5)] == table.column(name).to_pylist(), name
    with pytest.raises(IndexError):
        readers["s"](5)
