"""The rerank stage: a cross-encoder reads the mention beside each of a retrieval decision's candidates, and its
probability is fused with the retriever's cosine (Liang et al. 2021, §3.2–3.3).

Fusion (eq. 12–13): ``s = w · cosine + (1 − w) · sigmoid(logit)``. The paper fuses ``1 − d / Σd`` over Euclidean
distances; medlink's vectors are unit length, so the cosine carries the same order and ``w`` (fitted on held-out
training mentions by ``medlink train candidate-reranker``) absorbs the scale. Only retrieval decisions whose two best
candidates are within ``margin`` of each other are reranked: the rest are decided clearly by the retriever, and
skipping them is most of the speed. The decided concept's ``score`` stays the retriever's cosine, so the nil
threshold calibrated on it keeps its meaning; each candidate carries its fused score in ``rerank_score``.

A reranker folder (``medlink train candidate-reranker``) holds ``reranker.json`` (the card below), ``keywords.json``,
``model.onnx`` and ``tokenizer.json``; it is refused over another terminology or retriever encoder than it was
trained for, since its fusion weight and margin were fitted on that retriever's candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.folders import read_manifest_json
from medlink.linking.rerank.keywords import KeywordLexicon
from medlink.linking.rerank.pair_model import PairModel
from medlink.linking.results import Candidate, LinkResult, Stage

RERANKER_FORMAT = "medlink-reranker-1"
CARD_FILE = "reranker.json"
KEYWORDS_FILE = "keywords.json"
RERANKED = (Stage.DENSE, Stage.SPARSE, Stage.HYBRID)


@dataclass(frozen=True)
class RerankerCard:
    """What a reranker folder holds besides its weights.

    keywords: whether the model is the keywords attentive ranker (else a plain cross-encoder).
    fusion_weight: ``w`` of the fusion, the retriever's share.
    margin: rerank a decision only when its two best candidates' cosines are closer than this.
    top_k: candidates read per decision.
    terminology / retriever: fingerprints of the terminology and of the retriever's encoder it was fitted on.
    """

    keywords: bool
    fusion_weight: float
    margin: float
    top_k: int
    max_length: int
    terminology: str
    retriever: str
    base_model: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RERANKER_FORMAT,
            "keywords": self.keywords,
            "fusion_weight": self.fusion_weight,
            "margin": self.margin,
            "top_k": self.top_k,
            "max_length": self.max_length,
            "terminology": self.terminology,
            "retriever": self.retriever,
            "base_model": self.base_model,
            "report": self.report,
        }

    @classmethod
    def read(cls, folder: Path) -> RerankerCard:
        path = folder / CARD_FILE
        missing = f"{folder} is not a reranker: {CARD_FILE} is missing (make one with medlink train candidate-reranker)"
        payload = read_manifest_json(path, MedlinkError, missing)
        if payload.get("format") != RERANKER_FORMAT:
            raise MedlinkError(
                f"{path}: reranker format {payload.get('format')!r}; this medlink reads "
                f"{RERANKER_FORMAT!r} (train it again with medlink "
                "train candidate-reranker)"
            )
        try:
            return cls(
                bool(payload["keywords"]),
                float(payload["fusion_weight"]),
                float(payload["margin"]),
                int(payload["top_k"]),
                int(payload["max_length"]),
                str(payload["terminology"]),
                str(payload["retriever"]),
                str(payload.get("base_model", "")),
                dict(payload.get("report", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise MedlinkError(f"{path}: incomplete reranker card ({error!r})") from None


def fuse_with_reranker(cosines: np.ndarray, logits: np.ndarray, weight: float) -> np.ndarray:
    """Eq. 12 with cosines for the retriever's side: ``w · cosine + (1 − w) · sigmoid(logit)``."""
    return weight * cosines + (1.0 - weight) / (1.0 + np.exp(-logits))


