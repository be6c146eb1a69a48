"""The toolbox every training loop in medlink shares (the encoder's, distillation, the rerank stage, the trial
encoders and the eligibility cross-encoder): fixed seeds, the device, bf16 autocast on a GPU, a linear warm-up and
decay schedule, checkpoints that resume an interrupted run, and what a run reports."""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch


@dataclass(frozen=True)
class TrainResult:
    steps: int
    seconds: float
    last_loss: float
    resumed_from: int


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def linear_warmup_and_decay(optimizer: torch.optim.Optimizer, total_steps: int,
                            warmup_share: float) -> torch.optim.lr_scheduler.LambdaLR:  # fmt: skip
    """The learning rate rises linearly over the first ``warmup_share`` of the steps, then falls linearly to 0."""
    warmup = max(1, int(total_steps * warmup_share))
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup)))
    )


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} asked for, but torch sees no GPU")
    return torch.device(name)


def autocast(device: torch.device):
    """bf16 matrix products on a GPU (weights and optimizer stay fp32); plain fp32 on a CPU."""
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda")


def resume_checkpoint(path: Path, state: dict, device: torch.device, model: torch.nn.Module,
                      optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler,
                      **extras: torch.nn.Module | None) -> int:  # fmt: skip
    """Restore a checkpoint :func:`save_checkpoint` wrote for the same ``state`` and return its step; a checkpoint
    of another configuration is deleted with its work folder (the run starts over), which is then (re)created.
    ``extras`` are further modules saved under their names (None: not part of this run)."""
    step = 0
    if path.exists():
        saved = torch.load(path, weights_only=False, map_location=device)
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


def save_checkpoint(path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                     scheduler: torch.optim.lr_scheduler.LRScheduler, step: int, state: dict,
                     relation_loss: torch.nn.Module | None = None,
                     head: torch.nn.Module | None = None) -> None:  # fmt: skip
    partial = path.with_suffix(".partial")
    relations = relation_loss.state_dict() if relation_loss is not None else None
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "step": step, "state": state, "relation_loss": relations,
                "count_head": head.state_dict() if head is not None else None}, partial)  # fmt: skip
    partial.replace(path)
