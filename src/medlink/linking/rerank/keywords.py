"""Keyword lexicons for the keywords attentive ranker (Liang et al. 2021, §3.2), derived from a terminology.

Liang et al. collated procedure *sites* and procedure *types* by hand for Chinese procedures. medlink derives the
two kinds from a terminology with a hierarchy (MeSH by default) so that any user gets them without hand work:

- **sites** — the words of every name under the anatomy tree (MeSH tree ``A``: "kidney", "colon", "retinal"…);
  where the body part sits decides between "renal cell carcinoma" and "hepatocellular carcinoma".
- **types** — the head words (the last word before an inversion comma or an "of" phrase) of the names of
  concepts that have children outside the anatomy tree, kept when at least ``min_heads`` such concepts share
  them ("neoplasms", "syndrome", "deficiency", "agonists"…): the kind of disease or chemical, which decides
  between "colon carcinoma" and "colon polyp".

A word in both lists is a type (the anatomy tree names tissues such as "epithelium" that are also heads of
class names). Words are matched case-insensitively, singular or plural (a trailing "s" dropped).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.terminology import Terminology

ANATOMY_PREFIX = "A"  # MeSH's anatomy tree
_WORD = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "nos",
        "of",
        "on",
        "or",
        "other",
        "the",
        "to",
        "with",
        "without",
    ]
)
LEXICON_FORMAT = "medlink-keywords-1"


def _stem(word: str) -> str:
    word = word.casefold()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@dataclass(frozen=True)
class KeywordLexicon:
    """Site and type words (stemmed as :func:`_stem` does)."""

    sites: frozenset[str]
    types: frozenset[str]

    def kinds(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` for every keyword of ``text``; kind is ``"site"`` or ``"type"``."""
        found = []
        for match in _WORD.finditer(text):
            stem = _stem(match.group())
            if stem in self.types:
                found.append((match.start(), match.end(), "type"))
            elif stem in self.sites:
                found.append((match.start(), match.end(), "site"))
        return found

    def to_json(self) -> dict[str, object]:
        return {"format": LEXICON_FORMAT, "sites": sorted(self.sites), "types": sorted(self.types)}

    @classmethod
    def from_json(cls, payload: dict[str, object], where: Path | str) -> KeywordLexicon:
        if payload.get("format") != LEXICON_FORMAT:
            raise MedlinkError(
                f"{where}: keyword lexicon of format {payload.get('format')!r}, this medlink reads {LEXICON_FORMAT!r}"
            )
        sites, types = payload.get("sites"), payload.get("types")
        if not isinstance(sites, list) or not isinstance(types, list):
            raise MedlinkError(f"{where}: a keyword lexicon needs lists 'sites' and 'types'")
        return cls(frozenset(map(str, sites)), frozenset(map(str, types)))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=0), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> KeywordLexicon:
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise MedlinkError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
        return cls.from_json(payload, path)


def derive_lexicon(terminology: Terminology, min_heads: int = 3) -> KeywordLexicon:
    """Sites from the anatomy tree's names, types from the head words of class names (see the module text).

    ``terminology`` needs MeSH-style tree numbers; one without (MEDIC, a TSV vocabulary) gives empty sites, so
    callers pass the embedded MeSH instead (:func:`lexicon_source`)."""
    sites: set[str] = set()
    heads: Counter[str] = Counter()
    for concept in terminology:
        anatomy = any(number.startswith(ANATOMY_PREFIX) for number in concept.tree_numbers)
        if anatomy:
            for name in concept.names:
                sites.update(_stem(w) for w in _WORD.findall(name.text) if len(w) > 2 and w.isalpha())
        elif terminology.children(concept.id):
            heads.update({head for name in concept.names if (head := _head_word(name.text))})
    types = {word for word, count in heads.items() if count >= min_heads and len(word) > 2}
    return KeywordLexicon(frozenset(sites - types - _STOPWORDS), frozenset(types - _STOPWORDS))


def _head_word(name: str) -> str | None:
    """The head of a name: the last word, before an inversion ("Carcinoma, Renal Cell") or an "of" phrase
    ("Cancer of the Breast")."""
    name = name.split(",")[0]
    name = re.split(r"\s(?:of|in|due to|with|caused by)\s", name, maxsplit=1)[0]
    words = [w for w in _WORD.findall(name) if w.isalpha()]
    return _stem(words[-1]) if words else None


def lexicon_source(terminology: Terminology) -> Terminology:
    """The terminology to derive keywords from: ``terminology`` itself when it has an anatomy tree, else the
    embedded MeSH descriptors."""
    numbers = (number for row in terminology.concepts["tree_numbers"] for number in row or ())
    if any(number.startswith(ANATOMY_PREFIX) for number in numbers):
        return terminology
    from medlink.terminology import load_default_terminology

    return load_default_terminology()
