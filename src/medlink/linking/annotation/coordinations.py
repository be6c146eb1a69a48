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

from medlink.linking.mentions.composites import AND_OR, NUMBERED

_REACH = 200  # characters before a span searched for its modifiers: a list reaching further is not read at all
_CONJUNCTION_BEFORE = re.compile(rf"(?:,?\s+{AND_OR}\s+|\s*/\s*)$", re.IGNORECASE)
_SEPARATOR = r"(?:,\s+|\s*/\s*)"
_LIST_GOES_ON = re.compile(rf"{_SEPARATOR}$")
# a modifier starts a word: not after a letter, a hyphen, a slash or an apostrophe ("Alzheimer's" is no "s")
_MODIFIERS_BEFORE = re.compile(rf"(?<![\w/'’-])(?:[\w-]+{_SEPARATOR})*[\w-]+$")
_MODIFIER = re.compile(r"[\w-]+")


@dataclass(frozen=True)
class Coordination:
    """The modifiers before a name span that share its head: ``modifiers``, (start, word) of each in text order;
    ``head``: the span's words after its first."""

    modifiers: tuple[tuple[int, str], ...]
    head: str

    def conjunct(self, modifier: int) -> str:
        """The conjunct of modifier ``modifier`` with the shared head ("breast cancer")."""
        return f"{self.modifiers[modifier][1]} {self.head}"


def coordination_ending(text: str, start: int, end: int) -> Coordination | None:
    """The coordination whose last conjunct and head are ``text[start:end]``, or ``None``."""
    words = text[start:end].split(maxsplit=1)
    if len(words) < 2 or NUMBERED.match(words[1]):
        return None
    reach = max(0, start - _REACH)
    conjunction = _CONJUNCTION_BEFORE.search(text, reach, start)
    if conjunction is None:
        return None
    modifiers = _MODIFIERS_BEFORE.search(text, reach, conjunction.start())
    if modifiers is None or _LIST_GOES_ON.search(text, max(0, modifiers.start() - 4), modifiers.start()):
        return None  # a list longer than the reach, or one with an item that is no single word, is not read
    found = tuple((m.start(), m.group()) for m in _MODIFIER.finditer(text, modifiers.start(), modifiers.end()))
    return Coordination(found, " ".join(words[1].split()))
