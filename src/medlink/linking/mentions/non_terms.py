"""Text that is not a term at all, declared nil before any sieve searches for it.

A nearest-neighbour search always finds something: "the" → Camellia (0.69), "x\\0y\\1" → Klinefelter Syndrome.
A score threshold catches most such text, but function words and binary garbage are cheaper and surer to catch by
what they are. Applied only while a nil threshold is in force (``--nil-threshold 0`` keeps every link), and never
to a text the terminology has as a name.
"""

from __future__ import annotations

from functools import cache

from medlink.linking.results import NilCause
from medlink.resources import FUNCTION_WORDS, resource_path
from medlink.terminology import Terminology

# Whitespace control characters are ordinary in extracted text; the other C0 ones (and DEL) come from binary data.
_TEXT_CONTROLS = frozenset("\t\n\r\x0b\x0c")


@cache
def function_words() -> frozenset[str]:
    """English function words, shipped with medlink (resources/function-words/: scikit-learn's English stop words
    without the content words among them), read once per process."""
    path = resource_path(FUNCTION_WORDS)
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def control_characters(text: str) -> str | None:
    """Why ``text`` (as given, before normalization strips them) is not text to link, if it holds binary
    control characters."""
    found = sorted({f"U+{ord(c):04X}" for c in text if (ord(c) < 32 or ord(c) == 127) and c not in _TEXT_CONTROLS})
    return f"the mention contains control characters ({', '.join(found)}), so it is not a term" if found else None


def not_a_term(key: str) -> str | None:
    """Why a normalized mention is not a term, or ``None``: only function words, or no letters at all."""
    tokens = key.split()
    if not any(character.isalpha() for character in key):
        return f"{key!r} has no letters, so it is not a term"
    if all(token in function_words() for token in tokens):
        return f"{key!r} is only function words (stop words), so it is not a term"
    return None


def why_not_a_term(text: str, terminology: Terminology) -> str | None:
    """What the linker says of ``text`` before searching, while a nil threshold is in force (``None``: search)."""
    if why := control_characters(text):
        return why
    key = terminology.normalizer(text)
    return not_a_term(key) if key and not terminology.has_normalized(key) else None


def refusal(text: str, max_chars: int, declares_nil: bool) -> tuple[NilCause, str] | None:
    """Why ``text`` is not linked at all, before any work is spent on it: longer than ``max_chars`` (0: no limit),
    or binary data (the latter only while nil is declared)."""
    if max_chars and len(text) > max_chars:
        return NilCause.TOO_LONG, (
            f"the mention has {len(text):,} characters, more than the limit of "
            f"{max_chars:,} (LinkerConfig.max_mention_chars): no term is that long"
        )
    why = control_characters(text) if declares_nil else None
    return (NilCause.NOT_A_TERM, why) if why else None
