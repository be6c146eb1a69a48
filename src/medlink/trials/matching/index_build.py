"""Trial indexes from records (``medlink trials index``) or from a collection's trial texts (BIRCO).

Records go through the trial normalizer of "Clinical trials I" for the concepts of their conditions and
interventions, and through the concept scanner for the diseases their exclusion criteria name. A collection that
carries only a text per trial (BIRCO) gets an index in memory whose description is that text and whose concepts
are the diseases the text names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import islice
from pathlib import Path

from medlink.linking.mentions.scanner import ConceptScanner
from medlink.trials.matching.encoders import TrialEncoders
from medlink.trials.matching.trial_index import IndexedTrial, TrialIndex
from medlink.trials.normalization.normalizer import TrialNormalizer
from medlink.trials.records import TrialRecord


def indexed_trials(
    records: Iterable[TrialRecord], normalizer: TrialNormalizer, scanner: ConceptScanner, batch: int = 256
) -> list[IndexedTrial]:
    trials: list[IndexedTrial] = []
    records = iter(records)
    while chunk := list(islice(records, batch)):
        for record, normalized in zip(chunk, normalizer.normalize(chunk), strict=True):
            linked = [*normalized.conditions, *normalized.interventions]
            concepts = dict.fromkeys(c for text in linked for c in text.concepts)
            trials.append(IndexedTrial.from_record(record, tuple(concepts), scanner.scan_all(record.exclusion)))
    return trials


def index_records(
    records: Iterable[TrialRecord],
    output: Path | str,
    encoders: TrialEncoders,
    normalizer: TrialNormalizer,
    scanner: ConceptScanner,
    progress: bool = False,
) -> TrialIndex:
    trials = indexed_trials(records, normalizer, scanner)
    index = TrialIndex.build(trials, encoders, progress)
    index.save(output, {"concept_terminology": scanner.terminology.fingerprint()})
    return index


def index_texts(
    texts: Mapping[str, str], encoders: TrialEncoders, scanner: ConceptScanner | None, progress: bool = False
) -> TrialIndex:
    """An in-memory index of trials known only by a text each (title and summary, as BIRCO gives them)."""
    trials = [
        IndexedTrial(nct_id, description=text, concepts=scanner.scan(text) if scanner else ())
        for nct_id, text in sorted(texts.items())
    ]
    return TrialIndex.build(trials, encoders, progress)
