"""Run every system of a benchmark suite on every dataset (and fold) and keep what the report needs.

Indexes are the expensive part, so they are built once per (dataset, fold, encoder) under a work folder and
reused by every system and by later runs: names first (source O), then a copy with the training mentions added
(source D), which encodes only the mentions. Terminologies and corpora are read fresh each run (seconds).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.benchmark.config import MEDLINK, BenchmarkConfig, DatasetSpec, SystemSpec
from medlink.encoders.base import Encoder
from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.crosswalk import Crosswalk, open_crosswalk
from medlink.evaluation.runner import evaluate, resolve_gold, score_across_releases
from medlink.evaluation.scoring import Prediction, score
from medlink.evaluation.setups import reduce_dictionary, select_subset
from medlink.index import VectorIndex, build_index, index_with_mentions, ontology_entries
from medlink.index.vector_index import is_current_index
from medlink.index.with_mentions import entries_digest
from medlink.linking import Linker, LinkerConfig
from medlink.linking.defaults import donor_terminology
from medlink.linking.mentions.term_model import TermModel
from medlink.terminology import SourceSpec, Terminology, compile_terminology
from medlink.terminology.borrowing import borrow_synonyms
from medlink.terminology.store import save_terminology


@dataclass(frozen=True)
class FoldResult:
    fold: str
    n: int
    accuracy: dict[int, float]
    mrr: float
    seconds: float  # linking and scoring, not index building
    correct_at_1: tuple[bool, ...]
    nil_rate: float = 0.0  # share of mentions the system left unlinked
    startup_seconds: float | None = None  # isolated runs: building or loading the system, in its own process
    peak_rss_mb: float | None = None  # isolated runs: that process's peak resident memory
    unavailable: str | None = None  # why the system could not run here (its numbers are then zeros)
    version: str | None = None  # isolated runs: the version of the package that ran
    across_releases: float | None = None  # Acc@1 with the dataset's crosswalk between releases, where it has one
    build_seconds: float | None = None  # isolated peers: building their own database or index, once


@dataclass(frozen=True)
class Cell:
    """One system on one dataset: per-fold results and their mean."""

    dataset: str
    system: str
    folds: tuple[FoldResult, ...]

    @property
    def n(self) -> int:
        return sum(fold.n for fold in self.folds)

    def accuracy(self, k: int) -> float:
        return sum(fold.accuracy[k] for fold in self.folds) / len(self.folds)

    @property
    def mrr(self) -> float:
        return sum(fold.mrr for fold in self.folds) / len(self.folds)

    @property
    def correct_at_1(self) -> tuple[bool, ...]:
        return tuple(flag for fold in self.folds for flag in fold.correct_at_1)

    @property
    def unavailable(self) -> str | None:
        return next((fold.unavailable for fold in self.folds if fold.unavailable), None)

    @property
    def across_releases(self) -> float | None:
        values = [fold.across_releases for fold in self.folds if fold.across_releases is not None]
        return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class Prepared:
    """One dataset fold ready to link: its terminology, corpora and (lazily built) indexes."""

    spec: DatasetSpec
    fold: str
    terminology: Terminology
    corpus: Corpus
    train: Corpus | None
    crosswalk: Crosswalk | None = None


def run_benchmark(
    config: BenchmarkConfig, data: Path, work: Path, log: Callable[[str], None] = lambda _: None
) -> list[Cell]:
    """Every system on every dataset, in configuration order."""
    from medlink.encoders import load_encoder

    encoders: dict[str, Encoder] = {}
    cells = []
    for dataset in config.datasets:
        per_system: dict[str, list[FoldResult]] = {system.name: [] for system in config.systems}
        for fold in dataset.folds:
            prepared = prepare(dataset.for_fold(fold, data), fold)
            log(
                f"{dataset.name}{f' fold {fold}' if fold else ''}: {len(prepared.corpus):,} mentions, "
                f"{len(prepared.terminology):,} concepts"
            )
            for system in config.systems:
                encoder = None
                if system.encoder is not None and system.system == MEDLINK:
                    if system.encoder not in encoders:
                        encoders[system.encoder] = load_encoder(system.encoder)
                    encoder = encoders[system.encoder]
                if dataset.name in system.skip:
                    result = _unavailable(prepared, config.ks, f"not run: {system.skip[dataset.name]}")
                elif system.runs_isolated:
                    result = isolated_fold(system, prepared, encoder, work, config.ks, log)
                else:
                    linker = system_linker(system, prepared, encoder, work, log)
                    started = time.perf_counter()
                    evaluation = evaluate(linker, prepared.corpus, config.ks, crosswalk=prepared.crosswalk)
                    scores, across = evaluation.scores, evaluation.across_releases
                    result = FoldResult(
                        fold,
                        len(prepared.corpus),
                        dict(scores.accuracy),
                        scores.mrr,
                        time.perf_counter() - started,
                        tuple(scores.correct_at_1),
                        _nil_rate(evaluation.predictions),
                        across_releases=across.accuracy[1] if across is not None else None,
                    )
                per_system[system.name].append(result)
                told = f"unavailable: {result.unavailable}" if result.unavailable else f"Acc@1 {result.accuracy[1]:.4f}"
                log(f"  {system.name}: {told} ({result.seconds:.1f} s)")
        cells += [Cell(dataset.name, name, tuple(folds)) for name, folds in per_system.items()]
    return cells


def isolated_fold(
    system: SystemSpec,
    prepared: Prepared,
    encoder: Encoder | None,
    work: Path,
    ks: Sequence[int],
    log: Callable[[str], None],
) -> FoldResult:
    """The system in a process of its own (benchmark/peers/), scored here with the same strict scorer."""
    from medlink.benchmark.peer_inputs import peer_input
    from medlink.benchmark.peers.isolated import PeerInput, run_isolated

    options: dict[str, object] = {"threshold": system.threshold}
    given = PeerInput()  # medlink's training mentions are in its index
    if system.system != MEDLINK:
        train = prepared.train
        given = peer_input(system.system, prepared.corpus, train, prepared.terminology, system.mentions, "link")
    else:
        if encoder is None:
            raise MedlinkError(f"system {system.name!r}: an isolated medlink system needs an encoder")
        mentions = system.mentions and prepared.train is not None
        options |= {
            "index": str(dataset_index(prepared, encoder, system.encoder or "", mentions, work, log)),
            "terminology_dir": str(saved_terminology(prepared.terminology, work)),
            "encoder": system.encoder,
            "sieves": system.sieves,
        }
    run = run_isolated(
        system.system,
        prepared.terminology,
        prepared.corpus,
        work,
        system.python,
        system.timeout_minutes,
        given,
        **options,
    )
    if run.unavailable:
        return _unavailable(prepared, ks, run.unavailable, run.peak_rss_mb, run.version)
    n = len(prepared.corpus)
    golds = [resolve_gold(mention.gold, prepared.terminology) for mention in prepared.corpus]
    scores = score(golds, run.predictions, ks)
    across = None
    if prepared.crosswalk is not None and prepared.crosswalk.moved_in(prepared.corpus):
        moved = score_across_releases(prepared.corpus, run.predictions, prepared.terminology, prepared.crosswalk, (1,))
        across = moved.accuracy[1]
    return FoldResult(
        prepared.fold,
        n,
        dict(scores.accuracy),
        scores.mrr,
        run.link_seconds,
        tuple(scores.correct_at_1),
        _nil_rate(run.predictions),
        run.startup_seconds,
        run.peak_rss_mb,
        None,
        run.version,
        across,
        run.build_seconds,
    )


def _unavailable(
    prepared: Prepared, ks: Sequence[int], why: str, peak_rss_mb: float | None = None, version: str | None = None
) -> FoldResult:
    """A fold the system did not link (``why``): every mention counted wrong, its figures shown as a dash."""
    n = len(prepared.corpus)
    wrong = (False,) * n
    return FoldResult(prepared.fold, n, dict.fromkeys(ks, 0.0), 0.0, 0.0, wrong, 0.0, None, peak_rss_mb, why, version)


def _nil_rate(predictions: Sequence[Prediction]) -> float:
    return sum(not p.concepts and not p.parts for p in predictions) / max(len(predictions), 1)


def saved_terminology(terminology: Terminology, work: Path) -> Path:
    """The dataset's compiled terminology as a folder, for a system that loads it in another process."""
    folder = work / "terminologies" / terminology.fingerprint()
    if not (folder / "manifest.json").exists():
        save_terminology(terminology, folder)
    return folder


