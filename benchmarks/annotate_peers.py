"""Annotating running text end to end, medlink beside Gilda's own ``annotate`` (issue 46).

    python benchmarks/annotate_peers.py            # ../shared/data beside the checkout; about 2 minutes

Each system gets the same terminology and the same documents and is scored by the same scorer
(``medlink.evaluation.end_to_end``): mention level (exact span + concept) and document level (document, concept),
BioCreative V CDR's disease measure. Gilda (``pip install gilda``) runs as its README shows, ``gilda.annotate`` with
a ``Grounder`` of the terminology's names; its disambiguation models are not used (they download at run time).
medlink runs exact-only (dictionary spans, the text's short forms, ConText) without and with the training documents
(``--train``: their mention texts become spans, names they seldom mark stop being spans), each without and with the
packaged span tagger (``medlink[tagger]``; rows left out when it is not installed).

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
    from gilda import Grounder
    from gilda.ner import annotate
    from gilda.process import normalize
    from gilda.term import Term

    terms = []
    for concept in terminology:
        db, _, local = concept.id.partition(":")
        names = list(dict.fromkeys([concept.preferred_name, *(name.text for name in concept.names)]))
        terms += [
            Term(normalize(name), name, db, local, concept.preferred_name, "name" if i == 0 else "synonym", "medlink")
            for i, name in enumerate(names)
            if normalize(name).strip()
        ]
    grounder = Grounder(terms)
    # Disambiguation models off: Gilda downloads them on first use (from S3), which cannot happen here. An empty
    # table is what Grounder.disambiguate reads as "loaded, none for this text".
    grounder.gilda_disambiguators = {}
    grounder.adeft_disambiguators = {}
    found = []
    for text in texts:
        spans = []
        for annotation in annotate(text, grounder=grounder):
            if annotation.matches:
                best = annotation.matches[0].term
                concept = terminology.resolve(f"{best.db}:{best.id}") or f"{best.db}:{best.id}"
                spans.append(
                    Annotation(
                        annotation.start,
                        annotation.end,
                        annotation.text,
                        (concept,),
                        (best.entry_name,),
                        annotation.matches[0].score,
                        "gilda",
                    )
                )
        found.append(spans)
    return found


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
        if tagger is not None:
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
