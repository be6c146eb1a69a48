"""UMLS RRF at full scale: ``MRCONSO``/``MRSTY``/``MRREL`` read straight into Arrow columns.

The record reader (:mod:`umls_rrf`) makes a Python object per row, about 9 GB for a release of 12 million rows.
This one streams each file through Arrow's CSV parser, keeps only the columns and rows it needs, and groups them
with Arrow's sorts and joins, so that memory follows the kept text, not Python objects. The result is the same
terminology the record reader and :class:`TerminologyBuilder` make from the same files (a test holds them equal):
the same preferred names, names in file order without repeats, semantic types, parents with cycles broken, and
relations. Rows with the wrong number of fields are counted and skipped with file and line (or stop the compile
in strict mode).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.terminology.columns import Columns, arrow_to_list
from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.hierarchy import closing_edges
from medlink.terminology.records import NameKind
from medlink.terminology.terminology import (
    CONCEPT_FIELDS,
    NAME_FIELDS,
    RELATION_FIELDS,
    SourceInfo,
    Terminology,
)
from medlink.text import Normalizer

MRCONSO_FIELDS = (
    "CUI",
    "LAT",
    "TS",
    "LUI",
    "STT",
    "SUI",
    "ISPREF",
    "AUI",
    "SAUI",
    "SCUI",
    "SDUI",
    "SAB",
    "TTY",
    "CODE",
    "STR",
    "SRL",
    "SUPPRESS",
    "CVF",
)
MRSTY_FIELDS = ("CUI", "TUI", "STN", "STY", "ATUI", "CVF")
MRREL_FIELDS = (
    "CUI1",
    "AUI1",
    "STYPE1",
    "REL",
    "CUI2",
    "AUI2",
    "STYPE2",
    "RELA",
    "RUI",
    "SRUI",
    "SAB",
    "SL",
    "RG",
    "DIR",
    "SUPPRESS",
    "CVF",
)
SUPPRESSED = ("O", "E", "Y")
ABBREVIATION_TTYS = ("AB", "ACR", "AA", "AM", "AUN")
RELATION_RELS = ("RO", "RB", "RN", "RQ")
_BLOCK_BYTES = 64 << 20


def read_rrf(path: Path, fields: tuple[str, ...], keep: list[str], report: ReadReport) -> Iterator[Any]:
    """Record batches of the ``keep`` columns of an RRF file (every line ends in ``|``: one empty extra field)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    expected = len(fields)
    stopped: list[SourceError] = []  # an exception raised inside Arrow's callback would come back as its own error

    def bad_row(row: Any) -> str:
        try:
            found = row.actual_columns - 1
            report.problem(path, row.number, f"expected {expected} '|'-separated fields, found {found}")
        except SourceError as error:  # strict
            stopped.append(error)
            return "error"
        return "skip"

    try:
        reader = csv.open_csv(
            path,
            read_options=csv.ReadOptions(column_names=[*fields, "_end"], block_size=_BLOCK_BYTES, use_threads=False),
            parse_options=csv.ParseOptions(
                delimiter="|", quote_char=False, escape_char=False, invalid_row_handler=bad_row
            ),
            convert_options=csv.ConvertOptions(
                include_columns=keep, column_types={name: pa.string() for name in keep}, strings_can_be_null=False
            ),
        )
        yield from reader
    except pa.ArrowInvalid as error:
        raise stopped[0] if stopped else SourceError(path, f"cannot be read as RRF: {error}") from None


