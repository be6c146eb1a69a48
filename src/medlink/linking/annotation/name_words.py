"""What annotating a batch of texts asks of the terminology, over and over (the texts' words repeat, and every run
of up to eight words is tried): remembered for the batch."""

from __future__ import annotations

from collections.abc import Sequence

from medlink.linking.annotation.lexicon import Lexicon
from medlink.terminology import Terminology
from medlink.text.normalize import WordRuns


class NameWords:
    """What a batch of texts asks of the terminology, remembered for the batch (its texts' words repeat): whether a
    word of the text could be part of a name (of the terminology or the lexicon) — its normalized words all are
    words of names; a stand-alone "i" always could (it reads as the Roman numeral only after "type", "class", …) —
    each word's key, and whether a key is a name."""

    def __init__(self, terminology: Terminology, lexicon: Lexicon) -> None:
        self.terminology = terminology
        self.words = terminology.name_words
        self.lexicon_words = lexicon.words
        self.seen: dict[str, bool] = {}
        self.keys: dict[str, str] = {}
        self.names: dict[str, bool] = {}

    def __call__(self, word: str) -> bool:
        known = self.seen.get(word)
        if known is None:
            known = self.seen[word] = word.casefold() == "i" or all(
                part in self.words or part in self.lexicon_words for part in self.key_of((word,)).split()
            )
        return known

    def key_of(self, words: Sequence[str]) -> str:
        """The normalized key of the words, as written one after another."""
        return self.terminology.normalizer.normalize_words(words, self.keys)

    def runs(self, words: Sequence[str]) -> WordRuns:
        """The keys of every run of a text's words (:class:`~medlink.text.normalize.WordRuns`), its words' keys
        remembered for the batch."""
        return WordRuns(self.terminology.normalizer, words, self.keys)

    def is_name(self, key: str) -> bool:
        """Whether the terminology has a name with this key."""
        known = self.names.get(key)
        if known is None:
            terminology = self.terminology
            known = self.names[key] = terminology.may_have_normalized(key) and terminology.has_normalized(key)
        return known
