"""Streaming mention files in and link results out, for ``medlink link --input … --output …``.

Input, chosen by extension:
- ``.jsonl``: one object per line with ``mention`` (or ``text``) and optionally ``document``, ``start``, ``end``,
  ``entity_type``;
- ``.tsv``: the first column is the mention (a first row whose first cell is ``mention`` is a header);
- anything else: one mention per line.

Output: ``.jsonl``/``.json`` writes one JSON object per result, anything else TSV with a header row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from medlink.linking.results import LinkResult, Mention
from medlink.terminology.diagnostics import SourceError
from medlink.terminology.readers.source_files import iter_lines

TSV_COLUMNS = ("mention", "concepts", "preferred_names", "score", "stage", "matched_name")


def read_mentions(path: Path) -> Iterator[Mention]:
    suffix = path.name.lower().removesuffix(".gz")
    for number, line in iter_lines(path):
        if suffix.endswith(".jsonl"):
            if not line.strip():
                continue
            yield _json_mention(path, number, line)
        elif suffix.endswith(".tsv"):
            text = line.split("\t", 1)[0]
            if number == 1 and text.strip().lower() == "mention":
                continue
            yield Mention(text)
        else:
            yield Mention(line)


def _json_mention(path: Path, number: int, line: str) -> Mention:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise SourceError(path, f"invalid JSON ({error.msg} at column {error.colno})", number) from None
    if not isinstance(record, dict):
        raise SourceError(path, "each line must be a JSON object", number)
    text = record.get("mention", record.get("text"))
    if not isinstance(text, str):
        raise SourceError(path, "expected a 'mention' (or 'text') string field", number)
    document = record.get("document")
    return Mention(
        text,
        document if isinstance(document, str) else None,
        record.get("start"),
        record.get("end"),
        record.get("entity_type"),
    )


def rows_written(partial: Path, as_json: bool) -> tuple[int, bool]:
    """What an interrupted run left in ``partial``: the results it holds and whether its TSV header is there. A
    line torn by the interruption is cut off first, so the file ends on a complete row."""
    if not partial.exists():
        return 0, False
    lines, complete, size = 0, 0, 0
    with open(partial, "rb") as handle:  # read in blocks: the file may hold millions of results
        while block := handle.read(1 << 20):
            newlines = block.count(b"\n")
            if newlines:
                lines += newlines
                complete = size + block.rfind(b"\n") + 1
            size += len(block)
    if complete < size:
        with open(partial, "r+b") as handle:
            handle.truncate(complete)
    if as_json:
        return lines, False
    return max(0, lines - 1), lines > 0


def result_json(result: LinkResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False)


def result_tsv(result: LinkResult) -> str:
    score = "" if result.score is None else f"{result.score:.4f}"
    cells = (
        result.mention,
        "|".join(result.concepts),
        "|".join(result.preferred_names),
        score,
        result.stage.value,
        result.matched_name or "",
    )
    return "\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in cells)


class ResultWriter:
    """Writes results as JSON lines or TSV to an open text stream (the TSV header first, unless ``header`` is
    false: a resumed file has it already)."""

    def __init__(self, stream: IO[str], as_json: bool, header: bool = True) -> None:
        self.stream = stream
        self.as_json = as_json
        if not as_json and header:
            stream.write("\t".join(TSV_COLUMNS) + "\n")

    def write(self, result: LinkResult) -> None:
        self.stream.write((result_json(result) if self.as_json else result_tsv(result)) + "\n")
