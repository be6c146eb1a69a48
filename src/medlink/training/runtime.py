"""The toolbox every training loop in medlink shares (the encoder's, distillation, the rerank stage, the trial
encoders and the eligibility cross-encoder): fixed seeds, the device, bf16 autocast on a GPU, a linear warm-up and
decay schedule, checkpoints that resume an interrupted run, and what a run reports."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from medlink.training.steps import OptimizerSteps


@dataclass(frozen=True)
class TrainResult:
    steps: int
    seconds: float
    last_loss: float
    resumed_from: int


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def linear_warmup_and_decay(
    optimizer: torch.optim.Optimizer, total_steps: int, warmup_share: float
) -> torch.optim.lr_scheduler.LambdaLR:
    """The learning rate rises linearly over the first ``warmup_share`` of the steps, then falls linearly to 0."""
    warmup = max(1, int(total_steps * warmup_share))
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup)))
    )


def start_run(output: Path | str, settings: Any, work: str = "training") -> tuple[Path, Path, torch.device]:
    """What every run does first: seeds fixed (``settings.seed``), and the output folder, the work folder beside it
    (``.NAME.training``: checkpoints, so that running the same command again resumes) and the device
    (``settings.device``)."""
    seed_everything(settings.seed)
    output = Path(output)
    return output, output.with_name(f".{output.name}.{work}"), resolve_device(settings.device)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} asked for, but torch sees no GPU")
    return torch.device(name)


def autocast(device: torch.device):
    """bf16 matrix products on a GPU (weights and optimizer stay fp32); plain fp32 on a CPU."""
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda")


def resume_checkpoint(
    path: Path,
    state: dict,
    device: torch.device,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    **extras: torch.nn.Module | None,
) -> int:
    """Restore a checkpoint :func:`save_checkpoint` wrote for the same ``state`` and return its step; a checkpoint
    of another configuration is deleted with its work folder (the run starts over), which is then (re)created.
    ``extras`` are further modules saved under their names (None: not part of this run)."""
    step = 0
    if path.exists():
        saved = torch.load(path, weights_only=True, map_location=device)  # tensors and plain values only
        if saved["state"] == state:
            model.load_state_dict(saved["model"])
            for name, module in extras.items():
                if module is not None:
                    module.load_state_dict(saved[name])
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            step = saved["step"]
        else:
            shutil.rmtree(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    return step


def save_checkpoint(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    step: int,
    state: dict,
    **extras: torch.nn.Module | None,
) -> None:
    """Write a checkpoint :func:`resume_checkpoint` restores, through a partial file renamed into place."""
    partial = path.with_suffix(".partial")
    modules = {name: module.state_dict() if module is not None else None for name, module in extras.items()}
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "step": step,
            "state": state,
            **modules,
        },
        partial,
    )
    partial.replace(path)


@contextmanager
def checkpointed_steps(
    checkpoint: Path,
    state: dict,
    device: torch.device,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    total: int,
    settings: Any,
    desc: str,
    progress: bool,
    **extras: torch.nn.Module | None,
) -> Iterator[OptimizerSteps]:
    """The optimizer steps of a resumable run: ``model`` (and ``extras``) restored from ``checkpoint`` when it was
    written for the same ``state``, put in training mode, and saved there as :class:`OptimizerSteps` says
    (``settings.checkpoint_every``, ``settings.time_limit``); ``steps.resumed_from`` is where the run picked up."""
    resumed_from = resume_checkpoint(checkpoint, state, device, model, optimizer, scheduler, **extras)
    model.train()

    def save(step: int) -> None:
        save_checkpoint(checkpoint, model, optimizer, scheduler, step, state, **extras)

    with OptimizerSteps.counted(
        optimizer, scheduler, total, resumed_from, save, settings.checkpoint_every, settings.time_limit, desc, progress
    ) as steps:
        yield steps