def read_umls_columns(
    path: Path,
    report: ReadReport,
    languages: Collection[str] = ("ENG",),
    vocabularies: Collection[str] | None = None,
    include_suppressed: bool = False,
    source: str | None = None,
    normalizer: Normalizer | None = None,
    info: SourceInfo | None = None,
) -> Terminology:
    """The terminology of a UMLS ``META`` folder (or its ``MRCONSO.RRF``) as Arrow columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    folder = path if path.is_dir() else path.parent
    mrconso = path if path.is_file() else folder / "MRCONSO.RRF"
    if not mrconso.exists():
        raise SourceError(mrconso, "MRCONSO.RRF not found; point at the UMLS META folder or at MRCONSO.RRF")
    normalizer = normalizer or Normalizer()
    keep = _RowFilter(vocabularies, include_suppressed)
    rows = _name_rows(mrconso, keep, languages, report)
    cuis = pc.unique(rows.column("cui").combine_chunks())
    rows = rows.append_column("row", pc.index_in(rows.column("cui"), value_set=cuis).cast(pa.int32()))
    names = _names(rows, len(cuis), normalizer)
    del rows
    offsets = np.searchsorted(names["concept"].to_numpy(), np.arange(len(cuis)), side="left")
    ids = pc.binary_join_element_wise("UMLS:", cuis, "")
    parents, relations = _hierarchy_and_relations(folder / "MRREL.RRF", cuis, ids, keep, report)
    count = len(cuis)
    empty_lists = _empty_lists(count)
    concepts = {
        "id": ids,
        "preferred_name": names["text"].take(pa.array(offsets)),
        "semantic_types": _semantic_types(folder / "MRSTY.RRF", cuis, report),
        "parents": _break_cycles(parents, ids, report),
        "alt_ids": empty_lists,
        "xrefs": empty_lists,
        "tree_numbers": empty_lists,
        "definition": pa.nulls(count, pa.string()),
        "source": pa.array([source or f"UMLS {folder.parent.name}".strip()] * count, pa.string()),
    }
    return Terminology(
        concepts=Columns({name: concepts[name] for name in CONCEPT_FIELDS}, arrow_to_list),
        names=Columns({name: names[name] for name in NAME_FIELDS}, arrow_to_list),
        relations_table=Columns({name: relations[name] for name in RELATION_FIELDS}, arrow_to_list),
        sources=(replace(info, concepts=count),) if info is not None else (),
        normalizer=normalizer,
    )


@dataclass(frozen=True)
class _RowFilter:
    """The source vocabularies and suppression rules a row must pass (MRCONSO and MRREL alike)."""

    vocabularies: Collection[str] | None
    include_suppressed: bool

    def mask(self, batch: Any) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        mask = pa.array(np.ones(batch.num_rows, dtype=bool))
        if self.vocabularies is not None:
            mask = pc.and_(mask, pc.is_in(batch.column("SAB"), pa.array(list(self.vocabularies))))
        if not self.include_suppressed:
            mask = pc.and_(mask, pc.invert(pc.is_in(batch.column("SUPPRESS"), pa.array(SUPPRESSED))))
        return mask


def _name_rows(mrconso: Path, keep: _RowFilter, languages: Collection[str], report: ReadReport) -> Any:
    """The kept MRCONSO rows: CUI, trimmed text, preferred flag, abbreviation flag, file position."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pieces = []
    columns = ["CUI", "LAT", "TS", "STT", "ISPREF", "SAB", "TTY", "STR", "SUPPRESS"]
    for batch in read_rrf(mrconso, MRCONSO_FIELDS, columns, report):
        batch = batch.filter(pc.and_(keep.mask(batch), pc.is_in(batch.column("LAT"), pa.array(list(languages)))))
        text = pc.utf8_trim_whitespace(batch.column("STR"))
        flagged = pc.and_(
            pc.and_(pc.equal(batch.column("TS"), "P"), pc.equal(batch.column("STT"), "PF")),
            pc.equal(batch.column("ISPREF"), "Y"),
        )
        piece = pa.table(
            {
                "cui": batch.column("CUI"),
                "text": text,
                "flagged": flagged,
                "abbreviation": pc.is_in(batch.column("TTY"), pa.array(ABBREVIATION_TTYS)),
            }
        )
        empty = pc.equal(pc.utf8_length(text), 0)
        if pc.any(empty).as_py():
            report.note("empty names dropped", count=pc.sum(empty).as_py())
            piece = piece.filter(pc.invert(empty))
        pieces.append(piece)
    schema = pa.schema(
        [("cui", pa.string()), ("text", pa.string()), ("flagged", pa.bool_()), ("abbreviation", pa.bool_())]
    )
    rows = pa.concat_tables(pieces).combine_chunks() if pieces else schema.empty_table()
    return rows.append_column("seq", pa.array(np.arange(len(rows), dtype=np.int64)))


