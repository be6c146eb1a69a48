"""ONNX Runtime encoders, exported once from any transformer encoder and cached as a self-contained folder.

The cached folder (``model.onnx``, ``tokenizer.json``, ``encoder.json``) needs only ``onnxruntime`` and
``tokenizers`` to run: no torch import, which keeps ``medlink link`` start-up short.

Measured on this project's 2-core machine with all-MiniLM-L6-v2 (``benchmarks/dense_linking.py``; numbers in
docs/performance.md): ONNX fp32 encodes about 1.8x faster than PyTorch fp32 with the same vectors, and clears the
650 names/s target on its own. Dynamic int8 (per-channel, MatMul only) is about 2x faster again but drifts a little
(cosine to fp32 about 0.99, and roughly one nearest name in six changes), so fp32 is the default and int8 an option
(``quantize="int8"``) for users who want the speed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import warnings
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from medlink.encoders.base import EncoderIdentity, KnownIdentity, l2_normalize, length_sorted_batches, prepare_text
from medlink.encoders.count_head import ConceptCountPredictor
from medlink.encoders.transformer import pool
from medlink.folders import staged_folder

ONNX_OPSET = 17
EXPORT_FORMAT = f"onnx-export-1-opset{ONNX_OPSET}"  # bump when an export would come out different
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_onnx(
    source: str | Path, target: Path, quantize: str = "none", pooling: str | None = None, max_length: int | None = None
) -> Path:
    """Export a transformer encoder to ``target`` (written to a temporary folder, then renamed)."""
    from medlink.encoders.transformer import DEFAULT_MAX_LENGTH, TransformerEncoder

    encoder = TransformerEncoder(source, pooling=pooling, max_length=max_length or DEFAULT_MAX_LENGTH)
    with staged_folder(target, "encoder.json", "an exported encoder") as staging:
        sample = encoder.tokenizer(["heart attack", "myocardial infarction"], padding=True, return_tensors="pt")
        fp32 = staging / "model.fp32.onnx"
        export_output(encoder.model, sample, fp32, "last_hidden_state", {0: "batch", 1: "tokens"})
        finish_export(fp32, staging, quantize, encoder.tokenizer)
        if encoder.count_head is not None:  # the concept-count head travels with the weights it was trained with
            encoder.count_head.save(staging)
        identity = replace(encoder.identity, kind="onnx", quantization=quantize)
        (staging / "encoder.json").write_text(json.dumps(asdict(identity), indent=2) + "\n")
    return target


def finish_export(fp32: Path, staging: Path, quantize: str, tokenizer: Any) -> None:
    """``staging/model.onnx`` from the exported ``fp32`` graph (int8: dynamic quantization of its MatMuls, per
    channel) and ``staging/tokenizer.json`` from a transformers tokenizer."""
    if quantize == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            str(fp32),
            str(staging / "model.onnx"),
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            weight_type=QuantType.QInt8,
        )
        fp32.unlink()
    elif quantize == "none":
        fp32.rename(staging / "model.onnx")
    else:
        raise ValueError(f"quantize must be 'none' or 'int8', not {quantize!r}")
    tokenizer.save_pretrained(staging / "tokenizer")
    shutil.copy(staging / "tokenizer" / "tokenizer.json", staging / "tokenizer.json")
    shutil.rmtree(staging / "tokenizer")


def export_output(model: Any, sample: Any, fp32: Path, output: str, output_axes: dict[int, str]) -> None:
    """Export one output of a transformers model (``last_hidden_state`` of an encoder, ``logits`` of a classifier:
    the tagger's, the eligibility reranker's) to ``fp32``, with dynamic batch and token axes."""
    import torch

    class _Output(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            outputs = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return getattr(outputs, output)

    if "token_type_ids" not in sample:
        sample["token_type_ids"] = torch.zeros_like(sample["input_ids"])
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS} | {output: output_axes}
    with warnings.catch_warnings():  # the tracer's notes on control flow are about the exporter, not the user
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Output(model),
            tuple(sample[name] for name in _INPUTS),
            str(fp32),
            input_names=list(_INPUTS),
            output_names=[output],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            dynamo=False,
        )


def cpu_session(model: Path, threads: int | None) -> Any:
    """An ONNX Runtime session on the CPU (``threads``: intra-op threads; ``None``: ``OMP_NUM_THREADS`` when set,
    which ONNX Runtime's own pool ignores but worker processes sharing the cores set, else ONNX Runtime's choice)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    threads = threads or threads_from_environment()
    if threads:
        options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(str(mapped_model(model)), options, providers=["CPUExecutionProvider"])


