"""How fast ``medlink annotate`` reads abstracts with the default linker (issue 46's target: ≥ 50 abstracts/s on 2
cores, span tagger included).

    python benchmarks/annotate_speed.py                      # BC5CDR dev, ../shared/data beside the checkout
    python benchmarks/annotate_speed.py --tagger FOLDER      # another tagger (e.g. one with fewer layers)

The default linker (embedded MeSH, exact match then dense retrieval; its index built before timing) annotates every
document of the corpus in one ``annotate_many`` call: dictionary spans, short forms, ConText, and the span tagger
when one is installed or given. Each setting runs three times on a warm linker (spans of a second run are linked
from the linker's cache, as in a service that sees the same terms again, so the first run is reported apart).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from medlink.evaluation.corpus_formats import load_corpus
from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig, with_span_sources
from medlink.linking.annotation.corpus_lexicon import packaged_corpus_lexicon
from medlink.linking.annotation.tagger import choose_tagger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--corpus", default=f"pubtator:{data}/corpora/bc5cdr/CDR_DevelopmentSet.PubTator.txt")
    parser.add_argument("--tagger", default="auto", help="auto (the packaged one), none, or a tagger folder")
    args = parser.parse_args()
    texts = [text for _, text in load_corpus(args.corpus).documents]
    linker = Linker.load(progress=True)
    linker.link("heart attack")  # the default index is built and loaded before any timing
    tagger = choose_tagger(args.tagger)
    corpus = packaged_corpus_lexicon()
    settings = [("dictionary + linker", AnnotatorConfig())]
    if corpus is not None:
        settings.append(("dictionary + linker + corpus lexicon", with_span_sources(AnnotatorConfig(), None, corpus)))
    if tagger is not None:
        tagger.tag(texts[:2])  # the ONNX session opens once
        name = f"dictionary + linker + span tagger ({tagger.card.base})"
        settings.append((name, with_span_sources(AnnotatorConfig(), tagger, None)))
        if corpus is not None:
            settings.append(
                (f"{name} + corpus lexicon (the default)", with_span_sources(AnnotatorConfig(), tagger, corpus))
            )
    words = sum(len(text.split()) for text in texts)
    print(f"{len(texts)} documents, {words / len(texts):.0f} words each on average")
    print("| setting | first run, documents/s | warm runs, median documents/s |")
    print("|---|---:|---:|")
    for name, config in settings:
        fresh = Linker.load()  # a cold cache of linked spans for the first run
        fresh.link("heart attack")
        seconds = []
        for _ in range(4):
            started = time.perf_counter()
            fresh.annotate_many(texts, config)
            seconds.append(time.perf_counter() - started)
        print(f"| {name} | {len(texts) / seconds[0]:.0f} | {len(texts) / statistics.median(seconds[1:]):.0f} |")
    if tagger is not None:
        started = time.perf_counter()
        tagger.tag(texts)
        print(f"span tagger alone: {len(texts) / (time.perf_counter() - started):.0f} documents/s")


if __name__ == "__main__":
    main()
