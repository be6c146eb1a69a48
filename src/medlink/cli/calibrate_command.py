"""``medlink calibrate``: choose the nil threshold of an index from labelled development data, and fit its form test
(a retrieved look-alike of a concept the terminology lacks is nil)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click

from medlink.cli.paths import PathOption
from medlink.evaluation.calibration import DEFAULT_STRATEGY, STRATEGIES

if TYPE_CHECKING:
    from medlink.evaluation.corpus import Corpus


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
@click.option(
    "--max-loss",
    type=click.FloatRange(0, 1),
    default=None,
    help="For budget: the share of the data's mentions that may turn from right to nil (default 0.0005).",
)
@click.option(
    "--negatives/--no-negatives",
    default=True,
    show_default=True,
    help="Also link medlink's non-medical negatives (stop words, everyday nouns, random strings) as nil.",
)
@click.option("--sieves", default=None, help="Sieve order to calibrate (default: the index's default pipeline).")
@click.option(
    "--form-test/--no-form-test",
    default=True,
    show_default=True,
    help="Also fit the form test: the corpus's right decisions against the look-alikes the index gives for "
    "the names of concepts held out of it and for invented drug-like names (docs/reliability.md).",
)
@click.option(
    "--form-budget",
    type=click.FloatRange(0, 1),
    default=0.003,
    show_default=True,
    help="The share of the corpus's distinct mentions linked right that the form test may turn nil.",
)
def calibrate(
    index_dir: Path,
    corpus_spec: str,
    entity_type: str | None,
    namespace: str | None,
    strategy: str,
    max_loss: float | None,
    negatives: bool,
    sieves: str | None,
    form_test: bool,
    form_budget: float,
) -> None:
    """Compute the nil-threshold strategies and store the chosen threshold with the index; then fit the index's form
    test and store it too."""
    from medlink.evaluation.calibration import DEFAULT_MAX_LOSS
    from medlink.evaluation.calibration import calibrate as run_calibration
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.negatives import non_medical_negatives
    from medlink.index.update import update_manifest
    from medlink.linking import LinkerConfig
    from medlink.linking.linker import Linker

    corpus = load_corpus(corpus_spec, entity_type, namespace)
    linker = Linker.load(index_dir, sieves=sieves, config=LinkerConfig(nil_threshold=0))
    texts = [n.text for n in non_medical_negatives(linker.terminology)] if negatives else []
    result = run_calibration(linker, corpus, strategy, texts, DEFAULT_MAX_LOSS if max_loss is None else max_loss)
    for name, threshold in result.thresholds.items():
        shown = "n/a (no such cases)" if threshold is None else f"{threshold:.4f}"
        accuracy = f"dev accuracy {result.accuracy[name]:.4f}" if name in result.accuracy else ""
        caught = f", negatives nil {result.negatives_nil[name]:.2f}" if result.negatives_nil and threshold else ""
        click.echo(f"  {name:<9} threshold {shown:<22}{accuracy}{caught}")
    click.echo(f"  {'none':<9} threshold {'-':<22}dev accuracy {result.accuracy['none']:.4f}")
    click.echo(
        f"{result.true_positives} true positives, {result.false_positives} nil mentions among dense decisions"
        f"{f' ({result.negatives} generated negatives)' if negatives else ''}"
    )
    if result.threshold is None:
        click.echo("no threshold chosen: the data has no case that defines one; the index is unchanged")
        return
    update_manifest(index_dir, nil_threshold=result.threshold, calibration={**asdict(result), "corpus": corpus.name})
    click.echo(f"stored nil threshold {result.threshold:.4f} ({result.strategy}) in {index_dir}")
    if form_test:
        _fit_form_test(index_dir, corpus, form_budget, sieves)


def _fit_form_test(index_dir: Path, corpus: Corpus, budget: float, sieves: str | None) -> None:
    from medlink.evaluation.form_fit import calibrate_form
    from medlink.index.update import update_manifest

    try:
        fit = calibrate_form(index_dir, corpus, budget, sieves=sieves)
    except ValueError as error:  # nothing to tell apart: a tiny terminology, or no retrieval decision right
        click.echo(f"no form test fitted ({error}); the index keeps none")
        return
    click.echo("\n".join(fit.lines()))
    update_manifest(
        index_dir,
        form_model=fit.model.to_dict(),
        form_calibration={
            "budget": budget,
            "examples": fit.examples,
            "look_alikes_caught": fit.caught,
            "corpus": corpus.name,
        },
    )
    click.echo(f"stored the form test in {index_dir}")
