"""A terminology's tables as named columns: plain lists, or lazy Arrow columns converted the first time each is read
(a compiled UMLS is read by the rows a lookup needs, not whole)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


class Columns:
    """Named columns that are plain lists, converted from a lazy source (Arrow) the first time each is read."""

    def __init__(
        self,
        columns: Mapping[str, Any],
        convert: Callable[[Any], list] | None = None,
        points: Mapping[str, Callable[[int], Any]] | None = None,
    ) -> None:
        """``points``: how to read one value of a lazy column without touching the rest (``point_reads.py``)."""
        self._raw = dict(columns)
        self._convert = convert
        self._points = dict(points or {})
        self._lists: dict[str, list] = {}

    def __getitem__(self, name: str) -> list:
        if name not in self._lists:
            raw = self._raw[name]
            self._lists[name] = raw if self._convert is None or isinstance(raw, list) else self._convert(raw)
        return self._lists[name]

    def raw(self, name: str) -> Any:
        return self._raw[name]

    def arrow(self, name: str, arrow_type: Any) -> Any:
        """The column as an Arrow array of ``arrow_type`` (no Python detour when it is Arrow already)."""
        import pyarrow as pa

        raw = self._lists.get(name, self._raw[name])
        if isinstance(raw, list):
            if pa.types.is_dictionary(arrow_type):
                return pa.array(raw, arrow_type.value_type).dictionary_encode().cast(arrow_type)
            return pa.array(raw, arrow_type)
        return raw if raw.type == arrow_type else raw.cast(arrow_type)

    def at(self, name: str, row: int) -> Any:
        """One value, without converting the whole column when it is still Arrow."""
        if name in self._lists:
            return self._lists[name][row]
        point = self._points.get(name)
        if point is not None:
            return point(row)
        raw = self._raw[name]
        return raw[row] if isinstance(raw, list) else raw[row].as_py()

    def __len__(self) -> int:
        first: Any = next(iter(self._raw.values()), [])
        return len(first)


def arrow_to_list(column: Any) -> list:
    """A whole Arrow column as a Python list (dictionary-encoded columns as their values)."""
    if hasattr(column, "type") and str(column.type).startswith("dictionary"):
        column = column.cast(column.type.value_type)
    return column.to_pylist()
