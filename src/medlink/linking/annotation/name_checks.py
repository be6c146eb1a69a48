"""Whether a name found in running text stands there as a mention, by what the terminology itself says (no
training documents needed):

- A name the terminology writes only as one word in capitals ("AT1", "WAS1", CTD's OMIM marker "INCLUDED") is a
  short form; where the text writes it in small letters that spell everyday English words ("were included", "at 1
  year", "was 1"), it reads as those words, as a reader (and Gilda) takes them. Not where the small letters spell
  no word ("copd", "mrsa", "hmgb1": short forms typed carelessly), nor in a text with no capital letter (a note
  typed in small letters throughout says nothing by them), nor in a terminology written in capitals.
- A one-word name that ends a large share of the terminology's longer names ("syndrome", "disease" in MEDIC) names
  a category: alone it is no mention (corpus guidelines leave "the disease" unannotated), though it heads many.

Everyday words: the whole words of the base model's WordPiece vocabulary (uncased BERT's, ~21,700 words frequent
in English Wikipedia and books), shipped with it."""

from __future__ import annotations

from functools import cache

from medlink.linking.annotation.lexicon import has_small_letter
from medlink.terminology import Terminology

WRITTEN_IN_CAPITALS = 0.5  # a terminology with at least this share of its names in capitals is written so throughout
CATEGORY_HEADS = 100  # a category heads at least this many names too: in a small terminology no word is one


class NameChecks:
    """Remembered per name, so one instance serves many texts; ``category_share``: see
    :attr:`~medlink.linking.annotation.annotator.AnnotatorConfig.category_share`."""

    def __init__(self, terminology: Terminology, category_share: float) -> None:
        self.terminology = terminology
        self.category_share = category_share
        self.short: dict[str, bool] = {}

    def stands(self, key: str, written: str, text_has_capitals: bool = True) -> bool:
        """Whether ``written`` (normalized: ``key``), a name of the terminology, is a mention as written in a text
        that has capital letters, or none."""
        return not self._category(key) and not (text_has_capitals and self._misread(key, written))

    def _category(self, key: str) -> bool:
        if " " in key or not any(c.isalpha() for c in key):
            return False
        statistics = self.terminology.name_statistics
        return statistics.heads.get(key, 0) >= CATEGORY_HEADS and statistics.head_share(key) >= self.category_share

    def _misread(self, key: str, written: str) -> bool:
        if not has_small_letter(written):
            return False
        if not all(word in everyday_words() or word.isdigit() for word in written.casefold().split()):
            return False
        short = self.short.get(key)
        if short is None:
            names = self.terminology.names_written(key)
            short = self.short[key] = bool(names) and all(_one_word_in_capitals(name) for name in names)
        return short and self.terminology.name_statistics.capitals_share < WRITTEN_IN_CAPITALS


@cache
def everyday_words() -> frozenset[str]:
    """Read once per process from the packaged base model's ``vocab.txt``: its entries of letters alone."""
    from medlink.encoders.registry import packaged_minilm_path

    lines = (packaged_minilm_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line.isalpha() and line.islower())


def has_capital(text: str) -> bool:
    return any(c.isupper() for c in text)


def _one_word_in_capitals(name: str) -> bool:
    return len(name.split()) == 1 and any(c.isalpha() for c in name) and not has_small_letter(name)
