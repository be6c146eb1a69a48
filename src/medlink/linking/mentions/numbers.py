"""Number agreement: a retrieved name that states another number than the mention gives way to one that agrees.

Dense encoders see "SCA1" and "SCA11", or "deficiency of the second component of complement" and "… of the third
component …", as near neighbours: a number is one token among many. For disease types, complement components and
gene-named disorders the number is the identity, so when the best candidate states a different number than the
mention and another candidate states the same numbers, scoring within a margin of the best, that one is taken.
Numbers are read from the normalized text (digits split from letters, Roman numerals already turned into digits)
and from ordinal words. A candidate without numbers never conflicts: "5-fluorouracil" may still link to
"Fluorouracil".
"""

from __future__ import annotations

from dataclasses import replace

from medlink.linking.results import LinkResult
from medlink.terminology import Terminology

_ORDINALS = {
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}


def numbers_in(key: str) -> frozenset[str]:
    """The numbers a normalized key states: digit tokens (leading zeros dropped) and ordinal words."""
    found = set()
    for token in key.split():
        if token.isdigit():
            found.add(token.lstrip("0") or "0")
        elif token in _ORDINALS:
            found.add(_ORDINALS[token])
    return frozenset(found)


def agree_on_numbers(result: LinkResult, key: str, terminology: Terminology, margin: float) -> LinkResult:
    """``result`` (a retrieval decision for the mention with normalized ``key``) switched to the best candidate
    whose numbers equal the mention's, when its own best name states other numbers and that candidate scores
    within ``margin`` of it; otherwise unchanged."""
    normalize = terminology.normalizer
    wanted = numbers_in(key)
    if not wanted or not result.candidates or result.score is None or result.several:
        return result
    best = result.candidates[0]
    stated = numbers_in(normalize(best.name))
    if not stated or stated == wanted:
        return result
    for candidate in result.candidates[1:]:
        if candidate.score < best.score - margin:
            break
        if numbers_in(normalize(candidate.name)) == wanted:
            tied = [c for c in result.candidates if c.name == candidate.name and c.score == candidate.score]
            rest = [c for c in result.candidates if c not in tied]
            return replace(
                result,
                concepts=tuple(c.concept_id for c in tied),
                score=candidate.score,
                matched_name=candidate.name,
                candidates=(*tied, *rest),
                preferred_names=tuple(terminology.concept_preferred_name(c.concept_id) for c in tied),
                reason=f"{result.reason}; {best.name!r} states {_listed(stated)}, the mention {_listed(wanted)}, so "
                f"{candidate.name!r} ({candidate.score:.3f}) is taken",
            )
    return result


def _listed(numbers: frozenset[str]) -> str:
    return ", ".join(sorted(numbers, key=lambda n: (len(n), n)))
