"""How many concepts a mention names, predicted from its vector (Liang et al. 2021, §3.1.3 and eqs. 6–8).

A linear layer over the mention's unit vector scores the classes "1", "2" and "3 or more" concepts. It is trained
with the encoder (``medlink train --count-head W``), saved beside the weights as ``count_head.json`` (plain numbers,
so the ONNX encoder and the linker need no torch), and read by the linker to decide how many of a dense sieve's
candidates a mention claims.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

COUNT_HEAD_FILE = "count_head.json"


@dataclass(frozen=True)
class ConceptCountPredictor:
    """``weights``: (classes, dimension); class ``c`` means ``c + 1`` concepts, the last class "that many or more"."""

    weights: np.ndarray
    bias: np.ndarray

    def __post_init__(self) -> None:
        if self.weights.ndim != 2 or self.bias.shape != (self.weights.shape[0],):
            raise ValueError(f"count head: weights {self.weights.shape} and bias {self.bias.shape} do not match")

    @property
    def dimension(self) -> int:
        return int(self.weights.shape[1])

    def predict(self, vectors: np.ndarray) -> np.ndarray:
        """The predicted number of concepts per row of ``vectors`` (1 … classes)."""
        if vectors.shape[1] != self.dimension:
            raise ValueError(f"count head expects {self.dimension}-dimensional vectors, got {vectors.shape[1]}")
        return (vectors @ self.weights.T + self.bias).argmax(axis=1) + 1

    def save(self, folder: Path | str) -> Path:
        path = Path(folder) / COUNT_HEAD_FILE
        payload = {
            "classes": [f"{c + 1}" for c in range(len(self.bias))],
            "input": "unit mention vector",
            "weights": self.weights.tolist(),
            "bias": self.bias.tolist(),
        }
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(payload))
        partial.replace(path)
        return path

    @classmethod
    def load(cls, folder: Path | str) -> ConceptCountPredictor | None:
        """The head saved in a model folder, or ``None`` when it has none."""
        path = Path(folder) / COUNT_HEAD_FILE
        if not path.is_file():
            return None
        try:
            payload = json.loads(path.read_text())
            return cls(np.asarray(payload["weights"], dtype=np.float32), np.asarray(payload["bias"], dtype=np.float32))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}: not a count head ({error})") from None
