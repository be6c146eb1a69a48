"""How a cross-encoder reads a patient note that is longer than its window.

A cross-encoder reads note and trial together in a few hundred tokens; a TREC note (up to 1,300 characters) and a
trial description do not fit, and cut longest-first it keeps the opening lines and loses the findings further
down. Three readings (``READINGS``):

- ``whole``: the note as written, cut to the window (what the reranker did before).
- ``findings``: the note summarized to its findings: its first sentence (who the patient is and why they came)
  and every sentence that names a disease (:class:`~medlink.linking.mentions.scanner.ConceptScanner`), in order, at
  most ``max_words``.
- ``windows``: the note in overlapping windows of ``window_words`` words; the trial's score is its best window's.
  At most ``max_windows`` (the first ones): each window is one more cross-encoder pass per trial, and a note of
  20,000 characters would otherwise cost a minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlink.linking.mentions.scanner import ConceptScanner

WHOLE, FINDINGS, WINDOWS = "whole", "findings", "windows"
READINGS = (WHOLE, FINDINGS, WINDOWS)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


@dataclass(frozen=True)
class NoteReading:
    """mode: one of ``READINGS``. max_words: the length of a findings summary. window_words, stride_words: the
    windows' length and step (overlapping, so that a finding cut by one window is whole in the next); max_windows:
    how many are read."""

    mode: str = WHOLE
    max_words: int = 120
    window_words: int = 100
    stride_words: int = 70
    max_windows: int = 4

    def __post_init__(self) -> None:
        if self.mode not in READINGS:
            raise ValueError(f"unknown note reading {self.mode!r}; known: {', '.join(READINGS)}")

    def queries(self, note: str, scanner: ConceptScanner | None = None) -> list[str]:
        """The texts the cross-encoder reads in place of the note (one, or one per window)."""
        if self.mode == FINDINGS:
            return [findings_summary(note, scanner, self.max_words)]
        if self.mode == WINDOWS:
            return note_windows(note, self.window_words, self.stride_words)[: self.max_windows]
        return [note]


def sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def findings_summary(note: str, scanner: ConceptScanner | None, max_words: int) -> str:
    """The first sentence and the sentences naming a disease, in the note's order, cut at ``max_words``. Without a
    scanner, or when no sentence names one, the note's opening ``max_words``."""
    parts = sentences(note)
    if scanner is None or len(parts) <= 1:
        return " ".join(note.split()[:max_words])
    kept = [parts[0], *(sentence for sentence in parts[1:] if scanner.scan(sentence))]
    return " ".join(" ".join(kept).split()[:max_words])


def note_windows(note: str, window_words: int, stride_words: int) -> list[str]:
    """Windows of ``window_words`` words every ``stride_words``; a note that fits is one window."""
    words = note.split()
    if len(words) <= window_words:
        return [" ".join(words)]
    starts = list(range(0, len(words) - window_words + 1, stride_words))
    if starts[-1] + window_words < len(words):
        starts.append(len(words) - window_words)
    return [" ".join(words[start : start + window_words]) for start in starts]
