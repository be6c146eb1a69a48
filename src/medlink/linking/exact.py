"""The exact-match sieve: a mention whose normalized text equals a normalized terminology name.

It is the first sieve of every pipeline because it is both the most precise and free: no encoder call. All
concepts sharing the name are returned, ordered by :meth:`Terminology.lookup_normalized`.
"""

from __future__ import annotations

from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.terminology import Terminology

EXACT_SCORE = 1.0


class ExactSieve:
    """Links normalized keys to the concepts that have a name with the same key."""

    stage = Stage.EXACT

    def __init__(self, terminology: Terminology) -> None:
        self.terminology = terminology

    def link(self, mention: str, key: str) -> LinkResult | None:
        matches = self.terminology.lookup_normalized(key)
        if not matches:
            return None
        concepts = tuple(match.concept_id for match in matches)
        shared = f", shared by {len(concepts)} concepts" if len(concepts) > 1 else ""
        return LinkResult(
            mention=mention,
            concepts=concepts,
            stage=self.stage,
            score=EXACT_SCORE,
            matched_name=matches[0].name,
            preferred_names=tuple(self.terminology.concept_preferred_name(cid) for cid in concepts),
            candidates=tuple(Candidate(match.concept_id, match.name, EXACT_SCORE) for match in matches),
            reason=f"normalized text equals the {matches[0].kind.value} name {matches[0].name!r}{shared}",
        )
