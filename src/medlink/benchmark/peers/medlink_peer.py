"""medlink in a process of its own, as the benchmark's rows run it: linking with the dataset's compiled
terminology, its index and its sieves; annotating as ``medlink eval --end-to-end --exact-only`` does, with the
setup's sources of spans (the terminology's names alone; the packaged tagger and corpus lexicon; the training
documents, ``--train``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any


def linker(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    from medlink.encoders import load_encoder
    from medlink.evaluation.runner import prediction_of
    from medlink.index import VectorIndex
    from medlink.linking import LinkerConfig, Mention
    from medlink.linking.linker import Linker
    from medlink.linking.pipeline import dense_parts
    from medlink.terminology import load_terminology

    terminology = load_terminology(Path(request["terminology_dir"]))
    parts = dense_parts(
        terminology,
        VectorIndex.load(Path(request["index"])),
        load_encoder(request["encoder"]),
        request["sieves"],
        LinkerConfig(nil_threshold=request.get("threshold") or 0.0),
    )
    linked = Linker.from_parts(parts)

    def as_dict(prediction: Any) -> dict[str, Any]:
        return {
            "concepts": list(prediction.concepts),
            "ranked": list(prediction.ranked),
            "parts": [as_dict(part) for part in prediction.parts],
        }

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = linked.link_many([Mention(m["text"], m.get("document")) for m in mentions])
        return [as_dict(prediction_of(result)) for result in results]

    return rank


def annotator(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.end_to_end import learn_from_corpus
    from medlink.linking import Linker
    from medlink.linking.annotation.annotator import AnnotatorConfig, branches_of, packaged_span_sources
    from medlink.linking.annotation.corpus_lexicon import read_corpus_lexicon
    from medlink.terminology import load_terminology

    terminology = load_terminology(Path(request["terminology_dir"]))
    linked = Linker(terminology)  # exact sieves: annotation's spans are the dictionary's and the lexicon's
    entity_type, shipped, trained = request.get("entity_type"), request["shipped"], request["trained"]
    config = AnnotatorConfig(corpus_lexicon=shipped, branches=branches_of(terminology, (), entity_type))
    if shipped:  # what `medlink annotate` adds by default; with training documents its tagger is off (span_config)
        config = packaged_span_sources(config, "none" if trained else "auto", entity_type)
        if config.tagger is not None and config.tagger.learned_from(request.get("scored_file", "")):
            config = replace(config, tagger=None)  # never scored on what it learned from, as the lexicon below
        if request.get("corpus_lexicon_file"):  # the same lexicon learned without these documents
            config = replace(config, corpus=read_corpus_lexicon(Path(request["corpus_lexicon_file"])))
    if trained:
        train = load_corpus(request["train"], entity_type, request.get("namespace"))
        config = replace(config, lexicon=learn_from_corpus(train, terminology, config))

    if config.name_checks:  # counted over every name once, at start-up as a service's worker does
        terminology.name_statistics  # noqa: B018

    def spans(documents: list[dict[str, Any]]) -> list[list[list[Any]]]:
        chosen = config
        if chosen.corpus is not None and chosen.corpus.learned_from_any(d["id"] for d in documents):
            chosen = replace(chosen, corpus_lexicon=False)  # never scored on what it was learned from
        found = linked.annotate_many([d["text"] for d in documents], chosen)
        return [[[a.start, a.end, concept] for a in annotations for concept in a.concepts] for annotations in found]

    return spans
