"""``medlink calibrate``: choose the nil threshold of an index from labelled development data."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click

from medlink.cli.paths import PathOption
from medlink.evaluation.calibration import DEFAULT_STRATEGY, STRATEGIES


@click.command()
@click.option("--index", "index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False), required=True)
@click.option("--corpus", "corpus_spec", required=True, help="Labelled development data, FORMAT:PATH.")
@click.option("--entity-type", default=None, help="Only mentions of this type.")
@click.option("--namespace", default=None, help="Namespace for bare gold ids.")
@click.option(
    "--strategy",
    type=click.Choice([DEFAULT_STRATEGY, "auto", *(name for name in STRATEGIES if name != DEFAULT_STRATEGY)]),
    default=DEFAULT_STRATEGY,
    show_default=True,
    help="Threshold rule: budget (the highest that costs at most --max-loss of the data's accuracy) or DILBERT's "
    "(§4); auto keeps the most accurate of DILBERT's three.",
)
@click.option("--max-loss", type=click.FloatRange(0, 1), default=None,
              help="For budget: the share of the data's mentions that may turn from right to nil (default 0.0005).")
@click.option("--negatives/--no-negatives", default=True, show_default=True,
              help="Also link medlink's non-medical negatives (stop words, everyday nouns, random strings) as nil.")
@click.option("--sieves", default=None, help="Sieve order to calibrate (default: the index's default pipeline).")
def calibrate(index_dir: Path, corpus_spec: str, entity_type: str | None, namespace: str | None, strategy: str,
              max_loss: float | None, negatives: bool, sieves: str | None) -> None:  # fmt: skip
    """Compute the nil-threshold strategies and store the chosen threshold with the index."""
    from medlink.evaluation.calibration import DEFAULT_MAX_LOSS
    from medlink.evaluation.calibration import calibrate as run_calibration
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.negatives import non_medical_negatives
    from medlink.index.build import update_manifest
    from medlink.linking import LinkerConfig
    from medlink.linking.linker import open_index_linker
    from medlink.linking.pipeline import DEFAULT_SIEVES

    corpus = load_corpus(corpus_spec, entity_type, namespace)
    linker = open_index_linker(index_dir, sieves=sieves or DEFAULT_SIEVES, config=LinkerConfig(nil_threshold=0))
    texts = [n.text for n in non_medical_negatives(linker.terminology)] if negatives else []
    result = run_calibration(linker, corpus, strategy, texts, DEFAULT_MAX_LOSS if max_loss is None else max_loss)
    for name, threshold in result.thresholds.items():
        shown = "n/a (no such cases)" if threshold is None else f"{threshold:.4f}"
        accuracy = f"dev accuracy {result.accuracy[name]:.4f}" if name in result.accuracy else ""
        caught = f", negatives nil {result.negatives_nil[name]:.2f}" if result.negatives_nil and threshold else ""
        click.echo(f"  {name:<9} threshold {shown:<22}{accuracy}{caught}")
    click.echo(f"  {'none':<9} threshold {'-':<22}dev accuracy {result.accuracy['none']:.4f}")
    click.echo(f"{result.true_positives} true positives, {result.false_positives} nil mentions among dense decisions"
               f"{f' ({result.negatives} generated negatives)' if negatives else ''}")  # fmt: skip
    if result.threshold is None:
        click.echo("no threshold chosen: the data has no case that defines one; the index is unchanged")
        return
    update_manifest(index_dir, nil_threshold=result.threshold, calibration={**asdict(result), "corpus": corpus.name})
    click.echo(f"stored nil threshold {result.threshold:.4f} ({result.strategy}) in {index_dir}")
