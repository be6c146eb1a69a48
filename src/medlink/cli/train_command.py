"""``medlink train``: fine-tune a term encoder on a terminology's synonyms (and annotated mentions)."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.dataclass_options import dataclass_options, settings_from
from medlink.cli.paths import PathOption, terminology_option
from medlink.encoders.registry import PACKAGED_MINILM
from medlink.training.config import TrainConfig


@click.command()
@terminology_option("Compiled terminology whose synonyms are the positives (default: the embedded MeSH descriptors).")
@click.option(
    "--mentions",
    "mentions_specs",
    multiple=True,
    help="Annotated training mentions FORMAT:PATH (repeatable), mixed in at 1/3 of the names (OD training).",
)
@click.option("--entity-type", default=None, help="With --mentions: only this type.")
@click.option(
    "--several-as-parts",
    is_flag=True,
    help="With --mentions: a mention annotated with several concepts trains as a text of each (CHIP-CDN's "
    "multi-implication). Off by default: a coordination ('breast and ovarian cancer') would blur its parts.",
)
@click.option(
    "--hold-out-fold",
    type=int,
    default=None,
    help="With --mentions: leave out the mentions of this cross-fitting fold (0 ... --folds - 1, by a hash of the "
    "text): a fold encoder, whose vectors for those mentions the set ranker can learn from honestly.",
)
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="With --hold-out-fold.")
@click.option(
    "--base", default=PACKAGED_MINILM, show_default=True, help="Model to start from: minilm, a folder or a hub name."
)
@dataclass_options(TrainConfig)
@click.option("--max-names-per-concept", type=int, default=None, help="Sample at most this many names per concept.")
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def train(
    terminology_dir: Path | None,
    mentions_specs: tuple[str, ...],
    entity_type: str | None,
    several_as_parts: bool,
    hold_out_fold: int | None,
    folds: int,
    base: str,
    max_names_per_concept: int | None,
    output_dir: Path,
    **settings: object,
) -> None:
    """Train an encoder; run the same command again to resume an interrupted run.

    The result is a sentence-transformers folder: `medlink index build --encoder OUTPUT` uses it.
    """
    from medlink.encoders.registry import resolve_model
    from medlink.terminology import load_default_terminology, load_terminology
    from medlink.training.examples import training_examples
    from medlink.training.trainer import train as run_training

    config: TrainConfig = settings_from(TrainConfig, settings)
    count_weight, seed = config.count_weight, config.seed
    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    mentions: list[tuple[str, str]] = []
    counts: list[int] = []
    if hold_out_fold is not None and not 0 <= hold_out_fold < folds:
        raise click.UsageError(f"--hold-out-fold {hold_out_fold}: folds are numbered 0 to {folds - 1}")
    if mentions_specs:
        from medlink.evaluation.corpus_formats import load_corpus

        for spec in mentions_specs:
            corpus = load_corpus(spec, entity_type)
            if hold_out_fold is not None:
                corpus = corpus.without_fold(hold_out_fold, folds)
            triples = [(t, ids, 1) for t, ids in corpus.labelled_pairs()]
            if several_as_parts:
                triples += [(text, part, len(parts)) for text, parts in corpus.several_pairs() for part in parts]
            elif count_weight:
                # Composite mentions teach the count head; without one they would only blur their first part's concept.
                triples = corpus.counted_pairs()
            mentions += [(text, ids[0]) for text, ids, _ in triples]
            counts += [count for _, _, count in triples]
    if count_weight and not mentions:
        raise click.UsageError("--count-head needs --mentions: the head learns from annotated mentions")
    examples = training_examples(
        terminology,
        mentions,
        max_names_per_concept=max_names_per_concept,
        seed=seed,
        mention_counts=counts if count_weight else None,
    )
    click.echo(f"{len(examples):,} training texts of {len(examples.concepts):,} concepts", err=True)
    result = run_training(resolve_model(base), examples, output_dir, config)
    resumed = f" (resumed at step {result.resumed_from})" if result.resumed_from else ""
    click.echo(
        f"trained {result.steps} steps in {result.seconds:.0f} s{resumed}, last loss {result.last_loss:.4f}; "
        f"model in {output_dir}"
    )
