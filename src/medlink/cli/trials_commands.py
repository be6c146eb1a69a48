"""``medlink trials``: ClinicalTrials.gov records normalized to concepts, and that normalization scored."""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path

import click


@click.group()
def trials() -> None:
    """Clinical trial records: normalize conditions and interventions, evaluate against NLM's MeSH terms."""


def _normalizer_options(function):
    options = [
        click.option("--conditions-index", type=click.Path(path_type=Path, file_okay=False),
                     help="Index for conditions and non-drug interventions (default: the embedded MeSH one)."),
        click.option("--conditions-terminology", type=click.Path(path_type=Path, file_okay=False),
                     help="Compiled terminology for conditions (alone: exact match only; with an index: its "
                          "terminology)."),
        click.option("--interventions-index", type=click.Path(path_type=Path, file_okay=False),
                     help="Index for drug-like interventions, e.g. MeSH descriptors + supplementary records or "
                          "DrugBank (default: the conditions linker)."),
        click.option("--interventions-terminology", type=click.Path(path_type=Path, file_okay=False),
                     help="Compiled terminology for drug-like interventions (alone: exact match only)."),
        click.option("--exact-only", is_flag=True, help="Exact normalized match only: no encoder, no index."),
        click.option("--condition-nil", type=float, default=None, help="Nil threshold for conditions (default 0.52)."),
        click.option("--drug-nil", type=float, default=None,
                     help="Nil threshold for drug-like interventions (default 0.62)."),
        click.option("--other-nil", type=float, default=None,
                     help="Nil threshold for other interventions (default 0.97)."),
        click.option("--batch-records", type=click.IntRange(min=1), default=256, show_default=True,
                     help="Records linked together (larger: fuller encoder batches, more memory)."),
        click.option("--strict", is_flag=True, help="Stop at the first malformed record instead of skipping it."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)

    @functools.wraps(function)
    def with_spec(**kwargs):
        from dataclasses import replace

        from medlink.linking.recipe import LinkerRecipe
        from medlink.trials.normalize import NilThresholds
        from medlink.trials.setup import NormalizerSpec

        exact = kwargs.pop("exact_only")

        def recipe(index: Path | None, terminology: Path | None) -> LinkerRecipe:
            # A terminology given without an index is linked by exact match.
            return LinkerRecipe(index, terminology, exact or (terminology is not None and index is None))

        conditions = recipe(kwargs.pop("conditions_index"), kwargs.pop("conditions_terminology"))
        drug_index, drug_terminology = kwargs.pop("interventions_index"), kwargs.pop("interventions_terminology")
        interventions = recipe(drug_index, drug_terminology) if drug_index or drug_terminology else None
        given = {name: value for name in ("condition", "drug", "other")
                 if (value := kwargs.pop(f"{name}_nil")) is not None}  # fmt: skip
        thresholds = replace(NilThresholds(), **given)
        spec = NormalizerSpec(conditions, interventions, thresholds, kwargs.pop("batch_records"))
        return function(spec=spec, **kwargs)

    return with_spec


@trials.command()
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "output_path", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="OUT.jsonl or OUT.parquet; a killed run resumes when run again.")  # fmt: skip
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes linking batches in parallel, each with its own linker.")  # fmt: skip
@click.option("--progress/--no-progress", default=None, help="Progress bar on standard error (default: if a terminal).")
@_normalizer_options
def normalize(records: tuple[Path, ...], output_path: Path, workers: int, progress: bool | None, strict: bool,
              spec) -> None:  # fmt: skip
    """Link the conditions and interventions of trial RECORDS (XML or API v2 JSON files, folders, .zip, .tar.gz).

    One row per record: {"nct_id", "conditions": [{"text", "concepts", "names", "score", "stage"}],
    "interventions": [{"text", "type", "concepts", "names", "score", "stage", "nil_class"}]}.
    """
    from medlink.terminology import ReadReport
    from medlink.trials.output import output_format
    from medlink.trials.run import normalize_to_file

    output_format(output_path)
    show = sys.stderr.isatty() if progress is None else progress
    started = time.perf_counter()
    summary = normalize_to_file(list(records), output_path, spec, workers, ReadReport(strict=strict), show)
    seconds = time.perf_counter() - started
    for line in summary.report.lines():
        click.echo(line, err=True)
    rate = summary.written / seconds if seconds else 0.0
    click.echo(f"{summary.written:,} records normalized into {output_path} ({rate:,.0f} records/s); "
               f"{summary.skipped_done:,} already done, skipped", err=True)  # fmt: skip


