"""Annotating running text end to end, medlink beside Gilda's own ``annotate`` (issue 46).

    python benchmarks/annotate_peers.py            # ../shared/data beside the checkout; about 2 minutes

Each system gets the same terminology and the same documents and is scored by the same scorer
(``medlink.evaluation.end_to_end``): mention level (exact span + concept) and document level (document, concept),
BioCreative V CDR's disease measure. Gilda (``pip install gilda``) runs as its README shows, ``gilda.annotate`` with
a ``Grounder`` of the terminology's names; its disambiguation models are not used (they download at run time).
medlink runs exact-only (dictionary spans, the text's short forms, ConText) without and with the training documents
(``--train``: their mention texts become spans, names they seldom mark stop being spans), each without and with the
packaged span tagger (``medlink[tagger]``; rows left out when it is not installed).
``medlink benchmark benchmarks/peers.toml`` runs the comparison with QuickUMLS and MedCAT too, every system in a
process of its own (docs/peers.md); this script keeps the span tagger's rows side by side in one process.

Datasets: BC5CDR Disease dev with CTD MEDIC (the issue's target), NCBI-disease test with MEDIC 2012.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.end_to_end import EndToEnd, learn_from_corpus, score_annotations
from medlink.linking import Linker
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig, with_span_sources
from medlink.linking.annotation.tagger import choose_tagger
from medlink.terminology import SourceSpec, Terminology, compile_terminology

DATASETS = {
    "BC5CDR Disease dev": (
        "ctd:{data}/terminologies/medic/CTD_diseases.tsv.gz",
        "{data}/corpora/bc5cdr/CDR_DevelopmentSet.PubTator.txt",
        "{data}/corpora/bc5cdr/CDR_TrainingSet.PubTator.txt",
        "Disease",
    ),
    "NCBI-disease test": (
        "biosyn:{data}/terminologies/medic/medic_06Jul2012.txt",
        "{data}/corpora/ncbi-disease/NCBItestset_corpus.txt",
        "{data}/corpora/ncbi-disease/NCBItrainset_corpus.txt",
        None,
    ),
}


def gilda_annotations(terminology: Terminology, texts: list[str]) -> list[list[Annotation]]:
    """Gilda's ``annotate`` as ``medlink benchmark`` runs it (benchmark/peers/gilda_peer.py), in this process."""
    from medlink.benchmark.peers.exports import names_of
    from medlink.benchmark.peers.gilda_peer import annotator

    concepts = [{"id": concept, "names": names} for concept, names in names_of(terminology, {})]
    spans = annotator({}, concepts)([{"text": text} for text in texts])
    return [
        [
            Annotation(start, end, text[start:end], (terminology.resolve(c) or c,), (), None, "gilda")
            for start, end, c in found
        ]
        for text, found in zip(texts, spans, strict=True)
    ]


def row(system: str, dataset: str, result: EndToEnd, seconds: float) -> str:
    m, d = result.mention, result.document
    return (
        f"| {dataset} | {system} | {d.precision:.3f} | {d.recall:.3f} | **{d.f1:.3f}** | {m.precision:.3f} | "
        f"{m.recall:.3f} | {m.f1:.3f} | {result.documents / seconds:,.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    args = parser.parse_args()
    print("| dataset | system | doc P | doc R | doc F1 | mention P | mention R | mention F1 | documents/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for dataset, (source, test, train, entity_type) in DATASETS.items():
        fill = str(args.data)
        terminology = compile_terminology([SourceSpec.parse(source.replace("{data}", fill))])
        corpus: Corpus = load_corpus(f"pubtator:{test.replace('{data}', fill)}", entity_type, None)
        training = load_corpus(f"pubtator:{train.replace('{data}', fill)}", entity_type, None)
        texts = [text for _, text in corpus.documents]
        started = time.perf_counter()
        found = gilda_annotations(terminology, texts)
        print(
            row(
                "Gilda 1.6.1 annotate",
                dataset,
                score_annotations(corpus, found, terminology),
                time.perf_counter() - started,
            )
        )
        linker = Linker(terminology)
        taught = replace(AnnotatorConfig(), lexicon=learn_from_corpus(training, terminology))  # not timed
        configs = [("medlink annotate, no training documents", AnnotatorConfig()), ("medlink annotate --train", taught)]
        tagger = choose_tagger("auto")
        if tagger is not None and tagger.learned_from(corpus.name):
            print(f"| {dataset} | span tagger rows left out: the packaged tagger was trained on these documents |")
        elif tagger is not None:
            tagger.tag(texts[:2])  # the session opens once, as in a service
            configs += [
                ("medlink annotate + span tagger", with_span_sources(AnnotatorConfig(), tagger, None, "Disease")),
                ("medlink annotate --train + span tagger", with_span_sources(taught, tagger, None, "Disease")),
            ]
        for name, config in configs:
            started = time.perf_counter()
            found = linker.annotate_many(texts, config)
            print(row(name, dataset, score_annotations(corpus, found, terminology), time.perf_counter() - started))


if __name__ == "__main__":
    main()