def is_close(candidates: Sequence[Candidate], margin: float) -> bool:
    """Whether a decision is close enough to rerank: its two best candidates' cosines differ by less than
    ``margin`` (what the linker asks, and what training measures the margin with)."""
    return len(candidates) > 1 and candidates[0].score - candidates[1].score < margin


class Reranker:
    """Reranks retrieval decisions with an ONNX cross-encoder (see the module text)."""

    def __init__(
        self,
        folder: Path,
        card: RerankerCard,
        lexicon: KeywordLexicon | None,
        threads: int | None = None,
        batch_size: int = 64,
    ) -> None:
        self.folder, self.card, self.batch_size = folder, card, batch_size
        self.model = PairModel(folder, card.max_length, lexicon, threads, batch_size)

    @classmethod
    def load(cls, folder: Path | str, terminology_fingerprint: str, retriever_fingerprint: str) -> Reranker:
        """The reranker in ``folder``, refused when fitted for another terminology or retriever encoder."""
        folder = Path(folder)
        card = RerankerCard.read(folder)
        for what, ours, theirs in (
            ("terminology", terminology_fingerprint, card.terminology),
            ("retriever encoder", retriever_fingerprint, card.retriever),
        ):
            if ours != theirs:
                raise MedlinkError(
                    f"{folder} was trained for another {what} (fingerprint {theirs}, this linker's is "
                    f"{ours}); train one for this index with medlink train candidate-reranker, or "
                    f"link with --no-rerank"
                )
        for needed in ("model.onnx", "tokenizer.json") + ((KEYWORDS_FILE,) if card.keywords else ()):
            if not (folder / needed).is_file():
                raise MedlinkError(f"{folder} is not a complete reranker: {needed} is missing")
        lexicon = KeywordLexicon.load(folder / KEYWORDS_FILE) if card.keywords else None
        return cls(folder, card, lexicon)

    def logits(self, mentions: Sequence[str], names: Sequence[str]) -> np.ndarray:
        """The cross-encoder's logit per (mention, name) pair."""
        return self.model.logits(mentions, names)

    def needs_rerank(self, result: LinkResult) -> bool:
        return result.stage in RERANKED and is_close(result.candidates, self.card.margin)

    def rerank(self, results: Sequence[LinkResult], preferred_name: Callable[[str], str]) -> list[LinkResult]:
        """``results`` with every close retrieval decision reordered by fused score; the others unchanged.
        ``preferred_name`` gives a concept's preferred name (the terminology's)."""
        chosen = [i for i, result in enumerate(results) if self.needs_rerank(result)]
        if not chosen:
            return list(results)
        mentions, names = [], []
        for i in chosen:
            for candidate in results[i].candidates[: self.card.top_k]:
                mentions.append(results[i].mention)
                names.append(candidate.name)
        logits = self.logits(mentions, names)
        reranked = list(results)
        start = 0
        for i in chosen:
            count = min(len(results[i].candidates), self.card.top_k)
            reranked[i] = self._reordered(results[i], logits[start : start + count], preferred_name)
            start += count
        return reranked

    def _reordered(self, result: LinkResult, logits: np.ndarray, preferred_name: Callable[[str], str]) -> LinkResult:
        read = result.candidates[: len(logits)]
        fused = fuse_with_reranker(np.array([c.score for c in read], dtype=np.float32), logits, self.card.fusion_weight)
        order = np.argsort(-fused, kind="stable")
        scored = [replace(read[j], rerank_score=round(float(fused[j]), 6)) for j in order]
        candidates = (*scored, *result.candidates[len(logits) :])
        best: Candidate = scored[0]
        moved = "" if best.concept_id == result.candidates[0].concept_id else f", moved up from rank {order[0] + 1}"
        why = f"{result.reason}; reranked: {best.name!r} fused score {fused[order[0]]:.3f}{moved}"
        return replace(
            result,
            concepts=(best.concept_id,),
            score=best.score,
            matched_name=best.name,
            preferred_names=(preferred_name(best.concept_id),),
            candidates=candidates,
            reason=why,
        )
