"""Benchmark: Acc@1 of a linker with each given reranker against the same linker without one, with McNemar's test
and a paired bootstrap interval per pair (issue 18's ablation table). Prints Markdown rows.

    python benchmarks/rerank_accuracy.py --index INDEX --corpus pubtator:…/NCBItestset_corpus.txt \\
        --reranker "KAR=rr-kar" --reranker "plain=rr-plain" --reranker "ms-marco zero-shot=rr-msmarco"
"""

from __future__ import annotations

import argparse
from pathlib import Path

from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.runner import evaluate
from medlink.evaluation.significance import mcnemar, paired_bootstrap
from medlink.linking import Linker, LinkerConfig


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--entity-type", default=None)
    parser.add_argument("--reranker", action="append", default=[], metavar="NAME=DIR")
    args = parser.parse_args()
    corpus = load_corpus(args.corpus, args.entity_type)
    base = evaluate(Linker.load(args.index, config=LinkerConfig(rerank=False)), corpus)
    plain = base.scores.correct_at_1
    print(f"{corpus.name}, n={base.scores.n}\n")
    print(
        "| system | Acc@1 | Acc@5 | reranked | only this right | only no-rerank right | Δ (points) | 95 % interval "
        "| p |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    print(f"| no rerank | {100 * base.scores.accuracy[1]:.2f} | {100 * base.scores.accuracy[5]:.2f} | | | | | | |")
    for spec in args.reranker:
        name, _, folder = spec.partition("=")
        linker = Linker.load(args.index, reranker=Path(folder))
        scored = evaluate(linker, corpus)
        ours = scored.scores.correct_at_1
        reranked = sum(1 for text in dict.fromkeys(scored.mentions) if "reranked" in linker.link(text).reason)
        test = mcnemar(ours, plain)
        interval = paired_bootstrap(ours, plain, samples=2000)
        print(
            f"| {name} | {100 * scored.scores.accuracy[1]:.2f} | {100 * scored.scores.accuracy[5]:.2f} | "
            f"{reranked} | {test.only_a} | {test.only_b} | {100 * interval.difference:+.2f} | "
            f"[{100 * interval.low:+.2f}, {100 * interval.high:+.2f}] | {test.p_value:.2g} |"
        )


if __name__ == "__main__":
    main()
