"""Coordinated mentions in running text: "breast and ovarian cancer", "prostatic, pancreas, skin, and lung cancer",
"breast/ovarian cancer". BC5CDR and NCBI-disease annotate each as one composite mention, the whole span with one
concept per conjunct; the dictionary alone finds only the last conjunct ("ovarian cancer"), a wrong span.

Found backwards from a name span of two words or more: its first word is the last conjunct and the words after it
the head the modifiers before it share. The modifiers are single words joined by commas, "and", "or", "and/or" or
slashes, as :mod:`medlink.linking.mentions.composites` splits a mention the linker is given; a head that starts with
a number belongs to the last conjunct alone ("type 1 and type 2 diabetes"), so none is read there. Bare pairs of
names ("nausea and vomiting") are two mentions, not one: a one-word span shares no head."""

from __future__ import annotations

import re
from dataclasses import dataclass

_REACH = 200  # characters before a span searched for its modifiers: a list longer than that is no coordination
_CONJUNCTION_BEFORE = re.compile(r"(?:,?\s+(?:and/or|and|or)\s+|\s*/\s*)$", re.IGNORECASE)
_SEPARATOR = r"(?:,\s+|\s*/\s*)"
_MODIFIERS_BEFORE = re.compile(rf"(?<![\w/-])(?:[\w-]+{_SEPARATOR})*[\w-]+$")
_NUMBERED = re.compile(r"^(?:\d|[ivx]+\b)", re.IGNORECASE)


@dataclass(frozen=True)
class Coordination:
    """``start``: where the first conjunct starts; ``parts``: each conjunct with the shared head, in text order (the
    last is the name span's own text)."""

    start: int
    parts: tuple[str, ...]


def coordination_ending(text: str, start: int, end: int) -> Coordination | None:
    """The coordination whose last conjunct and head are ``text[start:end]``, or ``None``."""
    words = text[start:end].split(maxsplit=1)
    if len(words) < 2 or _NUMBERED.match(words[1]):
        return None
    head = " ".join(words[1].split())
    before = text[max(0, start - _REACH) : start]
    conjunction = _CONJUNCTION_BEFORE.search(before)
    if conjunction is None:
        return None
    modifiers = _MODIFIERS_BEFORE.search(before, 0, conjunction.start())
    if modifiers is None:
        return None
    conjuncts = [word for word in re.split(_SEPARATOR, modifiers.group()) if word]
    parts = (*(f"{conjunct} {head}" for conjunct in conjuncts), text[start:end])
    return Coordination(start - len(before) + modifiers.start(), parts)
