"""What every medlink training loop does after a batch's backward pass: the optimizer and scheduler step, the
count, the progress bar, the time limit and the checkpoint. The term trainer, the distiller, TrialMatcher's encoders
and the eligibility reranker differ in how a batch becomes a loss, not in this.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class OptimizerSteps:
    """Counts optimizer steps from ``step`` (where a resumed run starts) to ``total``.

    save: writes the checkpoint for a step; called every ``checkpoint_every`` steps, at the last step, and when the
    time limit (seconds, ``None`` for none) is reached.
    """

    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    total: int
    step: int
    save: Callable[[int], None]
    checkpoint_every: int
    time_limit: float | None
    bar: Any  # a tqdm bar
    started: float = field(default_factory=time.perf_counter)
    last_loss: float = float("nan")
    resumed_from: int = field(init=False)
    _out_of_time: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.resumed_from = self.step

    @classmethod
    @contextmanager
    def counted(
        cls,
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler,
        total: int,
        step: int,
        save: Callable[[int], None],
        checkpoint_every: int,
        time_limit: float | None,
        desc: str,
        progress: bool,
    ) -> Iterator[OptimizerSteps]:
        """The steps of one run, with a progress bar named ``desc`` (shown when ``progress``) open while it lasts."""
        from tqdm import tqdm

        with tqdm(total=total, initial=step, desc=desc, unit=" steps", disable=not progress) as bar:
            yield cls(optimizer, scheduler, total, step, save, checkpoint_every, time_limit, bar)

    @property
    def done(self) -> bool:
        """All steps taken, or the time limit reached by the last step (a run always takes at least one)."""
        return self.step >= self.total or self._out_of_time

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def take(self, loss: float) -> bool:
        """One optimizer step after a backward pass whose loss was ``loss``; True when training is over."""
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad()
        self.step += 1
        self.last_loss = loss
        self.bar.update(1)
        self.bar.set_postfix(loss=f"{loss:.4f}")
        self._out_of_time = self.time_limit is not None and self.seconds >= self.time_limit
        if self.step % self.checkpoint_every == 0 or self.step == self.total or self._out_of_time:
            self.save(self.step)
        return self.done
