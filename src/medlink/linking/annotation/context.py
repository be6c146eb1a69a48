"""Negation and uncertainty of a mention from the words around it, after ConText (Harkema et al. 2009): a trigger
before the mention ("no", "denies", "negative for", "possible") or after it ("was ruled out", "is unlikely") applies
up to a window of words, within the mention's sentence, until a word that ends its scope ("but", "however").
The trigger is kept, so the reason can name it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# Longer triggers first, so "no evidence of" wins over "no". Lower case; matched on word boundaries.
NEGATION_BEFORE = (
    "no evidence of",
    "no signs of",
    "no sign of",
    "no history of",
    "negative for",
    "free of",
    "absence of",
    "rules out",
    "ruled out",
    "rule out",
    "denies",
    "denied",
    "deny",
    "without",
    "not",
    "no",
    "never",
    "nor",
)
NEGATION_AFTER = (
    "was ruled out",
    "were ruled out",
    "is ruled out",
    "was excluded",
    "were excluded",
    "is absent",
    "was absent",
    "was negative",
    "were negative",
    "is negative",
    "unlikely",
)
UNCERTAIN_BEFORE = (
    "cannot be excluded",
    "cannot exclude",
    "suspicion of",
    "suspected",
    "suspicious for",
    "concern for",
    "possible",
    "possibly",
    "probable",
    "probably",
    "likely",
    "may have",
    "may be",
    "questionable",
    "presumed",
    "consistent with",
    "suggestive of",
    "versus",
    "vs",
)
UNCERTAIN_AFTER = (
    "is suspected",
    "was suspected",
    "is possible",
    "is likely",
    "cannot be excluded",
    "cannot be ruled out",
    "?",
)
SCOPE_ENDS = ("but", "however", "although", "though", "except", "which", "yet", "aside from", "apart from")
WINDOW = 6  # words a trigger reaches

LOOKBACK_CHARS = 1_000  # read around a mention for its sentence's ends: far more than the window's words need
_SENTENCE_END = re.compile(r"[.;!?\n]\s|[.;!?\n]$")


@dataclass(frozen=True)
class ContextFinding:
    negated: bool
    uncertain: bool
    trigger: str | None = None  # the words that decided, for the reason


def assess(text: str, start: int, end: int, window: int = WINDOW) -> ContextFinding:
    """Whether the mention at ``text[start:end]`` is negated or uncertain, and by which trigger."""
    sentence_start = _sentence_start(text, start)
    reach = min(len(text), end + LOOKBACK_CHARS)
    following = _SENTENCE_END.search(text, end, reach)
    sentence_end = following.start() + 1 if following else reach
    before = _scope(text[sentence_start:start].lower().split()[-window:], from_end=True)
    after = _scope(text[end:sentence_end].lower().split()[:window], from_end=False)
    before_text, after_text = " ".join(before), " ".join(after)
    for trigger in NEGATION_BEFORE:
        if _has(before_text, trigger):
            return ContextFinding(True, False, trigger)
    for trigger in NEGATION_AFTER:
        if _has(after_text, trigger):
            return ContextFinding(True, False, trigger)
    for trigger in UNCERTAIN_BEFORE:
        if _has(before_text, trigger):
            return ContextFinding(False, True, trigger)
    for trigger in UNCERTAIN_AFTER:
        if (trigger == "?" and text[end:sentence_end].lstrip().startswith("?")) or _has(after_text, trigger):
            return ContextFinding(False, True, trigger)
    return ContextFinding(False, False)


def _sentence_start(text: str, start: int) -> int:
    """Where the sentence holding ``start`` begins, looked for in the :data:`LOOKBACK_CHARS` before it only (its
    start when no sentence ends there): a trigger reaches a few words, and a search back to the top of the text
    for every mention made long unpunctuated documents quadratic."""
    low = max(0, start - LOOKBACK_CHARS)
    return max((match.end() for match in _SENTENCE_END.finditer(text, low, start)), default=low)


def _scope(words: list[str], from_end: bool) -> list[str]:
    """The words a trigger may sit in: up to the nearest scope-ending word between it and the mention."""
    cleaned = [word.strip(",:()[]\"'") for word in words]
    ends = [i for i, word in enumerate(cleaned) if word in SCOPE_ENDS]
    if not ends:
        return cleaned
    return cleaned[ends[-1] + 1 :] if from_end else cleaned[: ends[0]]


def _has(words: str, trigger: str) -> bool:
    return trigger in words and _pattern(trigger).search(words) is not None  # the substring test is the cheap one


@cache
def _pattern(trigger: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(trigger)}(?![\w-])")
