"""The training loop: AdamW with linear warm-up and decay, gradient accumulation, layer freezing, fixed seeds,
checkpoints every N optimizer steps and resumption after an interruption, a progress bar with the loss.

Work happens in ``.NAME.training`` beside the output folder; running the same command again resumes from its
checkpoint (a different configuration starts over). The finished model replaces the output folder in one rename.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import torch

from medlink.training import runtime
from medlink.training.config import TrainConfig
from medlink.training.examples import Examples
from medlink.training.losses import RelationMultiSimilarityLoss
from medlink.training.losses.multi_task import ConceptCountHead, count_loss
from medlink.training.model import TermEncoderModel
from medlink.training.registry import LOSSES, SAMPLERS, resolve
from medlink.training.runtime import TrainResult
from medlink.training.samplers.relation_batches import RelationBatchSampler

__all__ = ["TrainConfig", "TrainResult", "train"]


def train(
    base: str | Path, examples: Examples, output: Path | str, config: TrainConfig | None = None, progress: bool = True
) -> TrainResult:
    config = config or TrainConfig()
    loss_class = resolve(LOSSES, config.loss, "loss")
    make_sampler = resolve(SAMPLERS, config.sampler, "sampler")
    output, workdir, device = runtime.start_run(output, config)
    model = TermEncoderModel(base, max_length=config.max_length).to(device)
    model.freeze(config.freeze_layers)
    loss_function = loss_class()
    sampler = make_sampler(config, examples, model)
    relations = RelationBatchSampler(examples, config.relation_batch, config.seed) if config.relation_weight else None
    relation_loss = RelationMultiSimilarityLoss(len(relations.relation_names), model.dimension) if relations else None
    if relation_loss is not None:
        relation_loss.to(device)
    head = ConceptCountHead(model.dimension).to(device) if config.count_weight else None
    if head is not None and not any(examples.counts):
        raise ValueError("a concept-count head needs training mentions with their concept counts")
    steps_per_epoch = max(1, len(sampler) // config.accumulation)
    total_steps = config.max_steps or steps_per_epoch * config.epochs
    trained = [p for p in model.parameters() if p.requires_grad]
    extra = [*(relation_loss.parameters() if relation_loss else ()), *(head.parameters() if head else ())]
    optimizer = torch.optim.AdamW(trained + extra, lr=config.lr)
    scheduler = runtime.linear_warmup_and_decay(optimizer, total_steps, config.warmup)
    # The device is left out of the state: a run interrupted on a GPU may resume on a CPU.
    state = {"config": {**asdict(config), "device": None}, "base": str(base), "examples": len(examples)}
    checkpoint = workdir / "checkpoint.pt"
    with runtime.checkpointed_steps(
        checkpoint,
        state,
        device,
        model,
        optimizer,
        scheduler,
        total_steps,
        config,
        "training",
        progress,
        relation_loss=relation_loss,
        count_head=head,
    ) as steps:
        while not steps.done:
            step = steps.step
            sampler.epoch = (step * config.accumulation) // len(sampler)
            skip = (step * config.accumulation) % len(sampler)  # batches of this epoch done before a resume
            batches = iter(sampler)
            for _ in range(skip):
                next(batches)
            for index, batch in enumerate(batches, start=1):
                texts = [examples.texts[row] for row in batch]
                labels = torch.tensor([examples.labels[row] for row in batch], device=device)
                with runtime.autocast(device):
                    vectors = model(texts).float()
                    loss = loss_function(vectors, labels)
                    if head is not None:
                        loss = loss + config.count_weight * _count_term(head, vectors, batch, examples)
                    if relations is not None and relation_loss is not None:
                        draw = steps.step * config.accumulation + (index - 1) % config.accumulation  # same on resume
                        relation = _relation_term(model, relation_loss, relations, examples, draw)
                        loss = loss + config.relation_weight * relation
                loss = loss / config.accumulation
                if loss.requires_grad:  # all layers frozen and no mention in the batch: nothing to learn here
                    loss.backward()
                if index % config.accumulation:
                    continue
                if steps.take(loss.item() * config.accumulation):
                    break
    model.eval()
    model.to("cpu").save(output, head.predictor() if head is not None else None)
    (output / "medlink_training.json").write_text(json.dumps({**state, "steps": steps.step}, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)
    return TrainResult(steps.step, steps.seconds, steps.last_loss, steps.resumed_from)


def _relation_term(
    model: TermEncoderModel,
    loss: RelationMultiSimilarityLoss,
    relations: RelationBatchSampler,
    examples: Examples,
    draw: int,
) -> torch.Tensor:
    """CODER's L_rel over one batch of triples, heads and tails encoded in one pass."""
    batch = relations.batch(draw)
    vectors = model([examples.texts[row] for row in batch.head_rows + batch.tail_rows])
    heads, tails = vectors[: len(batch.head_rows)], vectors[len(batch.head_rows) :]
    return loss(heads, torch.tensor(batch.relation_ids), tails, torch.tensor(batch.tail_labels))


def _count_term(head: ConceptCountHead, vectors: torch.Tensor, batch: list[int], examples: Examples) -> torch.Tensor:
    """Liang et al.'s loss_c over the batch's mention rows (terminology names carry no count); 0 without any."""
    counts = torch.tensor([examples.counts[row] for row in batch], device=vectors.device)
    mentions = counts > 0
    if not mentions.any():
        return vectors.new_zeros(())
    return count_loss(head, torch.nn.functional.normalize(vectors[mentions], dim=1), counts[mentions])
