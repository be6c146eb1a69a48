"""What every term encoder is: texts in, L2-normalized float32 vectors out, with an identity indexes record."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from medlink.encoders.count_head import ConceptCountPredictor

_SPACES = re.compile(r"\s+")


def prepare_text(text: str) -> str:
    """What an encoder is given for a name or mention: NFKC, whitespace collapsed. Case and punctuation stay,
    because the transformer's tokenizer knows what to do with them."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip()


@dataclass(frozen=True)
class EncoderIdentity:
    """Everything that changes the vectors an encoder produces. An index built with one identity refuses to be
    searched with another."""

    kind: str  # "transformer", "onnx", "tfidf"
    model: str  # name or path as the user gave it
    weights_sha256: str
    pooling: str
    max_length: int
    dimension: int
    input: str = "nfkc-collapsed-whitespace"
    quantization: str = "none"

    def fingerprint(self) -> str:
        payload = json.dumps({k: v for k, v in asdict(self).items() if k != "model"}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class Encoder(Protocol):
    """A term encoder. ``encode`` returns an ``(n, dimension)`` float32 array of unit-length rows."""

    @property
    def identity(self) -> EncoderIdentity: ...

    @property
    def dimension(self) -> int: ...

    @property
    def count_head(self) -> ConceptCountPredictor | None:
        """Liang et al.'s concept-count head, when the encoder was trained with one (``medlink train --count-head``)."""
        ...

    def encode(self, texts: Sequence[str], batch_size: int = 128, progress: bool = False) -> np.ndarray: ...


class KnownIdentity:
    """For encoders whose identity is fixed when they are opened: ``identity`` and ``dimension`` from it."""

    _identity: EncoderIdentity

    @property
    def identity(self) -> EncoderIdentity:
        return self._identity

    @property
    def dimension(self) -> int:
        return self._identity.dimension


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit-length rows; an all-zero row (empty text) stays zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def length_sorted_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, so padding (and wasted compute) stays small."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
