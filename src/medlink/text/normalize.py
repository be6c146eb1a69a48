"""Text normalization shared by indexing and linking.

The same function must see both sides: a terminology name is normalized when it is compiled and a mention when it
is linked. Two strings that normalize to the same key are treated as the same name by the exact sieve, and encoded
once by the dense stages, so the rules below trade a little precision for many fewer distinct strings.

Steps, in order (each can be switched off in :class:`NormalizerConfig`):

1. Unicode NFKC (full-width forms, ligatures, superscripts) and case folding.
2. Greek letters spelled out (``α`` → ``alpha``), as MeSH and most vocabularies write them.
3. MeSH-style inverted names un-inverted: ``"Infarction, Myocardial"`` → ``"myocardial infarction"``.
4. Possessives dropped (``Crohn's disease`` → ``crohn disease``), then every run of punctuation, hyphens of any
   kind and whitespace becomes one space, and letters and digits are split apart (``beta1`` ≡ ``beta-1``).
   Scripts are split apart too: Latin letters next to Chinese or Japanese characters (``IIB期`` → ``iib 期``), so
   a Roman numeral or an abbreviation inside a Chinese term is a token of its own.
5. Roman numerals turned into digits (``type II`` → ``type 2``).
6. Simple English plurals reduced (``cysts`` → ``cyst``, ``allergies`` → ``allergy``); acronyms written in capitals
   (``AIDS``) are left alone.

ICD-10 codes (``A01.000x001``, ``E11.9``) are kept as one token without the dot (``a01000x001``): split at the dot
and the letters, the ``x`` of a Chinese clinical extension would read as the Roman numeral 10.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

# Bump when a rule changes: compiled terminologies store normalized keys and recompute them on a mismatch.
NORMALIZER_VERSION = 2

_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "ζ": "zeta",
    "η": "eta",
    "θ": "theta",
    "ι": "iota",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "mu",
    "ν": "nu",
    "ξ": "xi",
    "ο": "omicron",
    "π": "pi",
    "ρ": "rho",
    "σ": "sigma",
    "ς": "sigma",
    "τ": "tau",
    "υ": "upsilon",
    "φ": "phi",
    "ϕ": "phi",
    "χ": "chi",
    "ψ": "psi",
    "ω": "omega",
}
_GREEK_RE = re.compile("|".join(_GREEK))

# Words that start a qualifying clause rather than a modifier: "Cholera, due to ..." is not an inverted name.
_NOT_INVERTED_AFTER_COMMA = frozenset(
    [
        "with",
        "without",
        "due",
        "and",
        "or",
        "in",
        "of",
        "not",
        "except",
        "including",
        "includes",
        "other",
        "nos",
        "unspecified",
        "by",
        "for",
        "from",
        "to",
        "as",
        "at",
        "on",
        "see",
    ]
)
_INVERSION_MAX_WORDS = 4

_ACRONYM_RE = re.compile(r"\b[A-Z]{2,}S\b")
_POSSESSIVE_RE = re.compile(r"(?<=\w)['’`]s\b")
_NON_WORD_RE = re.compile(r"[\W_]+", re.UNICODE)
_LETTER_DIGIT_RE = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana, CJK ideographs and their extensions
_SCRIPT_RE = re.compile(f"(?<=[{_CJK}])(?=[a-z])|(?<=[a-z])(?=[{_CJK}])")
_ICD_CODE_RE = re.compile(r"(?<![A-Za-z0-9.])([A-Z]\d{2}\.\d{1,4}(?:[x+]\d{3})?)(?![A-Za-z0-9.])")
# Singular nouns that end in -s; reducing them would only make the keys harder to read.
_SINGULAR_WITH_S = frozenset(
    [
        "diabetes",
        "herpes",
        "rabies",
        "scabies",
        "measles",
        "mumps",
        "series",
        "species",
        "ascites",
        "caries",
        "rickets",
        "tetanus",
    ]
)

_ROMAN_RE = re.compile(r"^(x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10}
# A lone "i" is a numeral only after these words ("type i", "factor i"); elsewhere it is a letter.
_ROMAN_I_AFTER = frozenset(
    ["type", "class", "grade", "stage", "phase", "factor", "complex", "collagen", "group", "level", "form"]
)


def _roman_to_int(token: str) -> int:
    total, previous = 0, 0
    for char in reversed(token):
        value = _ROMAN_VALUES[char]
        total += -value if value < previous else value
        previous = max(previous, value)
    return total


def _is_roman(token: str) -> bool:
    return bool(token) and _ROMAN_RE.match(token) is not None


def _singular(token: str) -> str:
    if len(token) <= 3 or not token.isalpha() or not token.endswith("s") or token in _SINGULAR_WITH_S:
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "ches", "shes")):
        return token[:-2]
    if token.endswith(("ss", "us", "is", "ous")):
        return token
    return token[:-1]


@dataclass(frozen=True)
class NormalizerConfig:
    """Which normalization steps run. The defaults are what compiled terminologies use."""

    greek: bool = True
    uninvert: bool = True
    roman_numerals: bool = True
    plurals: bool = True

    def fingerprint(self) -> str:
        flags = "".join("1" if flag else "0" for flag in (self.greek, self.uninvert, self.roman_numerals, self.plurals))
        return f"v{NORMALIZER_VERSION}-{flags}"


class Normalizer:
    """Turns a term into its normalized key. Stateless apart from its configuration; safe to share and pickle."""

    def __init__(self, config: NormalizerConfig | None = None) -> None:
        self.config = config or NormalizerConfig()

    @property
    def fingerprint(self) -> str:
        return self.config.fingerprint()

    def __call__(self, text: str) -> str:
        return self.normalize(text)

    def normalize_all(self, texts: Sequence[str], workers: int | None = None, chunk: int = 100_000) -> list[str]:
        """Every text's key, in order, on ``workers`` processes (default: one per core) when there are at least
        two chunks of texts: a terminology's names are the one big batch (12 M UMLS names are two minutes on one
        core). The workers are medlink's own (:mod:`medlink.processes`): they never re-import the caller's script,
        and where none can be started the keys are made here."""
        workers = workers or os.cpu_count() or 1
        if workers < 2 or len(texts) < 2 * chunk:
            return [self.normalize(text) for text in texts]
        from medlink.processes import WorkerStartError, run_in_processes

        pieces = [(self, texts[start : start + chunk]) for start in range(0, len(texts), chunk)]
        try:
            keyed = run_in_processes(_normalize_chunk, pieces, workers)
        except WorkerStartError:  # no interpreter to start (an embedded Python): one process is only slower
            return [self.normalize(text) for text in texts]
        return [key for keys in keyed for key in keys]

    def normalize_words(self, words: Sequence[str], keys: MutableMapping[str, str]) -> str:
        """``normalize(" ".join(words))`` for words a text separates by whitespace alone, made from each word's own
        key (remembered in ``keys``): see :class:`WordRuns`, which reads every run of a text's words so."""
        return WordRuns(self, words, keys).key(0, len(words))

    def normalize(self, text: str) -> str:
        if "." in text:
            pieces = _ICD_CODE_RE.split(text)  # odd pieces are the codes
            if len(pieces) > 1:
                keys = (
                    piece.casefold().replace(".", "") if index % 2 else self._normalize(piece)
                    for index, piece in enumerate(pieces)
                )
                return " ".join(key for key in keys if key)
        return self._normalize(text)

    def _normalize(self, text: str) -> str:
        # The cheap membership tests skip regular expressions that cannot match; this runs once per name.
        ascii_only = text.isascii()
        if not ascii_only:
            text = unicodedata.normalize("NFKC", text)
        # Capitalized acronyms keep their plural-looking "s" (AIDS is not the plural of aid).
        found = _ACRONYM_RE.findall(text) if self.config.plurals and "S" in text else ()
        acronyms = {word.casefold() for word in found}
        text = text.casefold()
        if self.config.greek and not ascii_only:
            text = _GREEK_RE.sub(lambda match: f" {_GREEK[match.group()]} ", text)
        if self.config.uninvert and ", " in text:
            text = _uninvert(text)
        if "'" in text or "’" in text or "`" in text:
            text = _POSSESSIVE_RE.sub("", text)
        text = _LETTER_DIGIT_RE.sub(" ", _NON_WORD_RE.sub(" ", text))
        if not ascii_only:
            text = _SCRIPT_RE.sub(" ", text)
        tokens = text.split()
        out: list[str] = []
        for token in tokens:
            if (
                self.config.roman_numerals
                and _is_roman(token)
                and (token != "i" or (out and out[-1] in _ROMAN_I_AFTER))
            ):
                token = str(_roman_to_int(token))
            elif self.config.plurals and token not in acronyms:
                token = _singular(token)
            out.append(token)
        return " ".join(out)


