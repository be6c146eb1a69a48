"""``medlink calibrate``: choose the nil threshold of an index from labelled development data."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click

from medlink.cli.paths import PathOption


@click.command()
@click.option("--index", "index_dir", type=PathOption(path_type=Path, exists=True, file_okay=False), required=True)
@click.option("--corpus", "corpus_spec", required=True, help="Labelled development data, FORMAT:PATH.")
@click.option("--entity-type", default=None, help="Only mentions of this type.")
@click.option("--namespace", default=None, help="Namespace for bare gold ids.")
@click.option(
    "--strategy",
    type=click.Choice(["auto", "min-fp", "max-tp", "weighted"]),
    default="auto",
    show_default=True,
    help="Threshold rule (DILBERT §4); auto keeps the most accurate on the data.",
)
@click.option("--sieves", default=None, help="Sieve order to calibrate (default: the index's default pipeline).")
def calibrate(index_dir: Path, corpus_spec: str, entity_type: str | None, namespace: str | None, strategy: str,
              sieves: str | None) -> None:  # fmt: skip
    """Compute the three nil-threshold strategies and store the chosen threshold with the index."""
    from medlink.evaluation.calibration import calibrate as run_calibration
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.index.build import update_manifest
    from medlink.linking.pipeline import DEFAULT_SIEVES, open_index_linker

    corpus = load_corpus(corpus_spec, entity_type, namespace)
    linker = open_index_linker(index_dir, sieves=sieves or DEFAULT_SIEVES)
    result = run_calibration(linker, corpus, strategy)
    for name, threshold in result.thresholds.items():
        shown = "n/a (no such cases)" if threshold is None else f"{threshold:.4f}"
        accuracy = f"dev accuracy {result.accuracy[name]:.4f}" if name in result.accuracy else ""
        click.echo(f"  {name:<9} threshold {shown:<22}{accuracy}")
    click.echo(f"  {'none':<9} threshold {'-':<22}dev accuracy {result.accuracy['none']:.4f}")
    click.echo(f"{result.true_positives} true positives, {result.false_positives} nil mentions among dense decisions")
    if result.threshold is None:
        click.echo("no threshold chosen: the data has no case that defines one; the index is unchanged")
        return
    update_manifest(index_dir, nil_threshold=result.threshold, calibration={**asdict(result), "corpus": corpus.name})
    click.echo(f"stored nil threshold {result.threshold:.4f} ({result.strategy}) in {index_dir}")