MAPPED_WEIGHTS = "weights.bin"


def mapped_model(model: Path) -> Path:
    """``model`` as ONNX Runtime saves it after its basic optimizations, its weights in fp32 in a file of their
    own, cached: ONNX Runtime maps such a file instead of reading it, so the processes that open one model (a
    service's workers) share its weights in the page cache. Opened from the model itself, an fp16 graph costs
    every process its own fp16 copy and its cast to fp32 (~145 MB private for the default encoder, ~50 with the
    mapped file). ``model`` itself when the cache entry cannot be written."""
    from medlink.folders import cache_root, cached_entry

    try:
        stamp = hashlib.sha256()
        for path in sorted(model.parent.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                stamp.update(f"{path.name}\0{path.stat().st_size}\0{path.stat().st_mtime_ns}\0".encode())
        stamp.update(f"{_ort_version()}\0{model.name}".encode())
        entry = cache_root() / "onnx-mapped" / f"{model.parent.name}-{stamp.hexdigest()[:16]}"
        built = cached_entry(entry, lambda folder: (folder / model.name).exists(), lambda folder: _map(model, folder))
    except (OSError, RuntimeError) as error:  # a read-only cache, a graph ONNX Runtime cannot save
        warnings.warn(f"{model} is opened as it is (its mapped copy could not be made: {error})", stacklevel=3)
        return model
    return built / model.name


def _map(model: Path, entry: Path) -> None:
    import onnxruntime

    with staged_folder(entry, model.name, "a mapped model") as staging:
        options = onnxruntime.SessionOptions()
        # basic only: what the graph becomes is plain ONNX (casts folded), and every session still applies the
        # extended optimizations when it opens it, as it did the original
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(staging / model.name)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", MAPPED_WEIGHTS)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def _ort_version() -> str:
    import onnxruntime

    return str(onnxruntime.__version__)


def threads_from_environment() -> int | None:
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


class OnnxEncoder(KnownIdentity):
    """Runs an exported encoder folder with ONNX Runtime on the CPU.

    Opening one reads its identity and count head only; the ONNX session and the tokenizer (about 60 MB and a
    few hundred milliseconds) are made on the first ``encode``, so a linker that decides by exact match never pays
    for them."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        self.folder = Path(folder)
        self.threads = threads
        self._identity = EncoderIdentity(**json.loads((self.folder / "encoder.json").read_text()))
        self.count_head = ConceptCountPredictor.load(self.folder)
        self._runtime: tuple[Any, list[str], Any] | None = None  # session, its input names, tokenizer
        self._opening = threading.Lock()

    def _session(self) -> tuple[Any, list[str], Any]:
        with self._opening:
            if self._runtime is None:
                from tokenizers import Tokenizer

                session = cpu_session(self.folder / "model.onnx", self.threads)
                tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                tokenizer.enable_truncation(self._identity.max_length)
                tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
                self._runtime = (session, [i.name for i in session.get_inputs()], tokenizer)
            return self._runtime

    def encode(self, texts: Sequence[str], batch_size: int = 128, progress: bool = False) -> np.ndarray:
        from tqdm import tqdm

        session, input_names, tokenizer = self._session()
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for batch in tqdm(
            length_sorted_batches(texts, batch_size), desc="encoding", unit=" batches", disable=not progress
        ):
            encodings = tokenizer.encode_batch([prepare_text(texts[i]) for i in batch])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, {name: feeds[name] for name in input_names})[0]
            out[batch] = pool(hidden, mask, self._identity.pooling)
        return l2_normalize(out)
