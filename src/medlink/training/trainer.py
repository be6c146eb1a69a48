"""The training loop: AdamW with linear warm-up and decay, gradient accumulation, layer freezing, fixed seeds,
checkpoints every N optimizer steps and resumption after an interruption, a progress bar with the loss.

Work happens in ``.NAME.training`` beside the output folder; running the same command again resumes from its
checkpoint (a different configuration starts over). The finished model replaces the output folder in one rename.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from medlink.training.examples import Examples
from medlink.training.losses import (
    BatchHardSoftMarginTripletLoss,
    InBatchTripletLoss,
    MultiSimilarityLoss,
    RelationMultiSimilarityLoss,
    SupervisedContrastiveLoss,
)
from medlink.training.model import TermEncoderModel
from medlink.training.samplers.mined_batches import MinedBatchSampler
from medlink.training.samplers.positive_batches import PositiveBatchSampler
from medlink.training.samplers.relation_batches import RelationBatchSampler
from medlink.training.samplers.sibling_batches import SiblingBatchSampler

LOSSES = {
    "batch-hard": BatchHardSoftMarginTripletLoss,
    "ms": MultiSimilarityLoss,
    "contrastive": SupervisedContrastiveLoss,
    "triplet": InBatchTripletLoss,
}
SAMPLERS = ("random", "siblings", "parents", "mined")


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; the defaults are a sensible CPU run on MiniLM."""

    loss: str = "batch-hard"  # in-batch losses over concept labels: "batch-hard" (Xu & Bethard), "ms" (CODER),
    # "contrastive" (supervised InfoNCE, temperature 0.05) or "triplet" (DILBERT, one random triplet per anchor)
    sampler: str = "random"  # "random" concepts per batch, "siblings" grouped by parent, "parents" grouped with
    # their parents, or "mined": grouped with the concepts the model itself confuses them with, re-mined every epoch
    relation_weight: float = 0.0  # μ of CODER's relation term (L = L + μ·L_rel); 0 leaves it out
    relation_batch: int = 64  # (head, relation, tail) triples per step for the relation term
    mined_group: int = 4  # with "mined": a concept and its nearest neighbours per group
    epochs: int = 1
    batch_size: int = 64
    per_concept: int = 2
    lr: float = 2e-5
    warmup: float = 0.1  # share of the optimizer steps spent warming up
    accumulation: int = 1
    max_length: int = 32
    freeze_layers: int = 0
    seed: int = 0
    max_steps: int | None = None
    checkpoint_every: int = 200
    time_limit: float | None = None  # seconds: stop after the step that reaches it (equal-time comparisons)


