"""Training settings: one frozen dataclass whose fields also make ``medlink train``'s options (cli/dataclass_options.py
reads each field's default, type and help), so a setting is described once. Free of torch: the CLI imports it."""

from __future__ import annotations

from dataclasses import dataclass

from medlink.options import setting
from medlink.training.registry import LOSSES, SAMPLERS


@dataclass(frozen=True)
class TrainConfig:
    """Training settings; the defaults are a sensible CPU run on MiniLM."""

    loss: str = setting(
        "batch-hard",
        "In-batch loss over concept labels: batch-hard soft-margin triplets (Xu & "
        "Bethard), multi-similarity (CODER), supervised InfoNCE at temperature 0.05, or DILBERT's "
        "triplet margin loss with one random positive and negative per anchor.",
        choices=tuple(LOSSES),
    )
    sampler: str = setting(
        "random",
        "Concepts per batch at random; grouped by parent (siblings as hard negatives); "
        "grouped with their parents (parent negatives); 'mined': with the concepts the model "
        "confuses them with, re-mined each epoch; 'tfidf': with the concepts whose names share the "
        "most character n-grams; 'code-prefix': with concepts whose codes share a prefix (ICD "
        "categories, Liang et al. §3.1.2).",
        choices=tuple(SAMPLERS),
    )
    negatives: int = setting(3, "With parents, mined, tfidf or code-prefix: negative concepts batched with each one.")
    code_prefix: int = setting(3, "With --sampler code-prefix: characters of a code that name its category.")
    relation_weight: float = setting(
        0.0,
        "Weight μ of CODER's relation term (L = L + μ·L_rel) over is_a and typed relations; 0 leaves it out.",
        flag="--relations",
    )
    relation_batch: int = setting(64, "(head, relation, tail) triples per step for the relation term.")
    count_weight: float = setting(
        0.0,
        "Weight of Liang et al.'s concept-count head (how many concepts a mention "
        "names; needs --mentions, and composite mentions join the training). The linker "
        "reads the saved head. 0: no head. With --loss triplet this is their eq. 6.",
        flag="--count-head",
    )
    epochs: int = setting(1, "Passes over the training texts.")
    batch_size: int = setting(64, "Texts per batch.")
    per_concept: int = setting(2, "Texts of each concept in a batch.")
    lr: float = setting(2e-5, "Peak learning rate (AdamW).")
    warmup: float = setting(0.1, "Share of the optimizer steps spent warming up.")
    accumulation: int = setting(1, "Batches per optimizer step.")
    max_length: int = setting(32, "Tokens kept of each text.", flag="--max-len")
    freeze_layers: int = setting(0, "Freeze the embeddings and this many lower layers.")
    seed: int = setting(0, "Seed of every random choice (batches, sampled names, initialization).")
    max_steps: int | None = setting(None, "Stop after this many optimizer steps.")
    checkpoint_every: int = setting(200, "Optimizer steps between checkpoints (an interrupted run resumes there).")
    time_limit: float | None = setting(
        None, "Stop after the step that reaches this many seconds (equal-time comparisons)."
    )
    device: str = setting("auto", "auto (a GPU when torch sees one, bf16 autocast), cpu, or name one (cuda:1).")
