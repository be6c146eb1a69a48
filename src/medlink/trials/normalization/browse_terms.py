"""Scoring normalized trials against the MeSH terms NLM's algorithm assigned (``condition_browse``,
``intervention_browse``): a silver standard, since NLM's algorithm is imperfect and adds tree ancestors.

Per record, the browse terms (MeSH headings, by name) are resolved to concept ids in a MeSH terminology, and:

- a predicted concept counts as correct when it, or one of its MeSH tree ancestors, is a browse term (NLM adds
  ancestors, so a more specific correct descriptor is not penalized);
- a browse term counts as found when it is predicted or is an ancestor of a predicted concept.

Micro precision, recall and F1 are summed over records, per field; intervention predictions are also counted per
intervention type (precision only: the browse terms belong to the record, not to one intervention). NLM's
intervention terms are all Chemicals and Drugs [D] (or supplementary records mapped there), so a procedure linked
to a MeSH procedure concept can never be right against them: ``interventions_in_scope`` scores only the predictions
inside that scope, beside ``interventions``, which scores all. Browse terms
the terminology cannot resolve are reported and still count as missed.

Records are split by a hash of their NCT id (:func:`split_of`): tune on ``train``, report ``test`` once.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from medlink.linking.mentions.branches import BranchScope
from medlink.terminology import NameKind, Terminology
from medlink.trials.normalization.normalizer import LinkedText, NormalizedTrial
from medlink.trials.records import TrialRecord

SPLITS = ("train", "test", "all")
_TEST_SHARE = 3  # of 10: records whose NCT id hashes to 0-2 are the test split


def split_of(nct_id: str) -> str:
    return "test" if zlib.crc32(nct_id.encode()) % 10 < _TEST_SHARE else "train"


def in_split(records: Iterable[TrialRecord], split: str) -> Iterable[TrialRecord]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    return (r for r in records if split == "all" or split_of(r.nct_id) == split)


@dataclass
class Tally:
    predicted: int = 0
    correct: int = 0
    gold: int = 0
    found: int = 0

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, Any]:
        rates = {"precision": self.precision, "recall": self.recall, "f1": self.f1}
        counts = {"predicted": self.predicted, "correct": self.correct, "gold": self.gold, "found": self.found}
        return {**{name: round(value, 4) for name, value in rates.items()}, **counts}


@dataclass
class BrowseEvaluation:
    records: int = 0
    conditions: Tally = field(default_factory=Tally)
    interventions: Tally = field(default_factory=Tally)
    interventions_in_scope: Tally = field(default_factory=Tally)  # predictions in Chemicals and Drugs [D] only
    by_type: dict[str, Tally] = field(default_factory=dict)
    unresolved: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "conditions": self.conditions.to_dict(),
            "interventions": self.interventions.to_dict(),
            "interventions_in_scope": self.interventions_in_scope.to_dict(),
            "interventions_by_type": {kind: _precision_only(tally) for kind, tally in sorted(self.by_type.items())},
            "unresolved_browse_terms": sum(self.unresolved.values()),
        }


def _precision_only(tally: Tally) -> dict[str, Any]:
    return {"precision": round(tally.precision, 4), "predicted": tally.predicted, "correct": tally.correct}


class BrowseScorer:
    """Resolves browse terms and ancestors in ``mesh`` (a MeSH terminology: descriptors, and supplementary
    records to resolve intervention terms that name them)."""

    def __init__(self, mesh: Terminology, intervention_branches: tuple[str, ...] = ("D",)) -> None:
        self.mesh = mesh
        self.intervention_scope = BranchScope(mesh, intervention_branches)
        self._ancestors: dict[str, frozenset[str]] = {}
        self._ids: dict[str, str | None] = {}

    def resolve(self, term: str) -> str | None:
        if term not in self._ids:
            matches = self.mesh.lookup(term)
            preferred = [m for m in matches if m.kind is NameKind.PREFERRED] or matches
            self._ids[term] = preferred[0].concept_id if preferred else None
        return self._ids[term]

    def ancestors(self, concept_id: str) -> frozenset[str]:
        if concept_id not in self._ancestors:
            known = self.mesh.resolve(concept_id)
            self._ancestors[concept_id] = frozenset(self.mesh.ancestors(known)) if known else frozenset()
        return self._ancestors[concept_id]

    def gold_ids(self, browse: Sequence[str]) -> set[str]:
        return {concept for term in browse if (concept := self.resolve(term)) is not None}

    def is_correct(self, concept: str, gold: set[str]) -> bool:
        return concept in gold or bool(self.ancestors(concept) & gold)

    def score(self, pairs: Iterable[tuple[TrialRecord, NormalizedTrial]]) -> BrowseEvaluation:
        evaluation = BrowseEvaluation()
        for record, trial in pairs:
            evaluation.records += 1
            self._tally(evaluation.conditions, trial.conditions, record.condition_browse, evaluation.unresolved)
            self._tally(
                evaluation.interventions,
                trial.interventions,
                record.intervention_browse,
                evaluation.unresolved,
                evaluation.by_type,
            )
            in_scope = [
                replace(item, concepts=tuple(c for c in item.concepts if self.intervention_scope.allows(c)))
                for item in trial.interventions
            ]
            self._tally(evaluation.interventions_in_scope, in_scope, record.intervention_browse, Counter())
        return evaluation

    def _tally(
        self,
        tally: Tally,
        linked: Sequence[LinkedText],
        browse: Sequence[str],
        unresolved: Counter[str],
        by_type: dict[str, Tally] | None = None,
    ) -> None:
        gold = set()
        for term in browse:
            concept = self.resolve(term)
            if concept is None:
                unresolved[term] += 1
                tally.gold += 1
            else:
                gold.add(concept)
        predicted: dict[str, str | None] = {}
        for item in linked:
            for concept in item.concepts:
                predicted.setdefault(concept, item.type)
        covered: set[str] = set()
        for concept, kind in predicted.items():
            lineage = {concept} | self.ancestors(concept)
            correct = bool(lineage & gold)
            covered |= lineage
            tally.predicted += 1
            tally.correct += correct
            if by_type is not None and kind is not None:
                per_type = by_type.setdefault(kind, Tally())
                per_type.predicted += 1
                per_type.correct += correct
        tally.gold += len(gold)
        tally.found += len(gold & covered)
