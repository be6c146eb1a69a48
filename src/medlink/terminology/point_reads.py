"""Single values from a compiled terminology's files, read with ``pread`` instead of through the memory map.

A lookup in a store of millions of names touches a few dozen scattered places of its files. Through a memory map,
this kernel maps a whole page-cache folio (tens to hundreds of KB) around each touched page, so 2,000 lookups put
1.6 GB of a 2 GB store into the process's resident set. ``pread`` copies the same bytes out of the same shared page
cache and maps nothing, so a linker's resident set stays its own. Whole-column work (a dense index's names, the
annotator's vocabulary) still goes through Arrow's mapped arrays.

- :class:`FileArray`: a 1-D ``.npy`` file, one value or one slice at a time.
- :class:`FileKeyTable`: a key table (``key_table.py``) searched through a sparse sample of its hashes kept in
  memory, then one read of the block that can hold the key.
- :func:`arrow_point_readers`: for each column of a memory-mapped, uncompressed Arrow IPC table, a function from row
  to the value ``column[row].as_py()`` would give, reading the column's buffers at their offsets in the file.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from medlink.terminology.key_table import key_hash, sorted_holds

FENCE_EVERY = 1024  # hashes per block: one sampled hash per 8 KB of the file, one block read per lookup
_NO_ROWS = np.empty(0, dtype=np.int64)


_SEEK_LOCK = threading.Lock()


def read_at(file: Any, count: int, offset: int) -> bytes:
    """``count`` bytes of ``file`` at ``offset``: ``os.pread`` (no shared file position, so threads and forked
    workers may read at once), or where the platform has none (Windows) a seek and read under a lock."""
    if hasattr(os, "pread"):
        return os.pread(file.fileno(), count, offset)
    with _SEEK_LOCK:
        file.seek(offset)
        return bytes(file.read(count))


class FileArray:
    """A one-dimensional ``.npy`` array on disk; ``array[i]`` and ``array.read(start, end)`` read just those bytes."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open for the preads; closed with self
        version = np.lib.format.read_magic(self._file)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read_header(self._file)
        if len(shape) != 1 or fortran_order or dtype.hasobject:
            raise ValueError(f"{path}: not a one-dimensional array of plain values")
        self.dtype: np.dtype = dtype
        self._start = self._file.tell()
        self._length = int(shape[0])

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int | slice) -> Any:
        """One value, or a contiguous slice (``array[r : r + 2]``) in one read, as the mapped array it replaces."""
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise ValueError("a file array reads contiguous slices only")
            start, stop, _ = index.indices(self._length)
            return self.read(start, stop)
        if not 0 <= index < self._length:
            raise IndexError(f"index {index} out of range for {self._length} values")
        return self.read(index, index + 1)[0]

    def read(self, start: int, end: int) -> np.ndarray:
        start, end = max(start, 0), min(end, self._length)
        if end <= start:
            return np.empty(0, self.dtype)
        size = self.dtype.itemsize
        return np.frombuffer(read_at(self._file, (end - start) * size, self._start + start * size), self.dtype)


class FileKeyTable:
    """The on-disk :class:`~medlink.terminology.key_table.KeyTable`: same ``candidates``, nothing mapped."""

    def __init__(self, hashes: FileArray, rows: FileArray, block: int = FENCE_EVERY) -> None:
        if len(hashes) != len(rows):
            raise ValueError(f"a key table with {len(hashes)} hashes and {len(rows)} rows")
        self._hashes, self._rows, self._block = hashes, rows, block
        self._fences: list[int] | None = None
        self._all: np.ndarray | None = None

    @classmethod
    def load(cls, folder: Path, stem: str) -> FileKeyTable:
        return cls(FileArray(folder / f"{stem}.hashes.npy"), FileArray(folder / f"{stem}.rows.npy"))

    def __len__(self) -> int:
        return len(self._hashes)

    def _sampled(self) -> list[int]:
        """Every ``block``-th hash (about 12,000 reads for 12 M keys, on the first lookup), as Python ints:
        ``bisect`` over a list is several times faster than numpy's search for one value."""
        if self._fences is None:
            self._fences = [int(self._hashes[p]) for p in range(0, len(self._hashes), self._block)]
        return self._fences

    def may_hold(self, key: str) -> bool:
        """False where no key hashes like ``key``: from every hash, read into memory on the first call (8 bytes a
        key), for callers that ask about many absent keys; :meth:`candidates` reads nothing into memory."""
        if self._all is None:
            self._all = self._hashes.read(0, len(self._hashes))
        return sorted_holds(self._all, key)

    def candidates(self, key: str) -> np.ndarray:
        """Rows whose key hashes like ``key`` (confirm against the key itself), in the order they were added."""
        value = key_hash(key)
        fences = self._sampled()
        # A hash equal to ``value`` sits in a block whose first hash is <= value and whose successor's is >= value.
        first = max(bisect_left(fences, value) - 1, 0)
        last = bisect_right(fences, value)
        offset = first * self._block
        block = self._hashes.read(offset, last * self._block)
        start = int(np.searchsorted(block, np.uint64(value)))
        end = start
        while end < len(block) and block[end] == value:  # a key's run: almost always one hash or none
            end += 1
        return self._rows.read(offset + start, offset + end) if end > start else _NO_ROWS