def prepare(spec: DatasetSpec, fold: str) -> Prepared:
    sources = [SourceSpec.parse(source) for source in spec.terminology]
    terminology = compile_terminology(sources, namespace=spec.namespace)
    for donor in spec.synonyms_from:
        terminology, _ = borrow_synonyms(terminology, donor_terminology(donor), donor)
    if spec.dictionary_fraction is not None:
        terminology = reduce_dictionary(terminology, spec.dictionary_fraction)
    corpus = load_corpus(spec.corpus, spec.entity_type, spec.namespace)
    train = load_corpus(spec.train, spec.entity_type, spec.namespace) if spec.train else None
    corpus = select_subset(corpus, train, spec.subset, terminology.normalizer)
    return Prepared(spec, fold, terminology, corpus, train, open_crosswalk(spec.crosswalk))


def system_linker(
    system: SystemSpec,
    prepared: Prepared,
    encoder: Encoder | None,
    work: Path,
    log: Callable[[str], None],
    nil_threshold: float | None = 0.0,
    term_model: TermModel | None = None,
) -> Linker:
    """The linker a system describes, over this dataset's terminology (and training mentions, if it uses them).
    Benchmarks measure linking without a nil threshold unless given one, and a term model for the dense systems
    (benchmarks/nil_threshold.py)."""
    from medlink.linking.pipeline import dense_parts, parse_sieves

    terminology = prepared.terminology
    mentions = system.mentions and prepared.train is not None
    config = LinkerConfig(
        nil_threshold=nil_threshold, expand_abbreviations=system.abbreviations, split_composites=system.composites
    )
    if encoder is None:
        entries = ontology_entries(terminology)
        extra = prepared.train.index_entries(terminology) if mentions and prepared.train else []
        sieves = parse_sieves(system.sieves, terminology, None, None, entries=[*entries, *extra])
        return Linker(terminology, sieves, config)
    folder = dataset_index(prepared, encoder, system.encoder or "", mentions, work, log)
    index = VectorIndex.load(folder)
    return Linker.from_parts(dense_parts(terminology, index, encoder, system.sieves, config, term_model))