class WordRuns:
    """``normalize(" ".join(words[start:end]))`` for any run of a text's words (whitespace alone between them), made
    from each word's own key, read once (and remembered across texts in ``keys``): annotation reads every run of up
    to eight words of a text, so each word is normalized once rather than once per run. Where one word's reading
    depends on another's — a Roman "I" after "type", an acronym's "S" kept wherever its letters recur, a comma or a
    period — the run's words are normalized together."""

    def __init__(self, normalizer: Normalizer, words: Sequence[str], keys: MutableMapping[str, str]) -> None:
        self.normalizer, self.words = normalizer, words
        self.keys: list[str] = []
        roman, neighbourly = [0], [0]  # running counts, so that a run's are one subtraction
        for word in words:
            key = keys.get(word)
            if key is None:
                key = keys[word] = normalizer.normalize(word)
            self.keys.append(key)
            roman.append(roman[-1] + (key == "i" or key.startswith("i ")))  # "type I": read after the word before
            neighbourly.append(neighbourly[-1] + _reads_with_neighbours(word))
        self.roman, self.neighbourly = roman, neighbourly

    def key(self, start: int, end: int) -> str:
        if end <= start:
            return ""
        together = self.roman[end] > self.roman[start + 1] or (
            end - start > 1 and self.neighbourly[end] > self.neighbourly[start]
        )
        if together:
            return self.normalizer.normalize(" ".join(self.words[start:end]))
        return " ".join(key for key in self.keys[start:end] if key)


def _reads_with_neighbours(word: str) -> bool:
    if not word.isascii() and unicodedata.normalize("NFKC", word) != word:
        return True  # "ＡＩＤＳ" is an acronym and "🄁" a comma only once NFKC has read them
    return "," in word or "." in word or ("S" in word and _ACRONYM_RE.search(word) is not None)


def _uninvert(text: str) -> str:
    """``"infarction, myocardial"`` → ``"myocardial infarction"`` when the name has one comma followed by a short
    modifier; chemical locants such as ``"2,4-dienoyl"`` have no space after the comma and are left alone."""
    head, sep, tail = text.partition(", ")
    if not sep or "," in tail or "," in head:
        return text
    words = tail.split()
    if not words or len(words) > _INVERSION_MAX_WORDS or words[0] in _NOT_INVERTED_AFTER_COMMA:
        return text
    return f"{tail} {head}"


_DEFAULT = Normalizer()


def normalize(text: str) -> str:
    """Normalize with the default configuration."""
    return _DEFAULT.normalize(text)


def _normalize_chunk(piece: tuple[Normalizer, Sequence[str]]) -> list[str]:
    normalizer, texts = piece
    return [normalizer.normalize(text) for text in texts]
