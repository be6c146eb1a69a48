"""Every judged patient's pool with the evidence on each trial, gathered once so that many ranking settings can be
scored without encoding or cross-encoding anything again (the selection protocol, :mod:`.selection`).

Per patient: the pool's trial ids, their first-stage signals, the reranker's score of every pool trial under each
note reading, and the judgements. Saved as one JSON file per collection; a saved file is reused only when it was
gathered with the same matcher (encoders, reranker and its window, readings, medlink version).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.trials.matching.judged_collections import Collection
from medlink.trials.matching.matcher import TrialMatcher
from medlink.trials.matching.note_readings import NoteReading
from medlink.trials.matching.scoring import Signals
from medlink.version import __version__


@dataclass(frozen=True)
class PoolEvidence:
    collection: str
    patient: str
    trials: tuple[str, ...]
    signals: Signals
    relevance: dict[str, np.ndarray]  # note reading → the reranker's score of every pool trial
    qrels: dict[str, int]


def gather_pool_evidence(
    matcher: TrialMatcher, collection: Collection, readings: Sequence[NoteReading], progress: bool = False
) -> list[PoolEvidence]:
    """The evidence on every judged trial the index holds, for every judged patient of ``collection``."""
    from tqdm import tqdm

    judged = collection.judged({trial.nct_id for trial in matcher.index.trials})
    gathered = []
    for patient in tqdm(sorted(judged.qrels), desc=f"{collection.name} patients", disable=not progress):
        found = matcher.evidence(judged.notes[patient], sorted(judged.qrels[patient]), criteria=True)
        everything = list(range(len(found.trials)))
        relevance = {}
        if matcher.reranker is not None:
            relevance = {reading.mode: matcher.relevance(found, everything, reading) for reading in readings}
        gathered.append(
            PoolEvidence(
                collection.name, patient, tuple(found.ids), found.signals, relevance, dict(judged.qrels[patient])
            )
        )
    return gathered


def gathering_key(matcher: TrialMatcher, readings: Sequence[NoteReading]) -> dict[str, Any]:
    """What the saved evidence depends on."""
    reranker, manifest = matcher.reranker, matcher.index.manifest
    return {
        "medlink_version": __version__,
        "encoders": matcher.encoders.name,
        "expand_query": matcher.expand_query,
        "index": {
            "trials": len(matcher.index),
            "files": manifest.get("files"),
            "concept_terminology": manifest.get("concept_terminology"),
        },
        "concepts": matcher.scanner is not None,
        "signals": list(Signals.__dataclass_fields__),
        "reranker": getattr(reranker, "name", None),
        "reranker_tokens": getattr(reranker, "max_length", None),
        "readings": [reading.mode for reading in readings],
    }


def save_pool_evidence(evidence: Sequence[PoolEvidence], key: dict[str, Any], path: Path) -> None:
    rows = [
        {
            "collection": e.collection,
            "patient": e.patient,
            "trials": list(e.trials),
            "qrels": e.qrels,
            "signals": {f.name: getattr(e.signals, f.name).tolist() for f in fields(Signals)},
            "relevance": {name: values.tolist() for name, values in e.relevance.items()},
        }
        for e in evidence
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps({"key": key, "patients": rows}))
    partial.replace(path)


def load_pool_evidence(path: Path, key: dict[str, Any]) -> list[PoolEvidence] | None:
    """The evidence saved at ``path`` if it was gathered under ``key``; ``None`` when absent or gathered otherwise."""
    if not path.is_file():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MedlinkError(f"{path}: unreadable saved evidence ({error}); delete it to gather again") from None
    if saved.get("key") != key:
        return None
    return [
        PoolEvidence(
            row["collection"],
            row["patient"],
            tuple(row["trials"]),
            Signals(**{name: np.asarray(values, dtype=np.float64) for name, values in row["signals"].items()}),
            {name: np.asarray(values, dtype=np.float64) for name, values in row["relevance"].items()},
            {str(t): int(g) for t, g in row["qrels"].items()},
        )
        for row in saved["patients"]
    ]
