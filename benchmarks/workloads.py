"""Mention streams the serving benchmarks share: the condition strings of the shared ClinicalTrials.gov records
(what a trial-data team links), repeated as real streams repeat them."""

from __future__ import annotations

import random
from pathlib import Path

SHARED_RECORDS = Path(__file__).resolve().parents[1].parent / "shared/data/trials/ctgov-sample/ctgov_records.tar.gz"


def condition_strings(records: Path = SHARED_RECORDS) -> list[str]:
    """Every condition string of the records, in record order, repeats kept (about 9,000 from 5,097 records)."""
    from medlink.trials.readers import read_trials

    if not records.exists():
        raise SystemExit(f"{records} is missing: pass --records with ClinicalTrials.gov records")
    return [condition for record in read_trials([records]) for condition in record.conditions]


def repeat_heavy(strings: list[str], count: int, seed: int = 13) -> list[str]:
    """``count`` mentions drawn from ``strings`` with replacement (a fixed seed: the same stream every run)."""
    generator = random.Random(seed)
    return generator.choices(strings, k=count)