def _names(rows: Any, count: int, normalizer: Normalizer) -> dict[str, Any]:
    """Names grouped by concept row: the preferred name (the first flagged row, else the first row) first, then
    the other texts in the order they first appear, each once, with the kind of that first appearance."""
    import pyarrow as pa
    import pyarrow.compute as pc

    preferred_seq = np.zeros(count, dtype=np.int64)
    for subset in (rows, rows.filter(rows.column("flagged"))):  # flagged rows override the first row
        first = subset.group_by("row", use_threads=False).aggregate([("seq", "min")])
        preferred_seq[first.column("row").to_numpy()] = first.column("seq_min").to_numpy()
    preferred_text = rows.column("text").take(pa.array(preferred_seq))
    first_seen = rows.group_by(["row", "text"], use_threads=False).aggregate([("seq", "min")]).column("seq_min")
    rows = rows.take(np.sort(first_seen.to_numpy()))  # the first row of each (concept, text)
    is_preferred = pc.equal(rows.column("text"), preferred_text.take(rows.column("row")))
    rows = rows.append_column("later", pc.invert(is_preferred))
    rows = rows.take(
        pc.sort_indices(rows, sort_keys=[("row", "ascending"), ("later", "ascending"), ("seq", "ascending")])
    ).combine_chunks()
    kinds = np.where(
        ~rows.column("later").to_numpy(zero_copy_only=False),
        NameKind.PREFERRED.value,
        np.where(
            rows.column("abbreviation").to_numpy(zero_copy_only=False),
            NameKind.ABBREVIATION.value,
            NameKind.EXACT.value,
        ),
    )
    texts = rows.column("text").chunk(0)
    return {
        "concept": rows.column("row").chunk(0),
        "text": texts,
        "kind": pa.array(kinds, pa.string()).dictionary_encode(),
        "norm": pa.array(normalizer.normalize_all(texts.to_pylist()), pa.string()),
    }


