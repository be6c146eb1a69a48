"""How a candidate reranker's decisions are fused with the retriever's: the fusion weight and the margin (which
decisions are close enough to rerank) chosen on held-out mentions, and whether the gain is significant enough
for the reranker to get a say at all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medlink.evaluation.significance import mcnemar
from medlink.linking.rerank.reranker import fuse_with_reranker, is_close
from medlink.linking.results import Candidate
from medlink.training.reranker_config import RerankerFitConfig

FUSION_WEIGHTS = tuple(round(0.05 * i, 2) for i in range(21))
MARGINS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 2.0)  # 2.0: every decision (cosines differ by at most 2)


@dataclass(frozen=True)
class RankingExample:
    """A training mention, its gold concepts, its retriever pool (best first) and whether an exact name match
    would decide it before any retrieval."""

    mention: str
    gold: frozenset[str]
    pool: tuple[Candidate, ...]
    exact: bool


def held_out_accuracy(
    examples: Sequence[RankingExample], logits: np.ndarray, weight: float, margin: float, top_k: int
) -> float:
    """Acc@1 over ``examples`` when decisions closer than ``margin`` are reranked with fusion ``weight``."""
    right = _correct(examples, logits, weight, margin, top_k)
    return round(sum(right) / max(1, len(examples)), 4)


def _correct(
    examples: Sequence[RankingExample], logits: np.ndarray, weight: float, margin: float, top_k: int
) -> list[bool]:
    """Per example, whether its fused decision is right."""
    right, start = [], 0
    for example in examples:
        pool = example.pool[:top_k]
        scores = logits[start : start + len(pool)]
        start += len(pool)
        best = pool[0]
        if is_close(pool, margin):
            fused = fuse_with_reranker(np.array([c.score for c in pool], dtype=np.float32), scores, weight)
            best = pool[int(np.argmax(fused))]
        right.append(best.concept_id in example.gold)
    return right


def fit_fusion(
    examples: Sequence[RankingExample], logits: np.ndarray, config: RerankerFitConfig
) -> tuple[float, float, dict[str, object]]:
    """The fusion weight with the best held-out Acc@1 (ties: more weight on the retriever), then the smallest
    margin that keeps it. The ranker gets a say only when its held-out gain over the retriever is significant
    (McNemar, p < ``config.significance``): a few hundred held-out mentions choose among 21 weights, and a gain
    of a few mentions there did not carry to dev (docs/reranking.md); otherwise the margin is 0 and the linker
    never consults the ranker."""
    everything = MARGINS[-1]
    by_weight = {w: held_out_accuracy(examples, logits, w, everything, config.top_k) for w in FUSION_WEIGHTS}
    weight = max(FUSION_WEIGHTS, key=lambda w: (by_weight[w], w))
    by_margin = {m: held_out_accuracy(examples, logits, weight, m, config.top_k) for m in MARGINS}
    margin = min(m for m in MARGINS if by_margin[m] >= by_margin[everything])
    gain = mcnemar(
        _correct(examples, logits, weight, margin, config.top_k),
        _correct(examples, logits, 1.0, everything, config.top_k),
    )
    report = {
        "held_out_acc@1_retriever": held_out_accuracy(examples, logits, 1.0, everything, config.top_k),
        "held_out_acc@1_ranker_alone": by_weight[0.0],
        "held_out_acc@1_fused": by_margin[margin],
        "held_out_acc@1_by_weight": by_weight,
        "held_out_acc@1_by_margin": {str(m): a for m, a in by_margin.items()},
        "held_out_gain": {
            "only_fused_right": gain.only_a,
            "only_retriever_right": gain.only_b,
            "p_value": gain.p_value,
        },
    }
    if gain.only_a <= gain.only_b or gain.p_value >= config.significance:
        weight, margin = 1.0, 0.0
        report["held_out_acc@1_fused"] = report["held_out_acc@1_retriever"]
    return weight, margin, report
