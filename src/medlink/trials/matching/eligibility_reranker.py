"""The eligibility reranker of Jin et al.'s run "damoebrtog" (shared/papers/003, §2.2.1): a cross-encoder fine-tuned to
tell whether a set of criteria is a trial's inclusion (1) or exclusion (0) set, given the trial's description. Criteria
stand in for a patient, so at inference the note takes their place: ``[CLS] note [SEP] description [SEP]`` → how
eligible the note looks.

Pairs per record: (I, D) → 1 and, when it has exclusion criteria, (E, D) → 0. With ``other_trial_negatives`` the
inclusion criteria of another trial of the batch are a further negative, (I_r, D) → 0, which also teaches topical
relevance (an addition to the paper, off by default). The model starts from the packaged MiniLM with a fresh one-logit
head, trains with binary cross-entropy, resumes from its checkpoint when run again, and is exported to ONNX
(``model.onnx`` + ``tokenizer.json`` + ``reranker.json``) in one rename, ready for
:class:`~medlink.trials.matching.trial_reranker.OnnxCrossEncoder`.
"""

from __future__ import annotations

import json
import random
import shutil
import warnings
from dataclasses import asdict
from pathlib import Path

import torch

from medlink.encoders.onnx import export_output, finish_export
from medlink.folders import staged_folder
from medlink.training import runtime
from medlink.training.runtime import TrainResult
from medlink.trials.matching.encoder_training import TrainingTrial
from medlink.trials.matching.training_settings import EligibilityConfig

MANIFEST = "reranker.json"


def eligibility_pairs(trials: list[TrainingTrial], config: EligibilityConfig) -> list[tuple[str, str, float]]:
    """(criteria, description, label) in a shuffled, seeded order."""
    rng = random.Random(config.seed)
    pairs = []
    for i, trial in enumerate(trials):
        pairs.append((trial.inclusion, trial.description, 1.0))
        if trial.exclusion:
            pairs.append((trial.exclusion, trial.description, 0.0))
        if config.other_trial_negatives and len(trials) > 1:
            other = trials[(i + rng.randrange(1, len(trials))) % len(trials)]
            pairs.append((other.inclusion, trial.description, 0.0))
    rng.shuffle(pairs)
    return pairs


def train_eligibility_reranker(
    base: str | Path,
    trials: list[TrainingTrial],
    output: Path | str,
    config: EligibilityConfig | None = None,
    progress: bool = True,
) -> TrainResult:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    config = config or EligibilityConfig()
    pairs = eligibility_pairs(trials, config)
    if len(pairs) < 2:
        raise ValueError(f"training needs at least 2 criteria sets, found {len(pairs)}")
    output, workdir, device = runtime.start_run(output, config)
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    with warnings.catch_warnings():  # "some weights are newly initialized": the head, as intended
        warnings.simplefilter("ignore")
        model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1).to(device)
    per_epoch = max(1, len(pairs) // config.batch_size)
    total = config.max_steps or per_epoch * config.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    scheduler = runtime.linear_warmup_and_decay(optimizer, total, config.warmup)
    state = {"config": {**asdict(config), "device": None}, "base": str(base), "pairs": len(pairs)}
    checkpoint = workdir / "checkpoint.pt"
    loss_function = torch.nn.BCEWithLogitsLoss()
    with runtime.checkpointed_steps(
        checkpoint, state, device, model, optimizer, scheduler, total, config, "training reranker", progress
    ) as steps:
        while not steps.done:
            start = (steps.step % per_epoch) * config.batch_size
            batch = pairs[start : start + config.batch_size]
            inputs = tokenizer(
                [b[0] for b in batch],
                [b[1] for b in batch],
                truncation="longest_first",
                max_length=config.max_length,
                padding=True,
                return_tensors="pt",
            ).to(device)
            labels = torch.tensor([b[2] for b in batch], device=device)
            loss = loss_function(model(**inputs).logits.squeeze(-1), labels)
            loss.backward()
            steps.take(loss.item())
    model.eval()
    export_reranker(
        model.to("cpu"),
        tokenizer,
        output,
        {**state, "steps": steps.step, "last_loss": steps.last_loss},
        config.quantize,
    )
    shutil.rmtree(workdir, ignore_errors=True)
    return TrainResult(steps.step, steps.seconds, steps.last_loss, steps.resumed_from)


def export_reranker(model: torch.nn.Module, tokenizer, output: Path, manifest: dict, quantize: str = "none") -> Path:
    """The cross-encoder as ONNX (one logit out), its tokenizer and manifest, written beside ``output`` and
    renamed into place."""
    with staged_folder(output, MANIFEST, "a medlink reranker folder") as staging:
        sample = tokenizer(["a patient"], ["a trial"], return_tensors="pt")
        fp32 = staging / "model.fp32.onnx"
        export_output(model, sample, fp32, "logits", {0: "batch"})
        finish_export(fp32, staging, quantize, tokenizer)
        (staging / MANIFEST).write_text(json.dumps({**manifest, "quantization": quantize}, indent=2))
    return output
