"""One ClinicalTrials.gov record, whatever format it was read from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Intervention:
    """An intervention as registered: its type ("Drug", "Procedure", …), its name and the other names given."""

    type: str
    name: str
    other_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrialRecord:
    """The fields of a trial record medlink uses.

    ``inclusion`` and ``exclusion`` are the eligibility criteria, one string per criterion (see
    :mod:`medlink.trials.criteria`); ``minimum_age`` and ``maximum_age`` are in years (``None``: no limit given);
    ``sex`` is ``"all"``, ``"female"`` or ``"male"``; ``condition_browse`` and ``intervention_browse`` are the MeSH
    terms NLM's algorithm assigned (names, as the registry publishes them). Missing fields are normal: old records
    have no exclusion section, many have no interventions.
    """

    nct_id: str
    title: str = ""
    brief_summary: str = ""
    conditions: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    interventions: tuple[Intervention, ...] = ()
    criteria_text: str = ""
    inclusion: tuple[str, ...] = ()
    exclusion: tuple[str, ...] = ()
    minimum_age: float | None = None
    maximum_age: float | None = None
    sex: str = "all"
    healthy_volunteers: bool | None = None
    condition_browse: tuple[str, ...] = ()
    intervention_browse: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.nct_id or not isinstance(self.nct_id, str):
            raise ValueError(f"a trial record needs an nct_id, got {self.nct_id!r}")
