"""Distilling a term encoder into a shallower one: fewer layers encode proportionally faster, and encoding is what
bounds linking on a CPU (docs/performance.md).

The student starts as a copy of the teacher that keeps some of its layers (DistilBERT's initialisation: every
other layer, here chosen by index), then learns the teacher's vectors on batches of synonyms
(:class:`~medlink.training.losses.distillation.EmbeddingDistillationLoss`). The teacher runs through medlink's own
encoders (ONNX by default), so it costs one fast forward pass per batch and never needs gradients.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from medlink.encoders.base import Encoder
from medlink.training import runtime
from medlink.training.distill_config import DistillConfig
from medlink.training.examples import Examples
from medlink.training.losses.distillation import EmbeddingDistillationLoss
from medlink.training.model import TermEncoderModel
from medlink.training.samplers.positive_batches import PositiveBatchSampler


@dataclass(frozen=True)
class DistillResult:
    steps: int
    seconds: float
    last_loss: float
    resumed_from: int
    layers: int


def keep_layers(model: TermEncoderModel, layers: Sequence[int]) -> TermEncoderModel:
    """Cut ``model`` down to the given transformer layers (in place), so it saves and loads as a shallower model."""
    stack = model.transformer.encoder.layer
    if not layers or sorted(set(layers)) != list(layers) or layers[0] < 0 or layers[-1] >= len(stack):
        raise ValueError(f"layers must be increasing indexes among the model's {len(stack)}, not {list(layers)}")
    model.transformer.encoder.layer = nn.ModuleList(stack[i] for i in layers)
    model.transformer.config.num_hidden_layers = len(layers)
    return model


def distill(
    teacher: Encoder,
    teacher_model: str | Path,
    examples: Examples,
    output: Path | str,
    config: DistillConfig | None = None,
    progress: bool = True,
) -> DistillResult:
    """Train a student cut from ``teacher_model`` (the teacher's weights folder) to reproduce ``teacher``'s vectors
    on ``examples``' texts. Re-running the same call resumes from its checkpoint, like :func:`~.trainer.train`."""
    config = config or DistillConfig()
    output, workdir, device = runtime.start_run(output, config, "distilling")
    student = keep_layers(TermEncoderModel(teacher_model, max_length=config.max_length), config.layers).to(device)
    for parameter in student.transformer.embeddings.parameters() if config.freeze_embeddings else ():
        parameter.requires_grad = False
    sampler = PositiveBatchSampler(examples.labels, config.batch_size, config.per_concept, config.seed)
    total_steps = config.max_steps or len(sampler)
    loss_function = EmbeddingDistillationLoss(config.relation_weight)
    optimizer = torch.optim.AdamW([p for p in student.parameters() if p.requires_grad], lr=config.lr)
    scheduler = runtime.linear_warmup_and_decay(optimizer, total_steps, config.warmup)
    state = {
        "config": {**asdict(config), "device": None},
        "teacher": teacher.identity.fingerprint(),
        "examples": len(examples),
    }
    checkpoint = workdir / "checkpoint.pt"
    with runtime.checkpointed_steps(
        checkpoint, state, device, student, optimizer, scheduler, total_steps, config, "distilling", progress
    ) as steps:
        while not steps.done:
            sampler.epoch = steps.step // len(sampler)
            batches = iter(sampler)
            for _ in range(steps.step % len(sampler)):  # batches of this epoch done before a resume
                next(batches)
            for batch in batches:
                texts = [examples.texts[row] for row in batch]
                target = torch.from_numpy(teacher.encode(texts)).to(device)
                loss = loss_function(student(texts), target)
                loss.backward()
                if steps.take(loss.item()):
                    break
    student.eval()
    student.to("cpu").save(output)
    manifest = {**state, "steps": steps.step, "distilled": True}
    (output / "medlink_training.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)
    return DistillResult(steps.step, steps.seconds, steps.last_loss, steps.resumed_from, len(config.layers))