@dataclass(frozen=True)
class TrainResult:
    steps: int
    seconds: float
    last_loss: float
    resumed_from: int


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def train(base: str | Path, examples: Examples, output: Path | str, config: TrainConfig | None = None,
          progress: bool = True) -> TrainResult:  # fmt: skip
    from tqdm import tqdm

    config = config or TrainConfig()
    if config.loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, not {config.loss!r}")
    if config.sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, not {config.sampler!r}")
    output = Path(output)
    workdir = output.with_name(f".{output.name}.training")
    _seed_everything(config.seed)
    model = TermEncoderModel(base, max_length=config.max_length)
    model.freeze(config.freeze_layers)
    loss_function = LOSSES[config.loss]()
    sampler = _sampler(config, examples, model)
    relations = RelationBatchSampler(examples, config.relation_batch, config.seed) if config.relation_weight else None
    relation_loss = RelationMultiSimilarityLoss(len(relations.relation_names), model.dimension) if relations else None
    steps_per_epoch = max(1, len(sampler) // config.accumulation)
    total_steps = config.max_steps or steps_per_epoch * config.epochs
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trained + (list(relation_loss.parameters()) if relation_loss else []), lr=config.lr)
    warmup = max(1, int(total_steps * config.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup)))
    )
    state = {"config": asdict(config), "base": str(base), "examples": len(examples)}
    step, resumed_from = 0, 0
    checkpoint = workdir / "checkpoint.pt"
    if checkpoint.exists():
        saved = torch.load(checkpoint, weights_only=False)
        if saved["state"] == state:
            model.load_state_dict(saved["model"])
            if relation_loss is not None:
                relation_loss.load_state_dict(saved["relation_loss"])
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            step = resumed_from = saved["step"]
        else:
            shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    started, last_loss = time.perf_counter(), float("nan")
    model.train()
    with tqdm(total=total_steps, initial=step, desc="training", unit=" steps", disable=not progress) as bar:
        out_of_time = False
        while step < total_steps and not out_of_time:
            sampler.epoch = (step * config.accumulation) // len(sampler)
            skip = (step * config.accumulation) % len(sampler)  # batches of this epoch done before a resume
            batches = iter(sampler)
            for _ in range(skip):
                next(batches)
            for index, batch in enumerate(batches, start=1):
                texts = [examples.texts[row] for row in batch]
                labels = torch.tensor([examples.labels[row] for row in batch])
                loss = loss_function(model(texts), labels)
                if relations is not None and relation_loss is not None:
                    draw = step * config.accumulation + (index - 1) % config.accumulation  # same triples on resume
                    relation = _relation_term(model, relation_loss, relations, examples, draw)
                    loss = loss + config.relation_weight * relation
                loss = loss / config.accumulation
                loss.backward()
                if index % config.accumulation:
                    continue
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                step += 1
                last_loss = loss.item() * config.accumulation
                bar.update(1)
                bar.set_postfix(loss=f"{last_loss:.4f}")
                out_of_time = config.time_limit is not None and time.perf_counter() - started >= config.time_limit
                if step % config.checkpoint_every == 0 or step == total_steps or out_of_time:
                    _save_checkpoint(checkpoint, model, optimizer, scheduler, step, state, relation_loss)
                if step >= total_steps or out_of_time:
                    break
    model.eval()
    model.save(output)
    (output / "medlink_training.json").write_text(json.dumps({**state, "steps": step}, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)
    return TrainResult(step, time.perf_counter() - started, last_loss, resumed_from)


def _sampler(config: TrainConfig, examples: Examples, model: TermEncoderModel) -> PositiveBatchSampler:
    if config.sampler == "siblings":
        return SiblingBatchSampler(examples.labels, examples.parents, config.batch_size, config.per_concept,
                                   config.seed)  # fmt: skip
    if config.sampler == "parents":
        # DILBERT's parent negatives: each concept batched with its parent concepts (those that have texts).
        label_of = {concept: label for label, concept in enumerate(examples.concepts)}
        parents = [[label_of[p] for p in examples.parents[label] if p in label_of] for label in range(len(label_of))]
        return MinedBatchSampler(examples.labels, lambda: parents, config.batch_size, config.per_concept,
                                 config.seed, config.mined_group)  # fmt: skip
    if config.sampler == "mined":
        # A resumed epoch mines with the restored model, not the one its first half was mined with.
        return MinedBatchSampler(examples.labels, lambda: model_neighbours(model, examples, config.mined_group),
                                 config.batch_size, config.per_concept, config.seed, config.mined_group)  # fmt: skip
    return PositiveBatchSampler(examples.labels, config.batch_size, config.per_concept, config.seed)


def model_neighbours(model: TermEncoderModel, examples: Examples, k: int, batch_size: int = 256) -> list[list[int]]:
    """For every label, the labels whose first text the model now puts nearest to the label's first text."""
    import faiss
    import numpy as np

    first_row: dict[int, int] = {}
    for row, label in enumerate(examples.labels):
        first_row.setdefault(label, row)
    labels = sorted(first_row)
    texts = [examples.texts[first_row[label]] for label in labels]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch with little padding
    vectors = np.zeros((len(texts), model.dimension), dtype=np.float32)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            encoded = torch.nn.functional.normalize(model([texts[i] for i in rows]), dim=1)
            vectors[rows] = encoded.numpy()
    model.train(was_training)
    index = faiss.IndexFlatIP(model.dimension)
    index.add(vectors)
    _, found = index.search(vectors, min(k + 1, len(labels)))
    return [[labels[j] for j in row if j >= 0 and labels[j] != labels[i]][:k] for i, row in enumerate(found)]


def _relation_term(model: TermEncoderModel, loss: RelationMultiSimilarityLoss, relations: RelationBatchSampler,
                   examples: Examples, draw: int) -> torch.Tensor:  # fmt: skip
    """CODER's L_rel over one batch of triples, heads and tails encoded in one pass."""
    batch = relations.batch(draw)
    vectors = model([examples.texts[row] for row in batch.head_rows + batch.tail_rows])
    heads, tails = vectors[: len(batch.head_rows)], vectors[len(batch.head_rows) :]
    return loss(heads, torch.tensor(batch.relation_ids), tails, torch.tensor(batch.tail_labels))


def _save_checkpoint(path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                     scheduler: torch.optim.lr_scheduler.LRScheduler, step: int, state: dict,
                     relation_loss: torch.nn.Module | None = None) -> None:  # fmt: skip
    partial = path.with_suffix(".partial")
    relations = relation_loss.state_dict() if relation_loss is not None else None
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "step": step, "state": state, "relation_loss": relations}, partial)  # fmt: skip
    partial.replace(path)