@trials.command("eval-normalization")
@click.argument("records", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--split", type=click.Choice(["train", "test", "all"]), default="all", show_default=True,
              help="Records by NCT-id hash: tune on train, report test.")  # fmt: skip
@click.option("--mesh", "mesh_dir", type=click.Path(path_type=Path, file_okay=False),
              help="MeSH terminology that resolves browse terms (default: the interventions terminology, else the "
                   "embedded descriptors; supplementary records resolve only when it holds them).")  # fmt: skip
@click.option("--calibrate", is_flag=True,
              help="Also choose each field's nil threshold with DILBERT's strategies on these records.")  # fmt: skip
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_normalizer_options
def eval_normalization(records: tuple[Path, ...], split: str, mesh_dir: Path | None, calibrate: bool,
                       output_format: str, strict: bool, spec) -> None:  # fmt: skip
    """Score normalization against NLM's condition and intervention browse terms (micro P / R / F1)."""
    from dataclasses import replace

    from medlink.terminology import ReadReport
    from medlink.trials.calibration import calibrate_thresholds
    from medlink.trials.evaluation import BrowseScorer, in_split
    from medlink.trials.readers import read_trials

    report = ReadReport(strict=strict)
    chosen = list(in_split(read_trials(records, report), split))
    if not chosen:
        raise click.ClickException(f"no record in the {split} split of {', '.join(map(str, records))}")
    normalizer = spec.build()
    scorer = BrowseScorer(_mesh(mesh_dir, normalizer))
    output: dict = {"split": split}
    if calibrate:
        calibration = calibrate_thresholds(normalizer, scorer, chosen)
        output["calibration"] = calibration.to_dict()
        normalizer = replace(normalizer, thresholds=calibration.thresholds)
    started = time.perf_counter()
    trials_out = list(normalizer.normalize(chosen))
    seconds = time.perf_counter() - started
    evaluation = scorer.score(zip(chosen, trials_out, strict=True))
    output.update(evaluation.to_dict(), thresholds=vars(normalizer.thresholds), seconds=round(seconds, 2))
    for line in report.lines():
        click.echo(line, err=True)
    if output_format == "json":
        click.echo(json.dumps(output, indent=2))
        return
    click.echo(f"{evaluation.records:,} records ({split}), thresholds {vars(normalizer.thresholds)}")
    for name, tally in (("conditions", evaluation.conditions), ("interventions", evaluation.interventions),
                        ("  in D scope", evaluation.interventions_in_scope)):
        click.echo(f"{name:14} P {tally.precision:.4f}  R {tally.recall:.4f}  F1 {tally.f1:.4f}  "
                   f"({tally.correct:,}/{tally.predicted:,} predicted, {tally.found:,}/{tally.gold:,} browse terms)")
    for kind, tally in sorted(evaluation.by_type.items()):
        click.echo(f"  {kind:20} P {tally.precision:.4f}  ({tally.correct:,}/{tally.predicted:,})")
    if calibrate:
        click.echo(f"calibration: {json.dumps(output['calibration'])}")


def _mesh(mesh_dir: Path | None, normalizer):
    if mesh_dir is not None:
        from medlink.terminology import load_terminology

        return load_terminology(mesh_dir)
    return normalizer.interventions.terminology
