"""Errors and counted warnings raised while reading terminology sources.

A malformed line either stops the read with a :class:`SourceError` naming file, line and problem (strict mode) or
is skipped and counted in the :class:`ReadReport`, which keeps a few examples of each kind of problem.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from medlink.errors import MedlinkError

_EXAMPLES_PER_PROBLEM = 3


class SourceError(MedlinkError):
    """A source file cannot be read: says which file, which line (when known) and what is wrong."""

    def __init__(self, path: Path | str, problem: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {problem}")


@dataclass
class ReadReport:
    """What happened while reading sources: skipped lines, dropped names, merged duplicates, cycles.

    ``strict=True`` turns every skipped problem into a :class:`SourceError`.
    """

    strict: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def problem(self, path: Path | str, line: int | None, message: str, kind: str = "malformed lines skipped") -> None:
        """A line that cannot be used: raise when strict, else count it and keep an example."""
        if self.strict:
            raise SourceError(path, message, line)
        self.note(kind, f"{path}:{line}: {message}" if line is not None else f"{path}: {message}")

    def note(self, kind: str, example: str | None = None, count: int = 1) -> None:
        """Count something worth telling the user that is not an error (e.g. obsolete terms excluded)."""
        self.counts[kind] += count
        if example is not None:
            kept = self.examples.setdefault(kind, [])
            if len(kept) < _EXAMPLES_PER_PROBLEM:
                kept.append(example)

    def lines(self) -> list[str]:
        """Human-readable summary, one line per kind of event, with examples."""
        out = []
        for kind, count in sorted(self.counts.items()):
            out.append(f"{count:,} {kind}")
            out.extend(f"    e.g. {example}" for example in self.examples.get(kind, []))
        return out
