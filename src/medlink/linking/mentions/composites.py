"""Splitting composite mentions into the parts that each name one concept (Miftahutdinov et al. §5.1).

Three shapes:

- explicit combinations, split on "combination of", "combined with", "in combination with", "plus", "vs",
  "versus" and "+": "combination of ribociclib + capecitabine" → "ribociclib", "capecitabine". A bare
  "combined" is not a marker: it belongs to names such as "severe combined immunodeficiency";
- coordinated modifiers sharing a head: "breast and ovarian cancer" → "breast cancer", "ovarian cancer";
  "colorectal, endometrial, or ovarian cancers" → three parts. Bare pairs ("nausea and vomiting") split too. A
  head that starts with a number belongs to the last conjunct alone: "hypertension and type 2 diabetes" is
  "hypertension" and "type 2 diabetes", not "hypertension 2 diabetes";
- coordinated names, when the terminology says so (``is_name``): "Multiple Myeloma and Plasma Cell Neoplasm",
  "gemcitabine, capecitabine, sorafenib" → each conjunct whole, when every conjunct is a name. Only where no
  one-word modifier could share a head (in "brain and central nervous system tumors", "brain" is a name too,
  anatomy, yet it modifies "tumors"), and two parts only with a conjunction ("Infection, Lung" is inverted).

The linker splits only mentions that do not match a name exactly ("Hand, Foot and Mouth Disease" stays whole).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from medlink.linking.results import LinkResult, Stage
from medlink.terminology import Terminology

# The text's blanks are made single first, and the parts stripped after: no \s* runs over a run of spaces.
_COMBINATION = re.compile(
    r"(?:\bin combination with\b|\bcombined with\b|\bcombination of\b|\bplus\b|"
    r"\bversus\b|\bvs\.?(?=\s|$)|\+)",
    re.IGNORECASE,
)
AND_OR = r"(?:and/or|and|or)"  # the conjunctions of a coordination (also read in running text)
_COORDINATION = re.compile(
    rf"^(?P<modifiers>(?:[\w-]+,\s+)*[\w-]+,?)\s+{AND_OR}\s+(?P<last>[\w-]+)"
    r"(?P<head>(?:\s+[\w-]+)*)$",
    re.IGNORECASE,
)
_CONJUNCTS = re.compile(rf"\s*,\s*{AND_OR}\s+|\s*,\s*|\s+{AND_OR}\s+", re.IGNORECASE)
_CONJUNCTION = re.compile(rf"\s{AND_OR}\s", re.IGNORECASE)
NUMBERED = re.compile(r"^(?:\d|[ivx]+\b)", re.IGNORECASE)  # a head that belongs to its last conjunct


def split_composite(text: str, is_name: Callable[[str], bool] | None = None) -> list[str] | None:
    """The parts of a composite mention, or ``None`` when it names one thing. With ``is_name`` (does the
    terminology hold this text as a name?), coordinated multi-word names are split whole."""
    text = " ".join(text.split())
    parts = [part.strip(" ,;") for part in _COMBINATION.split(text) if part and part.strip(" ,;")]
    if len(parts) > 1:
        return parts
    text = text.strip()
    shared = _shared_head_parts(text)
    if shared is None and is_name is not None:  # no one-word modifiers to share a head: whole names, or nothing
        conjuncts = [part for part in _CONJUNCTS.split(text) if part]
        # two parts need a conjunction: "Infection, Lung" is an inverted name, though "lung" is a name (anatomy)
        listed = len(conjuncts) > 2 or (len(conjuncts) == 2 and _CONJUNCTION.search(text) is not None)
        if listed and all(is_name(conjunct) for conjunct in conjuncts):
            return conjuncts
    return shared


def _shared_head_parts(text: str) -> list[str] | None:
    """ "breast and ovarian cancer" → "breast cancer", "ovarian cancer"; ``None`` when the text is no coordination
    of one-word modifiers."""
    match = _COORDINATION.match(text)
    if match is None:
        return None
    modifiers = [m.strip(" ,") for m in match.group("modifiers").split(",") if m.strip(" ,")]
    head = match.group("head").strip()
    if NUMBERED.match(head):  # "type 2 diabetes": "type" names nothing without its number
        return [*modifiers, f"{match.group('last')} {head}"]
    conjuncts = [*modifiers, match.group("last")]
    return [f"{conjunct} {head}".strip() for conjunct in conjuncts]


def composite_result(
    text: str, parts: Sequence[str], part_results: Sequence[LinkResult], preferred_name: Callable[[str], str]
) -> LinkResult | None:
    """``text`` linked as its ``parts`` (each part's result, in order): every part's best concept; ``None`` when a
    part links to nothing (the mention is then treated as one name)."""
    part_results = tuple(replace(result, mention=part) for part, result in zip(parts, part_results, strict=True))
    if any(not result.concepts for result in part_results):
        return None
    concepts = tuple(dict.fromkeys(result.concepts[0] for result in part_results))
    return LinkResult(
        mention=text,
        concepts=concepts,
        stage=Stage.COMPOSITE,
        score=min(result.score or 0.0 for result in part_results),
        preferred_names=tuple(preferred_name(concept) for concept in concepts),
        several=True,
        parts=part_results,
        reason=f"composite mention split into {len(parts)} parts: " + "; ".join(parts),
    )


def linked_composites(
    pending: Sequence[tuple[str, str]],
    terminology: Terminology,
    is_name: Callable[[str], bool],
    most: int,
    link_parts: Callable[[list[str]], list[LinkResult]],
) -> dict[str, LinkResult]:
    """Results for the ``pending`` mentions (normalized key, text) that match no name, split into at most ``most``
    parts, and whose parts all link; the parts of all are linked in one call of ``link_parts``."""
    text_of = dict(pending)
    splits = {
        key: parts
        for key, text in pending
        if not terminology.has_normalized(key) and (parts := split_composite(text, is_name)) and len(parts) <= most
    }
    if not splits:
        return {}
    part_texts = list(dict.fromkeys(part for parts in splits.values() for part in parts))
    linked = dict(zip(part_texts, link_parts(part_texts), strict=True))
    name = terminology.concept_preferred_name
    return {
        key: result
        for key, parts in splits.items()
        if (result := composite_result(text_of[key], parts, [linked[part] for part in parts], name)) is not None
    }