def _semantic_types(mrsty: Path, cuis: Any, report: ReadReport) -> Any:
    """Each concept's TUIs in file order, each once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not mrsty.exists():
        return _empty_lists(len(cuis))
    pieces = [
        pa.table({"row": pc.index_in(batch.column("CUI"), value_set=cuis), "tui": batch.column("TUI")})
        for batch in read_rrf(mrsty, MRSTY_FIELDS, ["CUI", "TUI"], report)
    ]
    table = (
        pa.concat_tables(pieces).combine_chunks()
        if pieces
        else pa.table({"row": pa.array([], pa.int32()), "tui": pa.array([], pa.string())})
    )
    table = table.filter(pc.is_valid(table.column("row")))
    return _lists_by_row(table.column("row"), table.column("tui"), len(cuis))


def _empty_lists(count: int) -> Any:
    """``count`` empty lists of strings, without a Python list per row."""
    import pyarrow as pa

    return pa.ListArray.from_arrays(pa.array(np.zeros(count + 1, dtype=np.int32)), pa.array([], pa.string()))


def _lists_by_row(row: Any, value: Any, count: int) -> Any:
    """A list column of ``count`` rows from ``(row, value)`` pairs: file order within a row, repeats dropped."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pairs = pa.table({"row": row, "value": value, "seq": pa.array(np.arange(len(row), dtype=np.int64))})
    first = pairs.group_by(["row", "value"], use_threads=False).aggregate([("seq", "min")]).column("seq_min")
    pairs = pairs.take(np.sort(first.to_numpy()))
    pairs = pairs.take(pc.sort_indices(pairs, sort_keys=[("row", "ascending"), ("seq", "ascending")])).combine_chunks()
    rows = pairs.column("row").to_numpy().astype(np.int64)
    offsets = np.searchsorted(rows, np.arange(count + 1), side="left").astype(np.int32)
    values = pairs.column("value").chunk(0) if pairs.column("value").num_chunks else pa.array([], value.type)
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _hierarchy_and_relations(
    mrrel: Path, cuis: Any, ids: Any, keep: _RowFilter, report: ReadReport
) -> tuple[Any, dict[str, Any]]:
    """``PAR`` rows as a parents list column (child row → parent ids); ``RO``/``RB``/``RN``/``RQ`` rows as
    ``(UMLS:CUI2, RELA or REL, UMLS:CUI1)`` triples grouped by head in concept order, each once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    empty_relations = {name: pa.array([], pa.string()) for name in RELATION_FIELDS}
    if not mrrel.exists():
        return _empty_lists(len(cuis)), empty_relations
    child, parent, head, relation, tail = [], [], [], [], []
    for batch in read_rrf(mrrel, MRREL_FIELDS, ["CUI1", "REL", "CUI2", "RELA", "SAB", "SUPPRESS"], report):
        row1 = pc.index_in(batch.column("CUI1"), value_set=cuis)
        row2 = pc.index_in(batch.column("CUI2"), value_set=cuis)
        usable = pc.and_(pc.and_(pc.is_valid(row1), pc.is_valid(row2)), pc.not_equal(row1, row2))
        mask = pc.and_(usable, keep.mask(batch))
        rel = batch.column("REL")
        is_parent = pc.fill_null(pc.and_(mask, pc.equal(rel, "PAR")), False)
        child.append(row1.filter(is_parent))
        parent.append(row2.filter(is_parent))
        is_relation = pc.fill_null(pc.and_(mask, pc.is_in(rel, pa.array(RELATION_RELS))), False)
        head.append(row2.filter(is_relation))
        tail.append(row1.filter(is_relation))
        rela = batch.column("RELA").filter(is_relation)
        relation.append(pc.if_else(pc.equal(pc.utf8_length(rela), 0), rel.filter(is_relation), rela))
    parents = _lists_by_row(
        pa.chunked_array(child, pa.int32()), ids.take(pa.chunked_array(parent, pa.int32())), len(cuis)
    )
    triples = pa.table(
        {
            "row": pa.chunked_array(head, pa.int32()),
            "relation": pa.chunked_array(relation, pa.string()),
            "tail": pa.chunked_array(tail, pa.int32()),
        }
    )
    key = pc.binary_join_element_wise(triples.column("relation"), pc.cast(triples.column("tail"), pa.string()), "|")
    grouped = _lists_by_row(triples.column("row"), key, len(cuis))
    rows = np.repeat(np.arange(len(cuis)), np.diff(grouped.offsets.to_numpy()))
    relation_and_tail = pc.split_pattern(grouped.flatten(), "|", max_splits=1)
    tails = pc.cast(pc.list_element(relation_and_tail, 1), pa.int32())
    return parents, {
        "head": ids.take(pa.array(rows)),
        "relation": pc.list_element(relation_and_tail, 0),
        "tail": ids.take(tails),
    }


def _break_cycles(parents: Any, ids: Any, report: ReadReport) -> Any:
    """The parents column without the edges that close ``is_a`` cycles (as :class:`TerminologyBuilder` does)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = parents.offsets.to_numpy()
    if offsets[-1] == 0:
        return parents
    flat = pc.index_in(parents.flatten(), value_set=ids).to_numpy()
    targets = [flat[offsets[row] : offsets[row + 1]].tolist() for row in range(len(ids))]
    id_list: list[str] | None = None
    dropped = set()
    for node, parent, cycle in closing_edges(targets):
        id_list = id_list or ids.to_pylist()
        text = " is_a ".join(id_list[number] for number in cycle)
        if report.strict:
            raise MedlinkError(f"is_a cycle: {text}")
        report.note("is_a cycles broken", text)
        dropped.add((node, parent))
    if not dropped:
        return parents
    kept = [[p for p in targets[row] if (row, p) not in dropped] for row in range(len(ids))]
    lengths = np.fromiter((len(row) for row in kept), dtype=np.int64, count=len(kept))
    new_offsets = np.r_[0, np.cumsum(lengths)].astype(np.int32)
    values = ids.take(pa.array([p for row in kept for p in row], pa.int32()))
    return pa.ListArray.from_arrays(pa.array(new_offsets), values)
