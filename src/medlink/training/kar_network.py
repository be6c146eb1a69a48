"""The keywords attentive ranker as a torch module, and its export to ONNX (Liang et al. 2021, §3.2, eq. 9–11).

A BERT encoder reads ``[CLS] [PS] [PT] mention [SEP] candidate [SEP]``; the attention rows of [PS] and [PT] are
limited to the site and type keywords (eq. 9: the attention mask multiplied in, here as an additive mask, which
is the same after the softmax renormalizes). The outputs at [CLS], [PS] and [PT] are averaged and a linear layer
gives one logit; the loss is binary cross-entropy against "this candidate is the mention's concept" (eq. 10–11).
Without keywords the logit reads [CLS] alone (the plain cross-encoder).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from medlink.linking.rerank.inputs import KEYWORD_ROWS

ONNX_OPSET = 17


class KarNetwork(nn.Module):
    """``mean_pooled``: a plain cross-encoder reads the mean of the pair's tokens instead of the first token's
    state (for a base trained with mean pooling, such as e5, whose first token was never a summary)."""

    def __init__(self, encoder: nn.Module, hidden_size: int, keywords: bool, mean_pooled: bool = False) -> None:
        super().__init__()
        self.encoder = encoder
        self.keywords = keywords
        self.mean_pooled = mean_pooled and not keywords
        self.head = nn.Linear(hidden_size, 1)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        keyword_mask: torch.Tensor,
    ) -> torch.Tensor:
        keys = attention_mask[:, None, :].bool()  # (batch, 1, tokens): no token reads padding
        rows = keys.expand(-1, input_ids.shape[1], -1)
        if self.keywords:
            rows = torch.cat([rows[:, :1], keyword_mask.bool() & keys, rows[:, 1 + KEYWORD_ROWS :]], dim=1)
        dtype = self.head.weight.dtype
        additive = (~rows)[:, None].to(dtype) * torch.finfo(dtype).min
        hidden = self.encoder(
            input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=additive
        ).last_hidden_state
        if self.keywords:
            pooled = hidden[:, : 1 + KEYWORD_ROWS].mean(dim=1)
        elif self.mean_pooled:
            weights = attention_mask[:, :, None].to(hidden.dtype)
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        else:
            pooled = hidden[:, 0]
        return self.head(pooled).squeeze(-1)


def load_network(source: str | Path, keywords: bool, mean_pooled: bool = False) -> KarNetwork:
    """A ranker initialized from an encoder (a model folder or a Hugging Face name); the head starts at zero so
    that the first steps do not push the encoder around at random."""
    from transformers import AutoModel

    encoder = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    network = KarNetwork(encoder, int(encoder.config.hidden_size), keywords, mean_pooled)
    nn.init.zeros_(network.head.weight)
    nn.init.zeros_(network.head.bias)
    return network


def export_network(
    network: KarNetwork, staging: Path, sample: dict[str, torch.Tensor], quantize: str, tokenizer: Any
) -> None:
    """``staging/model.onnx`` and ``staging/tokenizer.json``: inputs ``input_ids``, ``token_type_ids``,
    ``attention_mask`` and ``keyword_mask``, output ``logits`` (batch,); ``quantize`` ``int8`` or ``none`` as for
    encoders (:func:`medlink.encoders.onnx.finish_export`)."""
    from medlink.encoders.onnx import finish_export

    names = ["input_ids", "token_type_ids", "attention_mask", "keyword_mask"]
    axes: dict[str, dict[int, str]] = {name: {0: "batch", 1: "tokens"} for name in names[:3]}
    axes["keyword_mask"] = {0: "batch", 2: "tokens"}
    axes["logits"] = {0: "batch"}
    fp32 = staging / "model.fp32.onnx"
    with warnings.catch_warnings(), torch.no_grad():  # the tracer's notes on control flow concern the exporter
        warnings.simplefilter("ignore")
        torch.onnx.export(
            network.eval(),
            tuple(sample[name] for name in names),
            str(fp32),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=ONNX_OPSET,
            dynamo=False,
        )
    finish_export(fp32, staging, quantize, tokenizer)
