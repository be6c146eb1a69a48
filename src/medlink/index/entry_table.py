"""An index's entries file: one row per encoded text (key, text, concepts, source O or D, added by ``index add``,
several: a training mention claiming all its concepts), the rows of each source together and in FAISS order.

``entries.arrow`` (index format 2): uncompressed Arrow IPC, memory-mapped, so that millions of entries load at once
and cost only the pages a search reads; validated whole on load, since a large file's checksum covers only its
ends. ``entries.parquet`` (format 1, the shipped default index's among them): read whole.
"""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from medlink.index.entries import SOURCES, IndexEntry
from medlink.index.manifest import IndexFileError

ENTRIES = "entries.arrow"
PARQUET_ENTRIES = "entries.parquet"  # what indexes built before 2026-11-29 hold


RELEASE_EVERY = 256  # rows read from a mapped entries file between two releases of its pages (_release)


class EntryTable(Sequence[IndexEntry]):
    """The entries of one source as Arrow columns; an :class:`IndexEntry` is made only when a row is read.

    Holding 660k entries of MeSH as Python records would cost about 550 MB and 2 s at every load; the columns cost
    a few tens of MB and load at once.
    """

    def __init__(self, table: Any, source: str, release: Callable[[], None] | None = None) -> None:
        self.table = table
        self.source = source
        self._release = release or _nothing_to_release  # drops the pages a read mapped (see _release)
        self._key, self._text = table.column("key"), table.column("text")
        self._concepts, self._added = table.column("concepts"), table.column("added")
        self._several = table.column("several")

    def __len__(self) -> int:
        return self.table.num_rows

    def __getitem__(self, row: int) -> IndexEntry:  # type: ignore[override]
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        row %= len(self)
        return IndexEntry(
            self._key[row].as_py(),
            self._text[row].as_py(),
            tuple(self._concepts[row].as_py()),
            self.source,
            bool(self._added[row].as_py()),
            bool(self._several[row].as_py()),
        )

    def __iter__(self) -> Iterator[IndexEntry]:
        return self._records(self.table)

    def take(self, rows: Sequence[int]) -> list[IndexEntry]:
        """The entries at ``rows`` (repeats allowed), in that order, read in one columnar pass; a row out of
        range raises ``IndexError`` (pyarrow's ``ArrowIndexError``)."""
        if self._release is _nothing_to_release:
            return list(self._records(self.table.take(row_array(rows)))) if rows else []
        # A mapped file: the kernel maps the cached pages around each page a read touches (64 KB), so a few thousand
        # rows read at once would map most of a 1 GB file. Read in runs, each run's pages dropped after it.
        records: list[IndexEntry] = []
        for start in range(0, len(rows), RELEASE_EVERY):
            records += self._records(self.table.take(row_array(rows[start : start + RELEASE_EVERY])))
            self._release()
        return records

    def _records(self, table: Any) -> Iterator[IndexEntry]:
        names = ("key", "text", "concepts", "added", "several")
        columns = zip(*(table.column(name).to_pylist() for name in names), strict=True)
        return (
            IndexEntry(key, text, tuple(concepts), self.source, added, several)
            for key, text, concepts, added, several in columns
        )

    def added(self) -> list[IndexEntry]:
        """Entries added after the build (synonyms from ``medlink index add``)."""
        import pyarrow.compute as pc

        rows, offset = [], 0
        for chunk in self._added.chunks:  # to_numpy would import pandas (~0.3 s) on the exact path's first load
            rows += [offset + row for row in pc.indices_nonzero(chunk).to_pylist()]
            offset += len(chunk)
        return self.take(rows)


