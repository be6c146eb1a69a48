"""Restricting a link to branches of a terminology's hierarchy: MeSH tree branches ("C" Diseases, "F03" Mental
Disorders, "D" Chemicals and Drugs) or any tree-number prefix.

A concept is in scope when one of its tree numbers starts with an allowed prefix; a concept with no tree number of
its own (a MeSH supplementary record) is in scope when one of its parents is (its mapped descriptors). Text alone
cannot tell "Cryptococcus" the organism from a disease, nor "Kidney Transplantation" from a condition: when a
field of a record can only hold diseases, the best in-scope concept among what the linker considered is kept, and
a result with none is nil, saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from medlink.errors import MedlinkError
from medlink.linking.results import LinkResult, NilCause, Stage
from medlink.terminology import Terminology

# What ``--entity-type`` restricts to in MeSH: diseases are C plus F03 (mental disorders); chemicals and drugs D.
ENTITY_BRANCHES: dict[str, tuple[str, ...]] = {
    "disease": ("C", "F03"),
    "chemical": ("D",),
    "drug": ("D",),
    "anatomy": ("A",),
    "organism": ("B",),
    "procedure": ("E",),
    "phenomenon": ("G",),
}


def branches_for(entity_type: str) -> tuple[str, ...]:
    """The MeSH branches of an entity type (case-insensitive; ``Disease``, ``Chemical``, …)."""
    try:
        return ENTITY_BRANCHES[entity_type.casefold()]
    except KeyError:
        known = ", ".join(sorted(ENTITY_BRANCHES))
        raise MedlinkError(
            f"no branches known for the kind {entity_type!r}: use one of {known}, or tree-number prefixes (C, F03)"
        ) from None


def branch_prefixes(items: Sequence[str]) -> tuple[str, ...]:
    """Tree-number prefixes for ``items``: a kind of concept ("Disease", any case) as its MeSH branches, a prefix
    ("C", "F03", "C04.588") as itself. A word that is neither ("Diseases", "DISEASES": a prefix longer than one
    letter has digits) is refused, naming the known kinds, rather than silently matching nothing."""
    prefixes: list[str] = []
    for item in items:
        if item.casefold() in ENTITY_BRANCHES:
            prefixes += ENTITY_BRANCHES[item.casefold()]
        elif len(item) > 1 and not any(character.isdigit() for character in item):
            branches_for(item)  # raises
        else:
            prefixes.append(item)
    return tuple(prefixes)


def type_scope(terminology: Terminology, entity_type: str) -> BranchScope | None:
    """The branches of a mention's entity type, or ``None`` when the type has none known or the terminology has no
    tree numbers (the type then changes nothing)."""
    branches = ENTITY_BRANCHES.get(entity_type.casefold())
    if not branches:
        return None
    try:
        return BranchScope(terminology, branches)
    except MedlinkError:  # no tree numbers to place concepts by
        return None


def has_tree_numbers(terminology: Terminology) -> bool:
    """Whether branches can restrict this terminology (MeSH descriptors have tree numbers; MEDIC's TSV does not).
    Asked of the column as it is (Arrow, for a compiled terminology): a Python list of every concept's tree
    numbers cost 26 MB for MeSH, in every worker process, to answer yes."""
    column = terminology.concepts.raw("tree_numbers")
    if isinstance(column, list):
        return any(column)
    import pyarrow.compute as pc

    return bool(pc.max(pc.list_value_length(column)).as_py() or 0)


@dataclass
class BranchScope:
    """The concepts of ``terminology`` under the tree-number ``prefixes``."""

    terminology: Terminology
    prefixes: tuple[str, ...]
    _allowed: dict[str, bool] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.prefixes = branch_prefixes(self.prefixes)
        if not self.prefixes:
            raise ValueError("a branch scope needs at least one tree-number prefix")
        if not has_tree_numbers(self.terminology):
            raise MedlinkError(
                "this terminology has no tree numbers to restrict by branch (MeSH descriptors have "
                "them; MEDIC's TSV and most vocabularies do not)"
            )

    def allows(self, concept_id: str) -> bool:
        if concept_id not in self._allowed:
            self._allowed[concept_id] = self._in_scope(concept_id, depth=0)
        return self._allowed[concept_id]

    def _in_scope(self, concept_id: str, depth: int) -> bool:
        try:
            tree_numbers = self.terminology.tree_numbers(concept_id)  # read alone: a concept reads all its names
        except KeyError:
            return False
        if tree_numbers:
            return any(number.startswith(self.prefixes) for number in tree_numbers)
        return depth < 2 and any(self._in_scope(parent, depth + 1) for parent in self.terminology.parents(concept_id))

    def restrict_outcomes(self, outcomes: Sequence[LinkResult | None]) -> list[LinkResult | None]:
        """A sieve's outcomes restricted to the scope; one with nothing there passes its mention on (``None``)."""
        restricted: list[LinkResult | None] = []
        for outcome in outcomes:
            kept = self.restrict(outcome) if outcome is not None else None
            restricted.append(None if kept is not None and not kept.concepts else kept)
        return restricted

    def restrict(self, result: LinkResult) -> LinkResult:
        """``result`` with only its in-scope concepts; when it has none, its best in-scope candidate; else nil."""
        if not result.concepts:
            return result
        kept = tuple(c for c in result.concepts if self.allows(c))
        if kept == result.concepts:
            return result
        if kept:
            return replace(result, concepts=kept, preferred_names=self._names(kept))
        for candidate in result.candidates:
            if self.allows(candidate.concept_id):
                concepts = (candidate.concept_id,)
                return replace(
                    result,
                    concepts=concepts,
                    preferred_names=self._names(concepts),
                    several=False,
                    score=candidate.score,
                    matched_name=candidate.name,
                    reason=f"{result.reason}; best candidate in branches {','.join(self.prefixes)}: "
                    f"{candidate.name!r} ({candidate.score:.3f})",
                )
        return replace(
            result,
            concepts=(),
            preferred_names=(),
            stage=Stage.NIL,
            several=False,
            nil_cause=NilCause.OUT_OF_SCOPE,
            reason=f"{result.reason}; nothing it found is in branches {','.join(self.prefixes)}",
        )

    def prefer(self, result: LinkResult, why: str) -> LinkResult:
        """An exact result shared by several concepts with its in-scope concepts first (the others stay, as
        alternatives): "mpox" given as a Chemical is the record MPOX before the disease."""
        if result.stage is not Stage.EXACT or len(result.concepts) < 2 or result.several:
            return result
        inside = [c for c in result.concepts if self.allows(c)]
        if not inside or inside[0] == result.concepts[0]:
            return result
        concepts = (*inside, *(c for c in result.concepts if c not in inside))
        names = dict(zip(result.concepts, result.preferred_names, strict=False))
        matched = next((c.name for c in result.candidates if c.concept_id == concepts[0]), result.matched_name)
        return replace(
            result,
            concepts=concepts,
            preferred_names=tuple(names.get(c, "") for c in concepts),
            matched_name=matched,
            reason=f"{result.reason}; {why}: {matched!r} comes first",
        )

    def _names(self, concepts: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.terminology.concept_preferred_name(c) for c in concepts)
