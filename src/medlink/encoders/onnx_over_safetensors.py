"""An exported ONNX graph that reads its weights from the model's own ``model.safetensors``.

The default encoder ships as fp16 safetensors (what torch, training and the torch backend load). ONNX Runtime needs
a graph, and exporting one takes torch and about fifteen seconds on a user's first run. Shipping an exported copy
would double the weights in the wheel, so the shipped graph holds no weights at all: each weight is an ONNX
*external data* reference to its bytes inside the safetensors file (which stores raw little-endian tensors at known
offsets), declared fp16 and followed by a ``Cast`` to fp32 — and a ``Transpose`` where the exporter stored a
linear layer's weight transposed. ONNX Runtime folds those at session start, so the session computes with exactly
the fp32 values an export of the same file would hold, and the vectors are the export's.

:func:`graph_over_safetensors` makes such a graph from an ordinary export; scripts/package_default_model.py runs
it, and a test checks that the shipped graph encodes as a fresh export does.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError

_ONNX_FLOAT, _ONNX_FLOAT16 = 1, 10  # onnx.TensorProto data types


@dataclass(frozen=True)
class StoredTensor:
    """One fp16 tensor of a safetensors file: its name, shape and byte range in the file."""

    name: str
    shape: tuple[int, ...]
    offset: int
    length: int


def safetensors_layout(path: Path) -> dict[str, StoredTensor]:
    """The fp16 tensors of ``path`` by name, with their absolute byte ranges."""
    with path.open("rb") as stream:
        (header_size,) = struct.unpack("<Q", stream.read(8))
        header = json.loads(stream.read(header_size))
    layout = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F16":
            continue
        begin, end = info["data_offsets"]
        layout[name] = StoredTensor(name, tuple(info["shape"]), 8 + header_size + begin, end - begin)
    return layout


def graph_over_safetensors(exported: Path, weights: Path, target: Path) -> int:
    """Write ``target`` (beside ``weights``, which it reads by file name): the graph of ``exported`` with every
    fp32 weight found in ``weights`` (as stored, or transposed) replaced by a reference to it. Returns how many
    weights were replaced; the ones not found (small buffers the exporter made) stay inside the graph."""
    import onnx
    from onnx import helper, numpy_helper

    if target.parent.resolve() != weights.parent.resolve():
        raise MedlinkError(f"{target}: the graph must sit beside {weights.name}, which it names by file name")
    model = onnx.load(str(exported))
    stored = safetensors_layout(weights)
    by_shape: dict[tuple[int, ...], list[tuple[StoredTensor, np.ndarray]]] = {}
    for tensor in stored.values():
        by_shape.setdefault(tensor.shape, []).append((tensor, _read_fp16(weights, tensor)))
    kept, casts = [], []
    for initializer in model.graph.initializer:
        value = numpy_helper.to_array(initializer)
        found = _find(value, by_shape) if initializer.data_type == _ONNX_FLOAT else None
        if found is None:
            kept.append(initializer)
            continue
        tensor, transposed = found
        kept.append(_external_fp16(f"{initializer.name}.fp16", tensor, weights.name))
        cast_output = f"{initializer.name}.fp32" if transposed else initializer.name
        casts.append(helper.make_node("Cast", [f"{initializer.name}.fp16"], [cast_output], to=_ONNX_FLOAT))
        if transposed:
            casts.append(helper.make_node("Transpose", [cast_output], [initializer.name], perm=[1, 0]))
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    nodes = casts + list(model.graph.node)  # the casts first: the graph's nodes are in topological order
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    target.write_bytes(model.SerializeToString())
    onnx.checker.check_model(str(target))  # by path: the external references are checked against the file
    return sum(node.op_type == "Cast" for node in casts)


def _read_fp16(path: Path, tensor: StoredTensor) -> np.ndarray:
    with path.open("rb") as stream:
        stream.seek(tensor.offset)
        data = stream.read(tensor.length)
    return np.frombuffer(data, dtype="<f2").reshape(tensor.shape).astype(np.float32)


def _find(
    value: np.ndarray,
    by_shape: dict[tuple[int, ...], list[tuple[StoredTensor, np.ndarray]]],
) -> tuple[StoredTensor, bool] | None:
    """The stored tensor equal to ``value`` bit for bit, and whether it is stored transposed."""
    for tensor, stored in by_shape.get(value.shape, ()):
        if np.array_equal(stored, value):
            return tensor, False
    if value.ndim == 2:
        for tensor, stored in by_shape.get(value.shape[::-1], ()):
            if np.array_equal(stored.T, value):
                return tensor, True
    return None


def _external_fp16(name: str, tensor: StoredTensor, location: str) -> Any:
    from onnx import TensorProto

    proto = TensorProto(name=name, data_type=_ONNX_FLOAT16, dims=list(tensor.shape))
    proto.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(tensor.offset)), ("length", str(tensor.length))):
        entry = proto.external_data.add()
        entry.key, entry.value = key, value
    return proto