def row_array(rows: Sequence[int]) -> Any:
    """``rows`` as an Arrow int64 array, made from its buffer: ``pa.array`` would import pandas to check what it was
    given (+0.4 s and +50 MB on the first search of a process)."""
    import pyarrow as pa

    values = np.ascontiguousarray(rows, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def entries_file(folder: Path, files: Mapping[str, str]) -> Path:
    """The entries the manifest's ``files`` list: mapped Arrow, or the Parquet file of an index built before (a
    stray file beside them, which no checksum covers, is never read)."""
    return folder / (PARQUET_ENTRIES if PARQUET_ENTRIES in files and ENTRIES not in files else ENTRIES)


def read_entries(path: Path) -> dict[str, EntryTable]:
    """The entries of each source. They are written source by source (:func:`write_entries`), so each is a slice.
    Parquet is read with ``ParquetFile``, not ``read_table``, which imports pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    release: Callable[[], None] = _nothing_to_release
    try:
        if path.suffix == ".parquet":
            table = pq.ParquetFile(path).read()
        else:
            table, mapped = _mapped_table(path)
            release = partial(_release, mapped)
    except (OSError, ValueError, pa.ArrowException) as error:  # ValueError: an empty file cannot be mapped
        raise IndexFileError(f"{path} cannot be read ({error}); rebuild the index") from None
    for flag in ("added", "several"):  # columns later versions added; an older index has neither flag set
        if flag not in table.column_names:
            table = table.append_column(flag, flags_column(table.num_rows))
    _check_entry_columns(table, path)
    slices = {}
    for source, first, count in _runs(table.column("source")):
        if source in slices:
            raise IndexFileError(f"{path}: the entries of source {source} are not together; rebuild the index")
        if source in SOURCES:
            slices[source] = EntryTable(table.slice(first, count), source, release)
    release()
    return slices


def _mapped_table(path: Path) -> tuple[Any, mmap.mmap]:
    """The Arrow table of ``path``, its buffers in a read-only mapping of the file, and the mapping.

    A mapped file checked by its size and ends only could hold offsets that point outside it: it is validated whole
    here, an error, where read later it would be a crash (~0.05 s a million entries)."""
    import pyarrow as pa

    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    table = pa.ipc.open_file(pa.py_buffer(mapped)).read_all()  # zero-copy: the table's buffers are the mapping
    table.validate(full=True)
    return table, mapped


def _nothing_to_release() -> None:
    """A table read whole (Parquet, or built in memory) holds no mapped pages."""


def _release(mapped: mmap.mmap) -> None:
    """Drop the mapping's pages from this process: they stay in the page cache and the mapping stays valid, so a
    later read maps them again without reading the disk. Validation reads every page, and the kernel maps the
    cached pages around each page a read touches; without this a linker over 9 M names would hold all 1.1 GB of
    its entries. Advice only: where it is refused (a locked range) or unknown (Windows) nothing changes."""
    if hasattr(mapped, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError):
            mapped.madvise(mmap.MADV_DONTNEED)


def _runs(column: Any) -> Iterator[tuple[str, int, int]]:
    """The column's runs of one value, as (value, first row, rows), read by run-end encoding: comparing with a
    Python string would make an Arrow scalar, which imports pandas (~0.3 s) on the exact path's first load."""
    import pyarrow.compute as pc

    value, first, offset = None, 0, 0
    for chunk in column.chunks:
        if not len(chunk):  # an empty chunk has no run (and run_end_encode gives it no run end)
            continue
        encoded = pc.run_end_encode(chunk)
        starts = [0, *encoded.run_ends.to_pylist()[:-1]]
        for run_value, start in zip(encoded.values.to_pylist(), starts, strict=True):
            if run_value != value:
                if value is not None:
                    yield value, first, offset + start - first
                value, first = run_value, offset + start
        offset += len(chunk)
    if value is not None:
        yield value, first, offset - first


def _check_entry_columns(table: Any, path: Path) -> None:
    """Every column an entry is read from, of its type and without nulls."""
    import pyarrow as pa

    texts = (pa.string(), pa.large_string())
    expected = {
        "key": texts,
        "text": texts,
        "concepts": tuple(pa.list_(text) for text in texts),
        "source": texts,
        "added": (pa.bool_(),),
        "several": (pa.bool_(),),
    }
    for name, types in expected.items():
        if name not in table.column_names or table.schema.field(name).type not in types:
            raise IndexFileError(f"{path}: no column {name!r} of the entries' type; rebuild the index")
        if table.column(name).null_count:
            raise IndexFileError(f"{path}: column {name!r} has empty values; rebuild the index")


def flags_column(rows: int) -> Any:
    """A column of ``rows`` false flags, made without ``pa.array`` (see :func:`row_array`)."""
    import pyarrow as pa

    return pa.Array.from_buffers(pa.bool_(), rows, [None, pa.py_buffer(np.packbits(np.zeros(rows, dtype=bool)))])


def write_entries(entries: Mapping[str, Sequence[IndexEntry]], path: Path) -> None:
    """Write the entries of every source, source by source: Arrow IPC (one batch, uncompressed, large string
    types, as it is mapped) or, for a path ending ``.parquet``, Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [entry for source in SOURCES for entry in entries.get(source, [])]
    text = pa.large_string()
    table = pa.table(
        {
            "key": pa.array([e.key for e in rows], text),
            "text": pa.array([e.text for e in rows], text),
            "concepts": pa.array([list(e.concepts) for e in rows], pa.list_(text)),
            "source": pa.array([e.source for e in rows], pa.string()),
            "added": pa.array([e.added for e in rows], pa.bool_()),
            "several": pa.array([e.several for e in rows], pa.bool_()),
        }
    )
    if path.suffix == ".parquet":
        pq.write_table(table, path, compression="zstd")
        return
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=max(len(table), 1))