def dataset_index(
    prepared: Prepared, encoder: Encoder, encoder_name: str, mentions: bool, work: Path, log: Callable[[str], None]
) -> Path:
    """The names index of this dataset fold and encoder, or its copy with training mentions; built on demand."""
    terminology = prepared.terminology
    # Keyed by content, so every dataset over the same terminology (subsets, folds that share it) shares one index.
    stem = f"{_slug(encoder_name)}-{encoder.identity.fingerprint()}-{terminology.fingerprint()}"
    names = work / "indexes" / f"{stem}-O"
    if not _usable(names, terminology):
        log(f"  encoding {terminology.name_count:,} names with {encoder_name} ...")
        # The encoder's other name indexes lend the vectors of the texts they share (a terminology with borrowed
        # synonyms is the plain one plus a few percent).
        earlier = sorted((work / "indexes").glob(f"{_slug(encoder_name)}-{encoder.identity.fingerprint()}-*-O"))
        build_index(
            ontology_entries(terminology),
            encoder,
            names,
            terminology.fingerprint(),
            reuse=[folder for folder in earlier if is_current_index(folder)],
        )
    if not mentions:
        return names
    train = prepared.train
    assert train is not None  # mentions are asked for only where the dataset has training mentions
    entries = train.index_entries(terminology)
    return index_with_mentions(names, entries, encoder, work / "indexes" / f"{stem}-OD-{entries_digest(entries)}")


def _usable(folder: Path, terminology: Terminology) -> bool:
    if not (folder / "manifest.json").exists():
        return False
    return VectorIndex.load(folder).terminology_fingerprint == terminology.fingerprint()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
