"""The settings of distillation (:mod:`~medlink.training.distill`), free of torch so that ``medlink distill``
reads them for its options."""

from __future__ import annotations

from dataclasses import dataclass

from medlink.options import setting


@dataclass(frozen=True)
class DistillConfig:
    layers: tuple[int, ...] = (0, 3, 5)  # teacher layers the student keeps, bottom to top
    freeze_embeddings: bool = True  # the teacher's token embeddings serve the student as they are, and are most
    # of its parameters: freezing them saves a third of a CPU step
    relation_weight: float = setting(1.0, "Weight of the in-batch similarity term (0: match vectors only).")
    batch_size: int = setting(256, "Texts per batch.", minimum=1)
    per_concept: int = setting(
        2, "Synonyms of each concept in a batch: the near neighbours the ranking needs.", minimum=1
    )
    lr: float = setting(1e-4, "Peak learning rate (AdamW).")
    warmup: float = 0.05
    max_length: int = setting(24, "Tokens kept of each text.", flag="--max-len")
    seed: int = setting(0, "Seed of every random choice.")
    max_steps: int | None = setting(None, "Stop after this many steps (default: one pass over the concepts).")
    checkpoint_every: int = 200
    time_limit: float | None = setting(None, "Stop after this many seconds.")
    device: str = setting("auto", "auto (a GPU when torch sees one), cpu or cuda.")
