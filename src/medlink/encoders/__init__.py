"""Term encoders: texts → L2-normalized vectors (transformers, ONNX Runtime), each with a recorded identity."""

from medlink.encoders.base import Encoder, EncoderIdentity, l2_normalize, prepare_text
from medlink.encoders.registry import load_encoder, packaged_minilm_path

__all__ = ["Encoder", "EncoderIdentity", "l2_normalize", "load_encoder", "packaged_minilm_path", "prepare_text"]
