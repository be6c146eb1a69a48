"""Abbreviations defined in a document, found with the Schwartz & Hearst (2003) algorithm.

"... Wilson disease (WD) ..." defines WD; a later mention "WD" (or "WD patients") is linked as "Wilson disease".
BioSyn does the same with Ab3P; in NCBI-disease and BC5CDR many mentions are such short forms.

Candidates are ``long form (short form)``: the short form is 2–10 characters, has a letter, starts with a letter
or digit and has at most two words; the long form is at most min(|SF| + 5, 2·|SF|) words before the parenthesis.
The best long form is the shortest one whose words' characters spell the short form from right to left, the
first short-form character starting a word (A. Schwartz and M. Hearst, "A simple algorithm for identifying
abbreviation definitions in biomedical text", PSB 2003). Two stricter rules come first: the last words whose
initials spell the short form in order, then in another order ("myotonic dystrophy (DM)").

Chemical short forms often spell nothing of their long form ("cisplatin (CDDP)", "isoproterenol (ISPH)",
"ammonium acetate (NH4Ac)"). Given a test for terminology names, a mention that is such a short form, and no name
itself, falls back to the longest run of words before its parenthesis that is a name and starts a phrase (it
follows a function word, punctuation or the sentence start, so "…dideazafolic acid (CB 3717)" is not "acid").
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from types import MappingProxyType

# "long form (SF)", "long form [SF]", and the short form first in a parenthesis that says more: "(SF; n = 40)",
# "(SF, 5 mg/kg)" (Schwartz & Hearst take what comes before a ';' or ',' as the short form)
_PARENTHESIS = re.compile(r"\(([^()]{1,40})\)|\[([^\[\]()]{1,40})\]")
_MORE_SAID = re.compile(r"\s*[;,]\s")
_TOKEN = re.compile(r"\S+")
_WORD_JOINERS = "-[]()"  # next to a parenthesis, these keep it inside a word: "1-(2-chloroethyl)-3-…", "[(3)H]"
# Words after which a noun phrase starts: a named long form must follow one of them (or punctuation).
_PHRASE_OPENERS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "with",
        "and",
        "or",
        "by",
        "to",
        "in",
        "into",
        "for",
        "from",
        "on",
        "as",
        "at",
        "than",
        "that",
        "which",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "after",
        "before",
        "during",
        "under",
        "over",
        "via",
        "versus",
        "vs",
        "plus",
        "also",
        "both",
        "either",
        "not",
        "no",
        "nor",
        "its",
        "their",
        "his",
        "her",
        "this",
        "these",
        "those",
        "such",
        "other",
        "some",
        "any",
        "all",
        "each",
        "per",
        "among",
        "between",
        "including",
    }
)


def _valid_short_form(candidate: str) -> bool:
    candidate = candidate.strip()
    return (
        2 <= len(candidate) <= 10
        and len(candidate.split()) <= 2
        and candidate[0].isalnum()
        and any(char.isalpha() for char in candidate)
    )


def _single_letter(candidate: str) -> bool:
    """A one-letter short form ("testosterone (T)"): accepted only when the word before starts with it, and only
    for a whole mention, never spelled out inside a longer one ("vitamin E", "hepatitis B")."""
    return len(candidate) == 1 and candidate.isupper()


def best_long_form(short: str, long: str) -> str | None:
    """The shortest suffix of ``long`` whose characters spell ``short`` (Schwartz & Hearst, figure 2)."""
    s_index, l_index = len(short) - 1, len(long) - 1
    while s_index >= 0:
        char = short[s_index].lower()
        if not char.isalnum():
            s_index -= 1
            continue
        while l_index >= 0 and (
            long[l_index].lower() != char or (s_index == 0 and l_index > 0 and long[l_index - 1].isalnum())
        ):
            l_index -= 1
        if l_index < 0:
            return None
        l_index -= 1
        s_index -= 1
    start = long.rfind(" ", 0, l_index + 1) + 1
    found = long[start:].strip()
    if len(found) <= len(short) or short.lower() in found.lower().split():
        return None
    return found


def initials_long_form(short: str, words: list[str]) -> str | None:
    """The last words whose initials spell ``short`` letter for letter, if any ("attenuated adenomatous polyposis
    coli (AAPC)"): Schwartz & Hearst's rightmost-character rule would drop "attenuated" here."""
    letters = [char.lower() for char in short if char.isalnum()]
    if len(letters) < 2 or len(letters) > len(words):
        return None
    tail = words[-len(letters) :]
    return " ".join(tail) if all(w[0].lower() == c for w, c in zip(tail, letters, strict=True)) else None


def permuted_initials_long_form(short: str, words: list[str]) -> str | None:
    """The last words whose initials are the short form's letters in another order: "myotonic dystrophy (DM)" and
    other short forms of a Latin or reordered name (dystrophia myotonica), which both rules above miss."""
    letters = sorted(char.lower() for char in short if char.isalpha())
    if len(letters) < 2 or len(letters) > len(words) or not short.isalpha():
        return None
    tail = words[-len(letters) :]
    return " ".join(tail) if sorted(w[0].lower() for w in tail) == letters else None


class _DefinitionsCache:
    """The definitions of recent documents, keyed by a digest of each document rather than the document itself,
    so that what the cache holds is bounded by what documents define, not by how long they are: at most
    ``capacity`` documents and ``budget`` characters of definitions, the least recently used dropped first."""

    def __init__(self, capacity: int, budget: int) -> None:
        self.capacity, self.budget = capacity, budget
        self._found: OrderedDict[bytes, Mapping[str, str]] = OrderedDict()
        self._size: dict[bytes, int] = {}
        self._held = 0
        self._lock = threading.Lock()

    def get(self, document: str) -> Mapping[str, str]:
        key = hashlib.blake2b(document.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            if key in self._found:
                self._found.move_to_end(key)
                return self._found[key]
        found = _definitions(document)
        size = sum(len(short) + len(long) for short, long in found.items())
        with self._lock:
            if key not in self._found:
                self._found[key], self._size[key] = found, size
                self._held += size
            while self._found and (len(self._found) > self.capacity or self._held > self.budget):
                dropped, _ = self._found.popitem(last=False)
                self._held -= self._size.pop(dropped)
        return found


# Mentions of one document arrive together: each document is read once, not once per mention.
_RECENT = _DefinitionsCache(capacity=4096, budget=16 << 20)


def find_abbreviations(document: str) -> Mapping[str, str]:
    """Short form → long form for every definition in ``document`` (the first definition of each wins)."""
    return _RECENT.get(document)


def _definitions(document: str) -> Mapping[str, str]:
    found: dict[str, str] = {}
    for match in _PARENTHESIS.finditer(document):
        if match.group(2) is not None and document[match.start() - 1 : match.start()].isalnum():
            continue  # a bracket inside a word is part of a chemical name: "Ca[2+]"
        short = _MORE_SAID.split(match.group(1) or match.group(2), maxsplit=1)[0].strip()
        if short in found:
            continue
        words = _words_before(document, match.start())
        if _single_letter(short):
            if words and len(words[-1]) > 2 and words[-1][0].upper() == short and words[-1].isalpha():
                found[short] = words[-1]
            continue
        if not _valid_short_form(short):
            continue
        # A plural short form ("COCs") is spelled by its singular: the "s" has no word of its own.
        stem = short[:-1] if short.endswith("s") and any(char.isupper() for char in short[:-1]) else short
        limit = min(len(short) + 5, 2 * len(short))
        long = (
            initials_long_form(stem, words)
            or permuted_initials_long_form(stem, words)
            or best_long_form(short, " ".join(words[-limit:]))
        )
        if long:
            found[short] = long = long.strip(" ,;:")
            if stem != short and long.endswith("s"):
                found.setdefault(stem, long[:-1])  # "COC use" after "contraceptives (COCs)"
    # A long form may use an earlier short form ("diffuse mesangial sclerosis (DMS) ... isolated DMS (IDMS)"):
    # spell it out once, so "IDMS" becomes "isolated diffuse mesangial sclerosis".
    # Read-only: the cache hands the same mapping to every caller.
    return MappingProxyType(
        {short: _spell_out(long, {k: v for k, v in found.items() if k != short}) for short, long in found.items()}
    )


def named_long_form(short: str, document: str, is_name: Callable[[str], bool]) -> str | None:
    """The long form of ``short`` where the letters spell nothing: the longest phrase-initial run of words right
    before ``(short)`` in ``document`` that ``is_name`` accepts ("over cisplatin (CDDP)" → "cisplatin")."""
    if not _valid_short_form(short) or not any(char.isupper() for char in short) or is_name(short):
        return None
    for match in re.finditer(
        r"\(\s*" + re.escape(short) + r"\s*(?:\)|[;,]\s)|\[\s*" + re.escape(short) + r"\s*\]", document
    ):
        words = _words_before(document, match.start())
        for count in range(min(len(words), 2 * len(short)), 0, -1):
            opener = words[-count - 1] if count < len(words) else ""
            starts_phrase = not opener or opener[-1] in ",;:(" or opener.lower() in _PHRASE_OPENERS
            candidate = " ".join(words[-count:]).strip(" ,;:")
            if starts_phrase and candidate and is_name(candidate):
                return candidate
    return None


def _words_before(document: str, end: int) -> list[str]:
    """The words of ``document[:end]`` back to the sentence start or an earlier parenthesis: a long form never
    spans one ("carboplatin's advantages (CBDCA) over cisplatin (CDDP)" is not a definition of CDDP). A parenthesis
    inside a word is part of a chemical name and no boundary ("1-(2-chloroethyl)-3-cyclohexyl-1-nitrosourea")."""
    before = document[:end].rstrip()
    start = max(before.rfind(". "), before.rfind("; "), _last_parenthesis_between_words(before)) + 1
    return before[start:].split()


def _last_parenthesis_between_words(text: str) -> int:
    """The position of the last parenthesis in ``text`` that is not inside a word, or -1."""
    end = len(text)
    while (at := max(text.rfind("(", 0, end), text.rfind(")", 0, end))) >= 0:
        beside = text[at - 1 : at] if text[at] == "(" else text[at + 1 : at + 2]
        if not beside or not (beside.isalnum() or beside in _WORD_JOINERS):
            return at
        end = at
    return -1


def _spell_out(text: str, definitions: Mapping[str, str]) -> str:
    return _TOKEN.sub(lambda m: m.group() if len(m.group()) == 1 else definitions.get(m.group(), m.group()), text)


def expand_abbreviations(text: str, document: str | None, is_name: Callable[[str], bool] | None = None) -> str:
    """``text`` with every token that is a short form defined in ``document`` replaced by its long form; with
    ``is_name``, a whole-mention short form that no spelling rule resolves may take a named long form."""
    if not document:
        return text
    definitions = find_abbreviations(document)
    short = text.strip()
    if short in definitions:
        return definitions[short]
    named = named_long_form(short, document, is_name) if is_name is not None else None
    if named:
        return named
    return _spell_out(text, definitions) if definitions else text
