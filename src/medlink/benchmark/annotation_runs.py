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
from medlink.benchmark.peers.isolated import PeerInput, digest, run_isolated
from medlink.benchmark.runner import Prepared, prepare, saved_terminology
from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.end_to_end import EndToEnd, found_sets, gold_sets, score_annotations
from medlink.linking.annotation.annotator import Annotation
from medlink.terminology import Terminology


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
    ours: bool = False  # medlink's (compared with each peer's row of the same kind)
    trained: bool = False  # given the training mentions (or documents)
    shipped: bool = False  # medlink's default: public documents taught its lexicon, so compared with both kinds
    per_document: tuple[tuple[int, int, int], ...] = ()  # document level: right, found, gold of each document

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
    config: BenchmarkConfig,
    corpora: list[Prepared],
    work: Path,
    log: Callable[[str], None] = lambda _: None,
    data: Path | None = None,
) -> list[AnnotationCell]:
    """``data``: where the public corpora are (``{data}/corpora``), to learn the corpus lexicon again without a
    corpus it was learned from; without it, the lexicon is left off on such a corpus."""
    cells = []
    for prepared in corpora:
        log(f"{prepared.spec.name} (annotation): {len(prepared.corpus.documents):,} documents")
        for annotator in config.annotators:
            cell = annotation_cell(annotator, prepared, work, data)
            told = cell.unavailable if cell.result is None else f"document F1 {cell.result.document.f1:.4f}"
            log(f"  {annotator.name}: {told} ({cell.seconds:.1f} s)")
            cells.append(cell)
    return cells


def annotation_cell(
    annotator: AnnotatorSpec, prepared: Prepared, work: Path, data: Path | None = None
) -> AnnotationCell:
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
            "scored_file": corpus.name,  # a tagger that learned from it stays off (SpanTagger.learned_from)
        }
        held_out = held_out_corpus_lexicon(corpus, data, work) if annotator.shipped and data is not None else None
        if held_out is not None:
            options["corpus_lexicon_file"] = str(held_out)
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
            ours=annotator.system == MEDLINK,
            trained=annotator.mentions,
            shipped=annotator.shipped,
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
        annotator.system == MEDLINK,
        annotator.mentions,
        annotator.shipped,
        per_document(corpus, found, terminology),
    )


def per_document(
    corpus: Corpus, found: list[list[Annotation]], terminology: Terminology
) -> tuple[tuple[int, int, int], ...]:
    """Document level (document, concept) pairs right, found and gold, per document: what a bootstrap over
    documents resamples."""
    _, gold = gold_sets(corpus, terminology)
    _, claimed = found_sets(corpus, found)
    counts = {document_id: [0, 0, 0] for document_id, _ in corpus.documents}
    for document_id, _ in claimed:
        counts[document_id][1] += 1
    for document_id, _ in gold:
        counts[document_id][2] += 1
    for document_id, _ in claimed & gold:
        counts[document_id][0] += 1
    return tuple((right, claimed_, gold_) for right, claimed_, gold_ in counts.values())


LEXICON_RECIPE = 3  # what learning a lexicon finds (annotation's rules): raise it when they change


def held_out_corpus_lexicon(corpus: Corpus, data: Path, work: Path) -> Path | None:
    """Where the packaged corpus lexicon was learned from any of ``corpus``'s documents (BC5CDR dev), the same
    lexicon learned again from the public sources that hold none of them, as ``benchmarks/annotation_defaults.py
    --held-out`` does, over the default linker's terminology as shipped; saved once under ``work``, per documents,
    source files, that terminology, medlink version and recipe. ``None`` where the packaged lexicon never saw them
    (or is not installed), or the public sources are not all in ``data`` (then the lexicon is left off there)."""
    from medlink.linking import Linker
    from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon
    from medlink.training.corpus_lexicon import learn_corpus_lexicon, public_sources
    from medlink.version import __version__

    ids = {document_id for document_id, _ in corpus.documents}
    packaged = packaged_corpus_lexicon()
    if packaged is None or not packaged.learned_from_any(ids):
        return None
    try:
        sources = public_sources(data / "corpora")
    except MedlinkError:
        return None
    files = sorted(
        (str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in (data / "corpora").rglob("*") if p.is_file()
    )
    terminology = Linker.load().terminology
    key = [sorted(ids), files, terminology.fingerprint(), __version__, LEXICON_RECIPE]
    path = work / "lexicons" / f"without-{digest(key)}.json.gz"
    if not path.exists():
        kept = [s for s in sources if ids.isdisjoint(i for i, _ in s.corpus.documents)]
        path.parent.mkdir(parents=True, exist_ok=True)
        learn_corpus_lexicon(kept, terminology).save(path)
    return path
