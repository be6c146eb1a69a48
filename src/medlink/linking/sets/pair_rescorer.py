"""The set ranker's second stage: a cross-encoder reads the mention together with each of the ranker's best
candidate names (ERNIE-Health's pair classifier for CHIP-CDN, issue 42), and its logit is fused with the ranker's
probability.

The ranker's ``depth`` most probable candidates are read. Their fused probability is a logistic model over the
logit of the ranker's probability, the cross-encoder's logit, and that logit's distance below the mention's best
one; the mention claims the read candidates whose fused probability is above the rescorer's threshold (at least
the best), and the candidates it did not read follow, in the ranker's order. The fusion and the threshold were fitted
on training mentions the cross-encoder never saw, with the ranker's out-of-fold probabilities
(``training/pair_rescorer_fit.py``).

A rescorer is the ``rescorer/`` folder of a ranker: ``rescorer.json`` (the card below), ``model.onnx`` and
``tokenizer.json``. It is refused beside another ranker model than the one it was fitted with.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.linking.rerank.pair_model import PairModel

RESCORER_FORMAT = "medlink-pair-rescorer-1"
RESCORER_FOLDER, RESCORER_CARD = "rescorer", "rescorer.json"
FUSION_FEATURES = ("ranker_logit", "pair_logit", "below_best_pair_logit")


@dataclass(frozen=True)
class RescorerCard:
    """depth: candidates read per mention. weights / bias: the fusion over :data:`FUSION_FEATURES`. threshold: the
    claiming threshold on the fused probability. ranker: fingerprint of the ranker model it was fitted beside."""

    depth: int
    max_length: int
    weights: tuple[float, ...]
    bias: float
    threshold: float
    ranker: str
    base_model: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": RESCORER_FORMAT, "features": list(FUSION_FEATURES), **asdict(self)}

    @classmethod
    def read(cls, folder: Path) -> RescorerCard:
        path = folder / RESCORER_CARD
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise MedlinkError(f"{path}: line {error.lineno}: not JSON ({error.msg})") from None
        if payload.get("format") != RESCORER_FORMAT or payload.get("features") != list(FUSION_FEATURES):
            raise MedlinkError(
                f"{path}: rescorer format {payload.get('format')!r} from another medlink version; "
                "train it again with `medlink train pair-rescorer`"
            )
        try:
            return cls(
                int(payload["depth"]),
                int(payload["max_length"]),
                tuple(float(w) for w in payload["weights"]),
                float(payload["bias"]),
                float(payload["threshold"]),
                str(payload["ranker"]),
                str(payload.get("base_model", "")),
                dict(payload.get("report", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise MedlinkError(f"{path}: incomplete rescorer card ({error!r})") from None


def ranker_fingerprint(model: Any, threshold: float) -> str:
    """Fingerprint of a ranker's fitted model and threshold (what the fusion was fitted beside)."""
    payload = json.dumps({"model": asdict(model), "threshold": threshold}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def fusion_features(probabilities: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """:data:`FUSION_FEATURES` of one mention's read candidates (ranker probabilities and pair logits)."""
    clipped = np.clip(probabilities.astype(np.float64), 1e-6, 1 - 1e-6)
    pair = logits.astype(np.float64)
    return np.column_stack([np.log(clipped / (1 - clipped)), pair, pair.max(initial=0.0) - pair if len(pair) else pair])


def fused_probability(features: np.ndarray, weights: Sequence[float], bias: float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(features @ np.asarray(weights, dtype=np.float64) + bias)))


class PairRescorer:
    """Reads a ranker's best candidates with the cross-encoder and fuses (see the module text)."""

    def __init__(self, folder: Path, card: RescorerCard) -> None:
        self.folder, self.card = folder, card
        self.model = PairModel(folder, card.max_length)

    @classmethod
    def load(cls, folder: Path, ranker: str) -> PairRescorer:
        card = RescorerCard.read(folder)
        if card.ranker != ranker:
            raise MedlinkError(
                f"{folder}: fitted beside another ranker model (fingerprint {card.ranker}, this "
                f"ranker's {ranker}); train it again with `medlink train pair-rescorer`"
            )
        for needed in ("model.onnx", "tokenizer.json"):
            if not (folder / needed).is_file():
                raise MedlinkError(f"{folder} is not a complete rescorer: {needed} is missing")
        return cls(folder, card)

    def read_candidates(self, mentions: Sequence[str], names: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Per mention, the pair logits of its first names (at most ``depth``), one batch for all."""
        flat_mentions = [m for m, ns in zip(mentions, names, strict=True) for _ in ns[: self.card.depth]]
        flat_names = [n for ns in names for n in ns[: self.card.depth]]
        logits = self.model.logits(flat_mentions, flat_names)
        return np.split(logits, np.cumsum([min(len(ns), self.card.depth) for ns in names])[:-1]) if names else []

    def fuse(self, probabilities: np.ndarray, logits: np.ndarray) -> np.ndarray:
        return fused_probability(fusion_features(probabilities, logits), self.card.weights, self.card.bias)
