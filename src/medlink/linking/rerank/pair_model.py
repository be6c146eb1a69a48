"""An ONNX cross-encoder folder (``model.onnx``, ``tokenizer.json``) read as one function: a logit per (mention,
name) pair. The rerank stage (``reranker.py``) and the set ranker's pair rescorer (``linking/sets/``) both read
mention and candidate together through it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medlink.encoders.base import length_sorted_batches
from medlink.linking.rerank.inputs import PairEncoder
from medlink.linking.rerank.keywords import KeywordLexicon


def pair_batches(mentions: Sequence[str], names: Sequence[str], batch_size: int) -> list[list[int]]:
    """Pair indices in batches of similar length (little padding)."""
    return length_sorted_batches([m + n for m, n in zip(mentions, names, strict=True)], batch_size)


class PairModel:
    """``folder``'s cross-encoder; ``lexicon`` for the keywords attentive ranker, ``None`` for a plain one."""

    def __init__(
        self,
        folder: Path,
        max_length: int,
        lexicon: KeywordLexicon | None = None,
        threads: int | None = None,
        batch_size: int = 64,
    ) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.batch_size = batch_size
        self.pairs = PairEncoder(Tokenizer.from_file(str(folder / "tokenizer.json")), lexicon, max_length)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}  # a zero-shot model takes no keyword mask

    def logits(self, mentions: Sequence[str], names: Sequence[str]) -> np.ndarray:
        """The cross-encoder's logit per (mention, name) pair; pairs of similar length are batched together."""
        out = np.zeros(len(mentions), dtype=np.float32)
        for rows in pair_batches(mentions, names, self.batch_size):
            inputs = self.pairs.encode([mentions[i] for i in rows], [names[i] for i in rows])
            feed = {name: value for name, value in inputs.feed().items() if name in self._inputs}
            out[rows] = np.asarray(self._session.run(None, feed)[0], dtype=np.float32).reshape(len(rows), -1)[:, -1]
        return out
