"""Hugging Face transformer encoders: a local folder or any hub name (SapBERT, PubMedBERT, our trained models).

Loading from the hub needs internet; everything medlink tests and ships runs from local folders. Pooling is read
from a sentence-transformers ``1_Pooling/config.json`` when the folder has one (mean for all-MiniLM, [CLS] for
SapBERT-style models), or given explicitly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medlink.encoders.base import EncoderIdentity, l2_normalize, length_sorted_batches, prepare_text
from medlink.encoders.count_head import ConceptCountPredictor
from medlink.folders import sha256_of

DEFAULT_MAX_LENGTH = 32  # tokens; biomedical names and mentions are short, and cost grows with length
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def detect_pooling(model_dir: Path) -> str | None:
    config = model_dir / "1_Pooling" / "config.json"
    if not config.exists():
        return None
    settings = json.loads(config.read_text())
    if settings.get("pooling_mode_cls_token"):
        return "cls"
    if settings.get("pooling_mode_mean_tokens"):
        return "mean"
    return None


def write_pooling_layout(folder: Path, dimension: int, pooling: str) -> None:
    """The sentence-transformers files around a transformer's weights: ``1_Pooling/config.json`` (what
    :func:`detect_pooling` reads) and ``modules.json`` (transformer, pooling, normalization)."""
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps(
            {
                "word_embedding_dimension": dimension,
                "pooling_mode_cls_token": pooling == "cls",
                "pooling_mode_mean_tokens": pooling == "mean",
            },
            indent=2,
        )
    )
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
            ],
            indent=2,
        )
    )


def model_weights_sha256(model: str | Path) -> str:
    """Checksum of the weight file, from the folder or from the local hub cache."""
    folder = Path(model)
    for name in _WEIGHT_FILES:
        candidate = folder / name
        if not candidate.exists() and not folder.exists():
            from transformers.utils import cached_file

            resolved = cached_file(str(model), name, _raise_exceptions_for_missing_entries=False)
            candidate = Path(resolved) if resolved else candidate
        if candidate.exists():
            return sha256_of(candidate)
    return "unknown"


class TransformerEncoder:
    """Mean- or [CLS]-pooled transformer embeddings, L2-normalized, computed in length-sorted batches."""

    def __init__(
        self, model: str | Path, pooling: str | None = None, max_length: int = DEFAULT_MAX_LENGTH, device: str = "cpu"
    ) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.model_name = str(model)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name)
        # float32 whatever the checkpoint stores: fp16 weights (half the size) still compute in fp32.
        self.device = torch.device(device)
        self.model = AutoModel.from_pretrained(self.model_name, dtype=torch.float32).eval().to(self.device)
        self.pooling = pooling or (detect_pooling(Path(model)) if Path(model).exists() else None) or "cls"
        if self.pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', not {self.pooling!r}")
        self.max_length = max_length
        self._identity: EncoderIdentity | None = None
        self.count_head = ConceptCountPredictor.load(model) if Path(model).is_dir() else None

    @property
    def dimension(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def identity(self) -> EncoderIdentity:
        if self._identity is None:
            self._identity = EncoderIdentity(
                kind="transformer",
                model=self.model_name,
                weights_sha256=model_weights_sha256(self.model_name),
                pooling=self.pooling,
                max_length=self.max_length,
                dimension=self.dimension,
            )
        return self._identity

    def tokenize(self, texts: Sequence[str]) -> dict:
        return self.tokenizer(
            [prepare_text(t) for t in texts],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="np",
        )

    def encode(self, texts: Sequence[str], batch_size: int = 128, progress: bool = False) -> np.ndarray:
        import torch
        from tqdm import tqdm

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        batches = length_sorted_batches(texts, batch_size)
        with torch.inference_mode():
            for batch in tqdm(batches, desc="encoding", unit=" batches", disable=not progress):
                encoded = self.tokenize([texts[i] for i in batch])
                inputs = {key: torch.from_numpy(value).to(self.device) for key, value in encoded.items()}
                hidden = self.model(**inputs).last_hidden_state.float().cpu().numpy()
                out[batch] = pool(hidden, encoded["attention_mask"], self.pooling)
        return l2_normalize(out)


def pool(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str) -> np.ndarray:
    """Token states → one vector per text: the mean over real tokens, or the [CLS] state."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask[..., None].astype(np.float32)
    return (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)


def pool_torch(hidden, attention_mask, pooling: str):
    """:func:`pool` for torch tensors, keeping the graph for training."""
    if pooling == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
