"""Is this a term at all? A logistic model over the mention's vector and its best score, beside the nil threshold.

A score threshold alone cannot tell "umbrella" (→ Rain, 0.63) from a rare but real mention scoring the same: both
are about as close to their nearest name. The mention's own vector can: non-medical text lies elsewhere in the
space. The model is fitted at calibration (``evaluation/term_model_fit.py``) on the correct dense decisions and a
sample of the terminology's names against medlink's non-medical negatives, and its cut is chosen by the same
accuracy budget as the threshold. It reuses the vectors the dense sieves cached, so it costs one dot product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medlink.linking.sieves.dense import CachingEncoder


@dataclass(frozen=True)
class TermModel:
    """``weights · [vector, best score] + bias``; a decision below ``cut`` makes the mention nil."""

    weights: tuple[float, ...]  # the encoder's dimension, then one for the best score
    bias: float
    cut: float
    encoder: str  # fingerprint of the encoder whose vectors it reads

    def decisions(self, vectors: np.ndarray, scores: Sequence[float]) -> np.ndarray:
        features = np.hstack([vectors, np.asarray(scores, dtype=np.float32).reshape(-1, 1)])
        return features @ np.asarray(self.weights, dtype=np.float32) + self.bias

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": [round(w, 6) for w in self.weights],
            "bias": self.bias,
            "cut": self.cut,
            "encoder": self.encoder,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TermModel:
        return cls(
            tuple(float(w) for w in data["weights"]), float(data["bias"]), float(data["cut"]), str(data["encoder"])
        )


class TermJudge:
    """The linker's term test: a :class:`TermModel` over the vectors of the encoder the dense sieves share."""

    def __init__(self, model: TermModel, encoder: CachingEncoder) -> None:
        if len(model.weights) != encoder.dimension + 1:
            raise ValueError(
                f"term model of {len(model.weights) - 1} dimensions for a {encoder.dimension}-dimensional encoder"
            )
        if model.encoder != encoder.identity.fingerprint():
            raise ValueError("the term model was fitted on another encoder's vectors")
        self.model, self.encoder = model, encoder

    @property
    def cut(self) -> float:
        return self.model.cut

    def decisions(self, texts: Sequence[str], scores: Sequence[float]) -> list[float]:
        return self.model.decisions(self.encoder.encode(list(texts)), scores).tolist()
