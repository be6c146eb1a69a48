"""TrialMatcher pre-training (Jin et al., shared/papers/003, §2.1, eq. 1–4): a patient encoder and a trial encoder
learnt from trial records alone, with inclusion criteria I as proxies of eligible patients and exclusion criteria E of
ineligible ones.

    L_p2t = triplet(Enc_p(I), Enc_t(D), Enc_t(D_r))     a patient is nearer its trial than a random other trial
    L_t2p = triplet(Enc_t(D), Enc_p(I), Enc_p(E))       a trial is nearer its eligible than its ineligible patients
    L     = L_p2t + λ · L_t2p

D_r is the description of another trial of the same batch (so no extra encoding); records without exclusion
criteria leave out their L_t2p term. Both encoders start from the same base model. The loop, checkpoints and
resumption are the term trainer's (``medlink.training.trainer``): rerunning an interrupted command resumes it.

The result is a folder with ``patient/`` and ``trial/`` (sentence-transformers folders, fp16 weights) and
``trial_model.json``; it replaces the output folder in one rename.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import cast

import torch

from medlink.folders import staged_folder
from medlink.training import runtime
from medlink.training.losses import TripletLoss
from medlink.training.model import TermEncoderModel
from medlink.training.runtime import TrainResult
from medlink.trials.matching.texts import criteria_text, description
from medlink.trials.matching.training_settings import MANIFEST, PATIENT, TRIAL, TrialTrainConfig
from medlink.trials.records import TrialRecord


@dataclass(frozen=True)
class TrainingTrial:
    """What one record contributes: its description, inclusion text and exclusion text ("" when it has none)."""

    nct_id: str
    description: str
    inclusion: str
    exclusion: str


def training_trials(records: Iterable[TrialRecord]) -> list[TrainingTrial]:
    """Records with a description and inclusion criteria (the others teach nothing here), sorted by NCT id."""
    trials = [
        TrainingTrial(r.nct_id, description(r), criteria_text(r.inclusion), criteria_text(r.exclusion)) for r in records
    ]
    return sorted((t for t in trials if t.description and t.inclusion), key=lambda t: t.nct_id)


class TrialMatcherLoss(torch.nn.Module):
    """Eq. 1–4 over one batch, with in-batch random negatives for L_p2t."""

    def __init__(self, margin: float, trial_to_patient_weight: float, seed: int) -> None:
        super().__init__()
        self.triplet = TripletLoss(distance="cosine", margin=margin)
        self.weight = trial_to_patient_weight
        self.generator = torch.Generator().manual_seed(seed)

    def forward(
        self, inclusion: torch.Tensor, descriptions: torch.Tensor, exclusion: torch.Tensor, has_exclusion: torch.Tensor
    ) -> torch.Tensor:
        size = len(descriptions)
        # each row's negative trial: a random other row of the batch (shift by 1 … size−1)
        shift = torch.randint(1, size, (size,), generator=self.generator).to(descriptions.device) if size > 1 else None
        loss = descriptions.new_zeros(())
        if shift is not None:
            others = (torch.arange(size, device=descriptions.device) + shift) % size
            loss = loss + self.triplet(inclusion, descriptions, descriptions[others])
        if self.weight and has_exclusion.any():
            rows = has_exclusion
            loss = loss + self.weight * self.triplet(descriptions[rows], inclusion[rows], exclusion[rows])
        return loss


def train_trial_encoders(
    base: str | Path,
    trials: list[TrainingTrial],
    output: Path | str,
    config: TrialTrainConfig | None = None,
    progress: bool = True,
) -> TrainResult:
    config = config or TrialTrainConfig()
    if len(trials) < 2:
        raise ValueError(f"training needs at least 2 records with inclusion criteria, found {len(trials)}")
    output, workdir, device = runtime.start_run(output, config)
    encoders = torch.nn.ModuleDict(
        {
            PATIENT: TermEncoderModel(base, max_length=config.max_length),
            TRIAL: TermEncoderModel(base, max_length=config.max_length),
        }
    ).to(device)
    for encoder in encoders.values():
        cast(TermEncoderModel, encoder).freeze(config.freeze_layers)
    loss_function = TrialMatcherLoss(config.margin, config.trial_to_patient_weight, config.seed)
    batches_per_epoch = max(1, len(trials) // config.batch_size)
    total_steps = config.max_steps or batches_per_epoch * config.epochs
    optimizer = torch.optim.AdamW([p for p in encoders.parameters() if p.requires_grad], lr=config.lr)
    scheduler = runtime.linear_warmup_and_decay(optimizer, total_steps, config.warmup)
    state = {
        "config": {**asdict(config), "device": None},
        "base": str(base),
        "trials": len(trials),
        "first": trials[0].nct_id,
        "last": trials[-1].nct_id,
    }
    checkpoint = workdir / "checkpoint.pt"
    with runtime.checkpointed_steps(
        checkpoint, state, device, encoders, optimizer, scheduler, total_steps, config, "training", progress
    ) as steps:
        while not steps.done:
            batch = _batch(trials, config, steps.step, batches_per_epoch)
            inclusion = encoders[PATIENT]([t.inclusion for t in batch] + [t.exclusion or "-" for t in batch])
            descriptions = encoders[TRIAL]([t.description for t in batch])
            has_exclusion = torch.tensor([bool(t.exclusion) for t in batch], device=device)
            loss = loss_function(inclusion[: len(batch)], descriptions, inclusion[len(batch) :], has_exclusion)
            loss.backward()
            steps.take(loss.item())
    encoders.eval()
    save_trial_model(encoders, output, {**state, "steps": steps.step, "last_loss": steps.last_loss})
    shutil.rmtree(workdir, ignore_errors=True)
    return TrainResult(steps.step, steps.seconds, steps.last_loss, steps.resumed_from)


def _batch(trials: list[TrainingTrial], config: TrialTrainConfig, step: int, per_epoch: int) -> list[TrainingTrial]:
    """Batch ``step``: the same on a resumed run (each epoch's order comes from the seed and the epoch)."""
    epoch, index = divmod(step, per_epoch)
    order = list(range(len(trials)))
    random.Random(config.seed * 1_000_003 + epoch).shuffle(order)
    rows = order[index * config.batch_size : (index + 1) * config.batch_size]
    return [trials[row] for row in rows]


def save_trial_model(encoders: torch.nn.ModuleDict, output: Path, manifest: dict) -> Path:
    """Both encoders (fp16 weights: half the size, computed in fp32 when loaded) and the manifest, in one rename."""
    with staged_folder(output, MANIFEST, "a trial model folder") as staging:
        for name in (PATIENT, TRIAL):
            model = cast(TermEncoderModel, encoders[name].to("cpu"))
            model.transformer.half()
            model.save(staging / name)
            model.transformer.float()
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return output
