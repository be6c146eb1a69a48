"""``medlink train``: fine-tune a term encoder on a terminology's synonyms (and annotated mentions)."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.cli.paths import PathOption
from medlink.training.choices import LOSS_NAMES, SAMPLER_NAMES


@click.command()
@click.option(
    "--terminology",
    "terminology_dir",
    type=PathOption(path_type=Path, exists=True, file_okay=False),
    help="Compiled terminology whose synonyms are the positives (default: the embedded MeSH descriptors).",
)
@click.option(
    "--mentions",
    "mentions_specs",
    multiple=True,
    help="Annotated training mentions FORMAT:PATH (repeatable), mixed in at 1/3 of the names (OD training).",
)
@click.option("--entity-type", default=None, help="With --mentions: only this type.")
@click.option(
    "--base", default="minilm", show_default=True, help="Model to start from: minilm, a folder or a hub name."
)
@click.option(
    "--loss",
    type=click.Choice(LOSS_NAMES),
    default="batch-hard",
    show_default=True,
    help="Batch-hard soft-margin triplets (Xu & Bethard), multi-similarity (CODER), supervised InfoNCE, or "
    "DILBERT's triplet margin loss with one random positive and negative per anchor.",
)
@click.option(
    "--sampler",
    type=click.Choice(SAMPLER_NAMES),
    default="random",
    show_default=True,
    help="Concepts per batch at random; grouped by parent (siblings as hard negatives); grouped with their parents "
    "(parent negatives); 'mined': grouped with the concepts the model confuses them with, re-mined each epoch; "
    "'tfidf': with the concepts whose names share the most character n-grams; 'code-prefix': with concepts whose "
    "codes share a prefix (ICD categories).",
)
@click.option(
    "--negatives",
    "mined_group",
    type=int,
    default=3,
    show_default=True,
    help="With parents, mined, tfidf or code-prefix: negative concepts batched with each concept.",
)
@click.option(
    "--code-prefix",
    type=int,
    default=3,
    show_default=True,
    help="With --sampler code-prefix: characters of a code that name its category.",
)
@click.option(
    "--relations",
    "relation_weight",
    type=float,
    default=0.0,
    show_default=True,
    help="Weight μ of CODER's relation term over is_a and typed relations (0: off).",
)
@click.option(
    "--count-head",
    "count_weight",
    type=float,
    default=0.0,
    show_default=True,
    help="Weight of Liang et al.'s concept-count head (how many concepts a mention names; needs --mentions, and "
    "composite mentions join the training). The linker reads the saved head. 0: no head.",
)
@click.option("--epochs", type=int, default=1, show_default=True)
@click.option("--max-steps", type=int, default=None, help="Stop after this many optimizer steps.")
@click.option("--batch-size", type=int, default=64, show_default=True)
@click.option("--per-concept", type=int, default=2, show_default=True, help="Texts of each concept in a batch.")
@click.option("--accumulation", type=int, default=1, show_default=True, help="Batches per optimizer step.")
@click.option("--lr", type=float, default=2e-5, show_default=True)
@click.option("--max-len", "max_length", type=int, default=32, show_default=True)
@click.option(
    "--freeze-layers", type=int, default=0, show_default=True, help="Freeze the embeddings and this many lower layers."
)
@click.option("--max-names-per-concept", type=int, default=None, help="Sample at most this many names per concept.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--time-limit", type=float, default=None, help="Stop after this many seconds (equal-time comparisons).")
@click.option("--device", default="auto", show_default=True, help="auto (a GPU when torch sees one), cpu or cuda.")
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path), required=True)
def train(terminology_dir: Path | None, mentions_specs: tuple[str, ...], entity_type: str | None, base: str, loss: str,
          sampler: str, mined_group: int, code_prefix: int, relation_weight: float, count_weight: float,
          epochs: int, max_steps: int | None, batch_size: int, per_concept: int, accumulation: int, lr: float,
          max_length: int, freeze_layers: int, max_names_per_concept: int | None, seed: int,
          time_limit: float | None, device: str, output_dir: Path) -> None:  # fmt: skip
    """Train an encoder; run the same command again to resume an interrupted run.

    The result is a sentence-transformers folder: `medlink index build --encoder OUTPUT` uses it.
    """
    from medlink.encoders.registry import resolve_model
    from medlink.resources import load_default_terminology
    from medlink.terminology import load_terminology
    from medlink.training.examples import training_examples
    from medlink.training.trainer import TrainConfig
    from medlink.training.trainer import train as run_training

    terminology = load_terminology(terminology_dir) if terminology_dir else load_default_terminology()
    mentions: list[tuple[str, str]] = []
    counts: list[int] = []
    if mentions_specs:
        from medlink.evaluation.corpus_formats import load_corpus

        for spec in mentions_specs:
            corpus = load_corpus(spec, entity_type)
            # Composite mentions teach the count head; without one they would only blur their first part's concept.
            triples = corpus.counted_pairs() if count_weight else [(t, ids, 1) for t, ids in corpus.labelled_pairs()]
            mentions += [(text, ids[0]) for text, ids, _ in triples]
            counts += [count for _, _, count in triples]
    if count_weight and not mentions:
        raise click.UsageError("--count-head needs --mentions: the head learns from annotated mentions")
    examples = training_examples(terminology, mentions, max_names_per_concept=max_names_per_concept, seed=seed,
                                 mention_counts=counts if count_weight else None)  # fmt: skip
    config = TrainConfig(
        loss=loss,
        sampler=sampler,
        mined_group=mined_group + 1,
        code_prefix=code_prefix,
        relation_weight=relation_weight,
        count_weight=count_weight,
        epochs=epochs,
        batch_size=batch_size,
        per_concept=per_concept,
        lr=lr,
        accumulation=accumulation,
        max_length=max_length,
        freeze_layers=freeze_layers,
        seed=seed,
        max_steps=max_steps,
        time_limit=time_limit,
        device=device,
    )
    click.echo(f"{len(examples):,} training texts of {len(examples.concepts):,} concepts", err=True)
    result = run_training(resolve_model(base), examples, output_dir, config)
    resumed = f" (resumed at step {result.resumed_from})" if result.resumed_from else ""
    click.echo(
        f"trained {result.steps} steps in {result.seconds:.0f} s{resumed}, last loss {result.last_loss:.4f}; "
        f"model in {output_dir}"
    )
