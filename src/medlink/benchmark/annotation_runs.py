"""End-to-end annotation in the benchmark: every annotator over every ``[[annotation]]`` corpus, each in a process
of its own (``benchmark/peers/``), given the same terminology and documents, and scored by the same scorer
(:func:`medlink.evaluation.end_to_end.score_annotations`): mention level (exact span and concept) and document
level (document and concept, BioCreative V CDR's measure)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medlink.benchmark.config import MEDLINK, AnnotatorSpec, BenchmarkConfig
from medlink.benchmark.peer_inputs import peer_input
from medlink.benchmark.peers.isolated import PeerInput, run_isolated
from medlink.benchmark.runner import Prepared, prepare, saved_terminology
from medlink.errors import MedlinkError
from medlink.evaluation.end_to_end import EndToEnd, score_annotations
from medlink.linking.annotation.annotator import Annotation


@dataclass(frozen=True)
class AnnotationCell:
    """One annotator on one corpus."""

    dataset: str
    system: str
    documents: int
    result: EndToEnd | None  # None: it could not run here (``unavailable`` says why)
    seconds: float = 0.0  # annotating the documents, start-up apart
    startup_seconds: float = 0.0
    peak_rss_mb: float | None = None
    build_seconds: float | None = None  # building its own database or model, once (by this run or before)
    unavailable: str | None = None
    version: str | None = None

    @property
    def documents_per_second(self) -> float:
        return self.documents / max(self.seconds, 1e-3)


def prepare_annotation(config: BenchmarkConfig, data: Path) -> list[Prepared]:
    """The annotation corpora, read and checked: each needs its documents (a format that keeps them: PubTator)."""
    corpora = []
    for dataset in config.annotation:
        prepared = prepare(dataset.for_fold("", data), "")
        if not prepared.corpus.documents:
            raise MedlinkError(f"annotation corpus {dataset.name!r}: {dataset.corpus} has no documents (use pubtator:)")
        corpora.append(prepared)
    return corpora


def run_annotation(
    config: BenchmarkConfig, corpora: list[Prepared], work: Path, log: Callable[[str], None] = lambda _: None
) -> list[AnnotationCell]:
    cells = []
    for prepared in corpora:
        log(f"{prepared.spec.name} (annotation): {len(prepared.corpus.documents):,} documents")
        for annotator in config.annotators:
            cell = annotation_cell(annotator, prepared, work)
            told = cell.unavailable if cell.result is None else f"document F1 {cell.result.document.f1:.4f}"
            log(f"  {annotator.name}: {told} ({cell.seconds:.1f} s)")
            cells.append(cell)
    return cells


def annotation_cell(annotator: AnnotatorSpec, prepared: Prepared, work: Path) -> AnnotationCell:
    spec, corpus, terminology = prepared.spec, prepared.corpus, prepared.terminology
    options: dict[str, object] = {}
    given = PeerInput(task="annotate")
    if annotator.system == MEDLINK:
        options = {
            "terminology_dir": str(saved_terminology(terminology, work)),
            "shipped": annotator.shipped,
            "trained": annotator.mentions and spec.train is not None,
            "train": spec.train,
            "entity_type": spec.entity_type,
            "namespace": spec.namespace,
        }
    else:
        given = peer_input(annotator.system, corpus, prepared.train, terminology, annotator.mentions, "annotate")
    run = run_isolated(
        annotator.system, terminology, corpus, work, annotator.python, annotator.timeout_minutes, given, **options
    )
    documents = len(corpus.documents)
    if run.unavailable:
        return AnnotationCell(
            spec.name,
            annotator.name,
            documents,
            None,
            peak_rss_mb=run.peak_rss_mb,
            unavailable=run.unavailable,
            version=run.version,
        )
    found = [
        [
            Annotation(start, end, text[start:end], (terminology.resolve(concept) or concept,), (), None, "peer")
            for start, end, concept in spans
        ]
        for (_, text), spans in zip(corpus.documents, run.annotations, strict=True)
    ]
    return AnnotationCell(
        spec.name,
        annotator.name,
        documents,
        score_annotations(corpus, found, terminology),
        run.link_seconds,
        run.startup_seconds,
        run.peak_rss_mb,
        run.build_seconds,
        None,
        run.version,
    )
