"""Clinical shorthand: short forms that clinical text uses without defining them ("T2DM", "HTN", "breast ca").

A document's own definitions ("... Wilson disease (WD) ...") are found by :mod:`medlink.linking.mentions.abbreviations`;
these are the ones no document defines. Most spell nothing a terminology knows, so dense retrieval guesses from
their letters: "T2DM" came out as the fungicide Thiram, "MI" as Michigan, "HTN" as serotonin. The lexicon says what
each stands for; the linker searches the spelled-out text beside the mention as written and keeps whichever links
better (:meth:`medlink.linking.Linker` with ``LinkerConfig.shorthand``).

Lexicon file: ``short<TAB>long[<TAB>inside]``, ``#`` comments; ``inside`` marks a short form expanded only within a
longer mention ("breast ca" is breast cancer, a lone "ca" is calcium). Matching is by whole token, case-sensitive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from medlink.errors import MedlinkError
from medlink.linking.results import LinkResult, Stage

_WORD = re.compile(r"[A-Za-z0-9]+")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")  # "A-fib" is one short form; "anti-GBM" holds one


@dataclass(frozen=True)
class ShorthandLexicon:
    """``anywhere``: short forms expanded wherever they stand; ``inside``: only within a longer mention."""

    anywhere: MappingProxyType[str, str]
    inside: MappingProxyType[str, str]

    def expand(self, text: str) -> str:
        """``text`` with each listed short form (a whole token, or a whole part of a hyphenated one) spelled out;
        ``text`` itself when none is."""
        alone = len(_WORD.findall(text)) == 1

        def lookup(token: str) -> str | None:
            return self.anywhere.get(token) or (None if alone else self.inside.get(token))

        def spelled(match: re.Match[str]) -> str:
            token = match.group()
            if (long := lookup(token)) is not None:
                return long
            return "-".join(lookup(part) or part for part in token.split("-")) if "-" in token else token

        return _TOKEN.sub(spelled, text)


def read_shorthand(path: Path) -> ShorthandLexicon:
    """A lexicon file; a malformed line is an error naming the file and line."""
    anywhere: dict[str, str] = {}
    inside: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3) or not fields[0].strip() or not fields[1].strip():
            raise MedlinkError(f"{path}, line {number}: expected 'short<TAB>long[<TAB>inside]', got {line!r}")
        if len(fields) == 3 and fields[2] != "inside":
            raise MedlinkError(f"{path}, line {number}: the third field can only be 'inside', not {fields[2]!r}")
        short = fields[0].strip()
        if not _TOKEN.fullmatch(short):
            raise MedlinkError(
                f"{path}, line {number}: a short form is one token of letters and digits (hyphens "
                f"inside allowed), not {short!r}"
            )
        (inside if len(fields) == 3 else anywhere)[short] = fields[1].strip()
    return ShorthandLexicon(MappingProxyType(anywhere), MappingProxyType(inside))


@cache
def shorthand_lexicon(extra: Path | None = None) -> ShorthandLexicon:
    """medlink's lexicon, with the entries of ``extra`` (a file of the same format) added and taking precedence;
    each file is read once per process."""
    lexicon = default_shorthand()
    if extra is None:
        return lexicon
    own = read_shorthand(Path(extra))
    return ShorthandLexicon(
        MappingProxyType({**lexicon.anywhere, **own.anywhere}), MappingProxyType({**lexicon.inside, **own.inside})
    )


@cache
def default_shorthand() -> ShorthandLexicon:
    """The lexicon shipped with medlink (``resources/clinical-shorthand/shorthand.tsv``), read once per process."""
    from medlink.resources import resource_path

    return read_shorthand(resource_path("clinical-shorthand") / "shorthand.tsv")


def links_better(spelled: LinkResult, written: LinkResult) -> bool:
    """Whether the spelled-out mention's result beats the written one's: a name the terminology holds as written
    stands ("ITP" is a MeSH name), an exact match of the spelled-out text wins, else the higher retrieval score."""
    if not spelled.concepts or written.stage is Stage.EXACT:
        return False
    if spelled.stage is Stage.EXACT or not written.concepts:
        return True
    return (spelled.score or 0.0) > (written.score or 0.0)
