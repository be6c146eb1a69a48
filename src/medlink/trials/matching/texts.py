"""The three views of a trial TrialMatcher encodes (Jin et al., TREC CT 2021, shared/papers/003, §2.1): its description
D (title, conditions, interventions, summary), its inclusion criteria I and its exclusion criteria E.

Criteria stand in for patients: I describes an eligible patient, E an ineligible one. Conditions come before the
summary so that a 256-token encoder sees what the trial is about before the summary runs out of room.
"""

from __future__ import annotations

from medlink.trials.records import TrialRecord


def description(record: TrialRecord) -> str:
    parts = [
        record.title,
        "; ".join(record.conditions),
        "; ".join(intervention.name for intervention in record.interventions),
        record.brief_summary,
    ]
    return ". ".join(part.strip().rstrip(".") for part in parts if part and part.strip())


def criteria_text(criteria: tuple[str, ...]) -> str:
    """A criteria list as one patient-like text (the paper encodes I and E each as one text)."""
    return " ".join(criterion.strip().rstrip(".;") + "." for criterion in criteria if criterion.strip())
