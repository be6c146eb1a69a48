"""Writing normalized trials to ``.jsonl`` or ``.parquet`` so that a killed run loses and duplicates nothing.

Rows are appended to a JSON Lines checkpoint beside the output (``.NAME.partial.jsonl``), flushed and synced after
every batch. Run again, the writer reads the checkpoint (a line cut off by the kill is dropped), and the caller
skips the records already done. When every record is written the checkpoint becomes the output: renamed for
``.jsonl``, converted into a temporary Parquet file and renamed for ``.parquet``. An existing output is never
written in place: a run that adds records starts from a copy of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any

from medlink.errors import MedlinkError
from medlink.trials.normalization.normalizer import NormalizedTrial

FORMATS = (".jsonl", ".parquet")


def output_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise MedlinkError(f"{path}: the output must end in .jsonl or .parquet")
    return suffix


class ResumableWriter:
    """Appends :class:`NormalizedTrial` rows; :attr:`done` holds the NCT ids already written (by this run or an
    earlier one that was killed or finished)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.format = output_format(self.path)
        self.checkpoint = self.path.with_name(f".{self.path.name}.partial.jsonl")
        self.done: set[str] = set()
        self._handle: IO[str] | None = None

    def __enter__(self) -> ResumableWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.checkpoint.exists():
            self._recover_checkpoint()
        elif self.path.exists():
            self._seed_from_output()
        self._handle = self.checkpoint.open("a", encoding="utf-8")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def write(self, trials: Iterable[NormalizedTrial]) -> int:
        """Append rows (records already done are skipped) and make them durable; returns how many were written."""
        assert self._handle is not None, "use the writer as a context manager"
        written = 0
        for trial in trials:
            if trial.nct_id in self.done:
                continue
            self._handle.write(json.dumps(trial.to_dict(), ensure_ascii=False) + "\n")
            self.done.add(trial.nct_id)
            written += 1
        self._handle.flush()
        os.fsync(self._handle.fileno())
        return written

    def finish(self) -> None:
        """Turn the checkpoint into the output, in one rename."""
        self.__exit__()
        if self.format == ".jsonl":
            os.replace(self.checkpoint, self.path)
            return
        temporary = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        write_parquet(iter_rows(self.checkpoint), temporary)
        os.replace(temporary, self.path)
        self.checkpoint.unlink()

    def _recover_checkpoint(self) -> None:
        """Keep the complete lines of a killed run's checkpoint; cut a line the kill left half-written."""
        keep = 0
        with self.checkpoint.open("rb") as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    break
                try:
                    self.done.add(json.loads(line)["nct_id"])
                except (json.JSONDecodeError, KeyError, UnicodeDecodeError):
                    break
                keep += len(line)
        with self.checkpoint.open("r+b") as handle:
            handle.truncate(keep)

    def _seed_from_output(self) -> None:
        rows = iter_rows(self.path)
        temporary = self.checkpoint.with_name(self.checkpoint.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                self.done.add(row["nct_id"])
        os.replace(temporary, self.checkpoint)


ROWS_AT_A_TIME = 4096  # rows read or written together: memory stays bounded whatever the output's size


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``.jsonl`` or ``.parquet`` output (or checkpoint), all of them (tests, small outputs)."""
    return list(iter_rows(path))


def iter_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a ``.jsonl`` or ``.parquet`` output (or checkpoint), streamed."""
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=ROWS_AT_A_TIME):
            yield from batch.to_pylist()
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    raise MedlinkError(f"{path}:{number}: not JSON ({error})") from None


def write_parquet(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """``rows`` into a Parquet file, :data:`ROWS_AT_A_TIME` at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    linked = [
        ("text", pa.string()),
        ("concepts", pa.list_(pa.string())),
        ("names", pa.list_(pa.string())),
        ("score", pa.float64()),
        ("stage", pa.string()),
    ]
    condition = pa.struct(linked)
    intervention = pa.struct([linked[0], ("type", pa.string()), *linked[1:], ("nil_class", pa.string())])
    schema = pa.schema(
        [("nct_id", pa.string()), ("conditions", pa.list_(condition)), ("interventions", pa.list_(intervention))]
    )
    pending = iter(rows)
    with pq.ParquetWriter(path, schema) as writer:
        while chunk := list(islice(pending, ROWS_AT_A_TIME)):
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
