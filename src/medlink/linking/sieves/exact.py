"""The exact-match sieve: a mention whose normalized text equals a normalized terminology name.

It is the first sieve of every pipeline because it is both the most precise and free: no encoder call. All
concepts sharing the name are returned, ordered by :meth:`Terminology.lookup_normalized`; :func:`prefer_literal`
then puts first the concepts whose name is written as the mention itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from medlink.index.entries import IndexEntry
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.terminology import NameMatch, Terminology

EXACT_SCORE = 1.0


class ExactSieve:
    """Links normalized keys to the concepts that have a name with the same key.

    With ``mentions`` (the ``D`` entries of an index), an annotated training mention with the same normalized
    text decides first: the annotators' choice for that exact string is the most precise evidence there is.
    ``synonyms`` are names added to an index after it was built (``medlink index add``), matched after the
    terminology's own names.
    """

    stage = Stage.EXACT
    name = "exact"

    def __init__(
        self, terminology: Terminology, mentions: Iterable[IndexEntry] = (), synonyms: Iterable[IndexEntry] = ()
    ) -> None:
        self.terminology = terminology
        self.mentions = {entry.key: entry for entry in mentions}
        self.synonyms = {entry.key: entry for entry in synonyms}

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        return [self.link(text, key) for text, key in items]

    def link(self, mention: str, key: str) -> LinkResult | None:
        annotated = self.mentions.get(key)
        if annotated is not None:
            return self._entry_result(mention, annotated, "D", "the annotated training mention")
        matches = self.terminology.lookup_normalized(key)
        if not matches:
            added = self.synonyms.get(key)
            return self._entry_result(mention, added, "O", "the added synonym") if added else None
        return name_result(self.terminology, mention, matches)

    def _entry_result(self, mention: str, entry: IndexEntry, strategy: str, what: str) -> LinkResult:
        return LinkResult(
            mention=mention,
            concepts=entry.concepts,
            stage=self.stage,
            score=EXACT_SCORE,
            matched_name=entry.text,
            preferred_names=tuple(self.terminology.concept_preferred_name(c) for c in entry.concepts),
            candidates=tuple(Candidate(c, entry.text, EXACT_SCORE) for c in entry.concepts),
            strategy=strategy,
            several=entry.several,
            reason=f"normalized text equals {what} {entry.text!r}"
            + (", annotated with all of these concepts" if entry.several else ""),
        )


def name_result(terminology: Terminology, mention: str, matches: Sequence[NameMatch]) -> LinkResult:
    """The exact result for terminology names that ``mention`` normalizes to, best-ranked name first."""
    concepts = tuple(match.concept_id for match in matches)
    shared = f", shared by {len(concepts)} concepts" if len(concepts) > 1 else ""
    return LinkResult(
        mention=mention,
        concepts=concepts,
        stage=Stage.EXACT,
        score=EXACT_SCORE,
        matched_name=matches[0].name,
        preferred_names=tuple(terminology.concept_preferred_name(cid) for cid in concepts),
        candidates=tuple(Candidate(match.concept_id, match.name, EXACT_SCORE) for match in matches),
        strategy="O",
        reason=f"normalized text equals the {matches[0].kind.value} name {matches[0].name!r}{shared}",
    )


def prefer_written_name(result: LinkResult, mention: str, terminology: Terminology) -> LinkResult:
    """A training mention that matched only after normalization gives way to a terminology name written as the
    mention, for another concept: "amphetamines" is MeSH's class Amphetamines, though "amphetamine" was annotated as
    the compound. Per mention after the cache, like :func:`prefer_literal`."""
    literal = _literal(mention)
    if result.stage is not Stage.EXACT or result.strategy != "D" or _literal(result.matched_name or "") == literal:
        return result
    written = [m for m in terminology.lookup(mention) if _literal(m.name) == literal]
    if not written or any(m.concept_id in result.concepts for m in written):
        return result
    chosen = name_result(terminology, mention, written)
    return replace(
        chosen,
        reason=f"{chosen.reason}, written as the mention (the training mention "
        f"{result.matched_name!r} only normalizes alike)",
    )


def prefer_literal(result: LinkResult, mention: str, terminology: Terminology | None = None) -> LinkResult:
    """An exact result shared by several concepts, reordered so the concepts whose name is ``mention`` itself (up
    to case and spacing) come first: "phenothiazines" names MeSH's Phenothiazines before the supplementary
    "phenothiazine", which normalizes alike. Then, with ``terminology``, concepts placed in its hierarchy by tree
    numbers of their own (MeSH descriptors) before those without (supplementary records): "mpox" is the disease
    Mpox before the chemical record MPOX, which stays listed as an alternative. Applied per mention after the
    cache, which keys on the normalized text, so the order never depends on which spelling the linker met first."""
    if result.stage is not Stage.EXACT or len(result.candidates) < 2 or result.several or not result.concepts:
        return result
    literal = _literal(mention)

    def placed(concept_id: str) -> bool:  # tree numbers alone: a whole concept reads its relations too
        try:
            return terminology is None or bool(terminology.tree_numbers(concept_id))
        except KeyError:
            return True

    rank = [(_literal(c.name) != literal, not placed(c.concept_id)) for c in result.candidates]
    order = sorted(range(len(result.candidates)), key=rank.__getitem__)
    candidates = tuple(result.candidates[i] for i in order)
    # only the concepts the result holds: a branch scope may have dropped some candidates' concepts
    concepts = tuple(dict.fromkeys(c.concept_id for c in candidates if c.concept_id in result.concepts))
    first = next(i for i in order if result.candidates[i].concept_id == concepts[0])
    name = result.candidates[first].name
    if concepts[:1] == result.concepts[:1]:  # the same first concept, named by its own candidate
        return result if name == result.matched_name else replace(result, matched_name=name)
    names = dict(zip(result.concepts, result.preferred_names, strict=False))
    why = (
        "is written as the mention"
        if rank[first][0] != rank[0][0]
        else "is a descriptor (descriptors come before supplementary records)"
    )
    return replace(
        result,
        concepts=concepts,
        candidates=candidates,
        matched_name=name,
        preferred_names=tuple(names.get(c, "") for c in concepts),
        reason=f"{result.reason}; {name!r} {why}, so its concept comes first",
    )


def _literal(text: str) -> str:
    return " ".join(text.casefold().split())
