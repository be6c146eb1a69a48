"""Synonyms borrowed from a richer terminology through a name both share.

Small vocabularies often give one name per concept: CADEC's SNOMED CT subset says "myalgia", and a patient writes
"muscle soreness", which MeSH lists under Myalgia. When a concept's name is exactly a name of one concept of the
donor (normalized match, the linker's exact sieve), that donor concept's other names are added to it; this is
how UMLS gathers synonyms across sources, done here for one pair. The rules keep the concept's meaning:

- only names that mean the concept count, both to match and to borrow: preferred names, exact synonyms, entry terms
  and abbreviations, never an OBO ontology's related, broader or narrower synonyms;
- a concept borrows only when all of its names that the donor knows point to one donor concept;
- a donor concept lends to one concept only (two concepts sharing it would share its names);
- a borrowed name that the terminology already holds, or that two concepts would borrow, is left out, so
  borrowing never makes a name ambiguous or moves one from its concept.

Ids, parents and preferred names are untouched; a borrowed preferred name becomes an exact synonym.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from medlink.terminology.records import Concept, Name, NameKind
from medlink.terminology.terminology import SourceInfo, Terminology

# The name kinds that say "this concept": matched and lent. Related, broader and narrower names are neither.
SYNONYM_KINDS = frozenset(
    {NameKind.PREFERRED, NameKind.EXACT, NameKind.ENTRY_TERM, NameKind.PERMUTED, NameKind.ABBREVIATION}
)


@dataclass(frozen=True)
class BorrowingReport:
    """What borrowing added: how many concepts found a donor concept, and how many names they gained."""

    concepts: int
    names: int


def borrow_synonyms(
    terminology: Terminology, donor: Terminology, donor_label: str = "donor"
) -> tuple[Terminology, BorrowingReport]:
    """``terminology`` with the names of the ``donor`` concepts its concepts share a name with. ``donor_label``
    names the donor in the terminology's sources; the donor's fingerprint enters the terminology's, so an index of
    the plain terminology is never taken for the enriched one."""
    normalize = terminology.normalizer
    lender_of = _lenders(terminology, donor)
    held = set(terminology.normalized_names())
    offered: dict[str, set[str]] = defaultdict(set)  # normalized borrowed name -> the concepts it would join
    for concept_id, donor_id in lender_of.items():
        for name in _synonyms(donor, donor_id):
            offered[normalize(name.text)].add(concept_id)
    concepts: list[Concept] = []
    borrowed_names = 0
    for concept in terminology:
        lender = lender_of.get(concept.id)
        extra: list[Name] = []
        if lender is not None:
            seen = {normalize(name.text) for name in concept.names}
            for name in _synonyms(donor, lender):
                key = normalize(name.text)
                if key and key not in held and key not in seen and len(offered[key]) == 1:
                    seen.add(key)
                    kind = NameKind.EXACT if name.kind is NameKind.PREFERRED else name.kind
                    extra.append(Name(name.text, kind))
        borrowed_names += len(extra)
        concepts.append(replace(concept, names=concept.names + tuple(extra), relations=()))
    report = BorrowingReport(concepts=len(lender_of), names=borrowed_names)
    source = SourceInfo(
        path=f"synonyms from {donor_label}",
        format="borrowed synonyms",
        sha256=donor.fingerprint(),
        size=0,
        concepts=report.concepts,
    )
    enriched = Terminology.from_concepts(concepts, terminology.relations(), (*terminology.sources, source), normalize)
    return enriched, report


def _lenders(terminology: Terminology, donor: Terminology) -> dict[str, str]:
    """Concept id -> the one donor concept its names point to, kept only where no other concept points there."""
    candidate: dict[str, str] = {}
    for concept in terminology:
        found = {
            match.concept_id
            for name in concept.names
            if name.kind in SYNONYM_KINDS
            for match in donor.lookup(name.text)
            if match.kind in SYNONYM_KINDS
        }
        if len(found) == 1:
            candidate[concept.id] = found.pop()
    claimants: dict[str, int] = defaultdict(int)
    for donor_id in candidate.values():
        claimants[donor_id] += 1
    return {concept_id: donor_id for concept_id, donor_id in candidate.items() if claimants[donor_id] == 1}


def _synonyms(terminology: Terminology, concept_id: str) -> list[Name]:
    return [name for name in terminology.names_of(concept_id) if name.kind in SYNONYM_KINDS]
