"""Runs over a test collection: every patient's trials ranked by the matcher, and by BM25 alone from the same
index, so that each table can put the two side by side.

Protocols: ``pool`` ranks each patient's judged trials that the index holds (BIRCO's protocol; on TREC CT the
judged subset of the trials at hand), ``full`` searches the whole index and keeps the top ``depth``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medlink.trials.matching.judged_collections import Collection
from medlink.trials.matching.matcher import TrialMatcher

POOL, FULL = "pool", "full"


@dataclass(frozen=True)
class Runs:
    system: dict[str, dict[str, float]]
    bm25: dict[str, dict[str, float]]
    collection: Collection  # the judged part that was ranked


def rank_collection(
    matcher: TrialMatcher, collection: Collection, protocol: str = POOL, depth: int = 100, progress: bool = False
) -> Runs:
    from tqdm import tqdm

    index = matcher.index
    judged = collection.judged({t.nct_id for t in index.trials})
    system: dict[str, dict[str, float]] = {}
    bm25: dict[str, dict[str, float]] = {}
    for patient in tqdm(sorted(judged.qrels), desc="patients", disable=not progress):
        note = judged.notes[patient]
        if protocol == POOL:
            pool = sorted(judged.qrels[patient])
            result = matcher.rank(note, pool)
        else:
            result = matcher.match(note, top=depth)
        # the baseline is BM25 with the note as its query (the matcher's own BM25 signal may expand it)
        lexical = index.bm25.scores(note)
        rows = index.rows(pool) if protocol == POOL else np.argsort(-lexical, kind="stable")[:depth]
        bm25[patient] = {index.trials[row].nct_id: float(lexical[row]) for row in rows}
        # rank order is what counts: scores turned into descending ranks keep reranked heads above their tails
        system[patient] = {m.nct_id: float(len(result.trials) - m.rank + 1) for m in result.trials}
    return Runs(system, bm25, judged)