def arrow_point_readers(path: Path, mapped: Any, table: Any) -> dict[str, Callable[[int], Any]]:
    """Row → value for every column of ``table``, read from ``path`` through ``mapped`` (its
    ``pyarrow.memory_map``), whose buffers lie in the file as they are (uncompressed IPC); a column Arrow
    decompressed into memory, or of a type not read here, gets none."""
    mapped.seek(0)
    base, size = mapped.read_buffer(1).address, mapped.size()
    file = open(path, "rb", buffering=0)  # noqa: SIM115 - owned by the readers below

    def place(buffer: Any) -> int | None:
        """The buffer's offset in the file, or None when it is absent or empty (an empty one may point anywhere)."""
        if buffer is None or buffer.size == 0:
            return None
        offset = buffer.address - base
        if not 0 <= offset <= size - buffer.size:
            raise _NotInFile
        return int(offset)

    readers = {}
    for name in table.column_names:
        try:
            readers[name] = _column_reader(table.column(name), place, file)
        except _NotInFile:
            continue
    return readers


class _NotInFile(Exception):
    """A buffer outside the mapped file: the table was decompressed on load."""


def _column_reader(column: Any, place: Callable[[Any], int | None], file: Any) -> Callable[[int], Any]:
    import pyarrow as pa

    chunks = [_chunk_reader(chunk, place, file) for chunk in column.chunks]
    if not chunks:
        raise _NotInFile  # an empty column: nothing to read, Arrow answers
    if pa.types.is_dictionary(column.type):  # small dictionaries: read once
        chunks = [
            _decoded(read_index, chunk.dictionary.to_pylist())
            for read_index, chunk in zip(chunks, column.chunks, strict=True)
        ]
    starts = np.cumsum([0] + [len(chunk) for chunk in column.chunks])
    rows = int(starts[-1])

    def value(row: int) -> Any:
        if not 0 <= row < rows:
            raise IndexError(f"row {row} out of range for {rows} rows")
        # the store writes one record batch per table: no chunk to search for
        k = 0 if len(chunks) == 1 else int(np.searchsorted(starts, row, side="right")) - 1
        return chunks[k](row - int(starts[k]))

    return value


def _no_rows(row: int) -> Any:
    """The reader of a chunk without values (its buffers are empty)."""
    raise IndexError(f"row {row} of a chunk without values")


def _decoded(read_index: Callable[[int], Any], values: list) -> Callable[[int], Any]:
    def value(row: int) -> Any:
        index = read_index(row)
        return None if index is None else values[index]

    return value


def _chunk_reader(chunk: Any, place: Callable[[Any], int | None], file: Any) -> Callable[[int], Any]:
    import pyarrow as pa

    def pread(count: int, offset: int) -> bytes:
        return read_at(file, count, offset)  # the closures keep ``file`` (and its descriptor) open

    def read(offset: int, count: int, dtype: Any) -> np.ndarray:
        return np.frombuffer(pread(count * np.dtype(dtype).itemsize, offset), dtype)

    def valid(validity: int | None, index: int) -> bool:
        return validity is None or bool(pread(1, validity + index // 8)[0] >> (index % 8) & 1)

    def strings(offsets: int, data: int | None, offset_type: Any, first: int, count: int) -> list[str]:
        bounds = read(offsets + first * np.dtype(offset_type).itemsize, count + 1, offset_type)
        if data is None or bounds[-1] == bounds[0]:
            return [""] * count
        text = pread(int(bounds[-1] - bounds[0]), data + int(bounds[0]))
        cuts = (bounds - bounds[0]).tolist()
        return [text[cuts[i] : cuts[i + 1]].decode("utf-8") for i in range(count)]

    kind = chunk.type.index_type if pa.types.is_dictionary(chunk.type) else chunk.type
    buffers = [place(buffer) for buffer in chunk.buffers()]
    shift = chunk.offset
    if pa.types.is_integer(kind):
        validity, data = buffers[0], buffers[1]
        dtype = kind.to_pandas_dtype()
        if data is None:
            return _no_rows

        def integer(row: int) -> Any:
            index = shift + row
            return int(read(data + index * np.dtype(dtype).itemsize, 1, dtype)[0]) if valid(validity, index) else None

        return integer
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        validity, offsets, data = buffers
        offset_type = np.int32 if pa.types.is_string(kind) else np.int64
        if offsets is None:
            return _no_rows

        def string(row: int) -> Any:
            index = shift + row
            return strings(offsets, data, offset_type, index, 1)[0] if valid(validity, index) else None

        return string
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type) and chunk.values.null_count == 0:
        validity, list_offsets, _, child_offsets, child_data = buffers
        child_shift = chunk.values.offset
        if list_offsets is None:
            return _no_rows

        def string_list(row: int) -> Any:
            index = shift + row
            if not valid(validity, index):
                return None
            first, end = (int(v) for v in read(list_offsets + index * 4, 2, np.int32))
            if end == first or child_offsets is None:  # no child strings at all in this chunk: every list is empty
                return []
            return strings(child_offsets, child_data, np.int32, child_shift + first, end - first)

        return string_list
    raise _NotInFile  # a type these readers do not know: Arrow answers
