"""Hard non-medical negatives: text that names no concept, for calibrating and checking the nil threshold.

Annotated corpora have few nil mentions (BC5CDR: 32 in train), so medlink makes its own of the kinds users send by
mistake: English function words ("the"), everyday nouns and phrases ("car keys", resources/negatives), and random
strings (keyboard mashes, letters and digits, control characters). Texts that are names of the terminology
("Water", "Sleep") are dropped: they are in it.

Two disjoint halves, so a threshold calibrated on one is checked on texts it never saw: words go to a half by a
stable hash, random strings come from a different seed per half.
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass
from importlib import resources

from medlink.linking.mentions.non_terms import function_words
from medlink.terminology import Terminology

HALVES = ("calibration", "held-out")
_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@dataclass(frozen=True)
class Negative:
    text: str
    kind: str  # "stop word", "everyday noun" or "random string"


def non_medical_negatives(
    terminology: Terminology, half: str = "calibration", random_count: int = 300, seed: int = 13
) -> list[Negative]:
    """One half of the negatives, without any text the terminology has as a name."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {', '.join(HALVES)}, not {half!r}")
    words = [Negative(word, "stop word") for word in sorted(function_words())]
    words += [Negative(noun, "everyday noun") for noun in everyday_nouns()]
    chosen = [negative for negative in words if _half_of(negative.text) == half]
    rng = random.Random(seed + HALVES.index(half))
    chosen += [Negative(random_string(rng), "random string") for _ in range(random_count)]
    return [n for n in chosen if n.text.strip() and not terminology.lookup(n.text)]


def everyday_nouns() -> list[str]:
    text = resources.files("medlink.resources").joinpath("negatives/everyday_nouns.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def random_string(rng: random.Random) -> str:
    """A keyboard mash ("asdfgh qwerty"), a run of letters and digits, or letters with control characters."""
    kind = rng.randrange(3)
    if kind == 0:
        words = []
        for _ in range(rng.randint(1, 3)):
            row = rng.choice(_KEYBOARD_ROWS)
            start = rng.randrange(len(row) - 3)
            words.append(row[start : start + rng.randint(3, len(row) - start)])
        return " ".join(words)
    if kind == 1:
        alphabet = string.ascii_lowercase + string.digits
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 12)))
    letters = [rng.choice(string.ascii_letters) for _ in range(rng.randint(2, 6))]
    return "".join(letter + chr(rng.randrange(32)) for letter in letters)


def _half_of(text: str) -> str:
    return HALVES[hashlib.sha256(text.encode()).digest()[0] % 2]
