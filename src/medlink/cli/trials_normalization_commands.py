"""``medlink trials normalize`` and ``eval-normalization``: ClinicalTrials.gov records normalized to concepts, and
that normalization scored against NLM's browse terms; and the options that say which linkers normalize."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from medlink.cli.dataclass_options import dataclass_options, settings_from
from medlink.cli.paths import PathOption
from medlink.linking.spec import DESCRIPTORS, MESH, LinkerSpec, linker_spec
from medlink.options import setting
from medlink.trials.normalization.normalizer import NilThresholds
from medlink.trials.normalization.normalizer_spec import NormalizerSpec

_FOLDER = {"file_okay": False}


@dataclass(frozen=True)
class NormalizerSources:
    """Which index or terminology links each field; each field is its option."""

    conditions_index: Path | None = setting(
        None, "Index for conditions and non-drug interventions (default: the embedded MeSH one).", path=_FOLDER
    )
    conditions_terminology: Path | None = setting(
        None,
        "Compiled terminology for conditions (alone: exact match only; with an index: its terminology).",
        path=_FOLDER,
    )
    interventions_index: Path | None = setting(
        None,
        "Index for drug-like interventions, e.g. DrugBank (default: the embedded MeSH descriptors + "
        "supplementary records, the latter by exact match; compiled on first use).",
        path=_FOLDER,
    )
    interventions_terminology: Path | None = setting(
        None, "Compiled terminology for drug-like interventions (alone: exact match only).", path=_FOLDER
    )
    exact_only: bool = setting(False, "Exact normalized match only: no encoder, no index.")

    def linker_spec(self, index: Path | None, terminology: Path | None, embedded: str = DESCRIPTORS) -> LinkerSpec:
        # A terminology given without an index is linked by exact match; conditions default to the descriptors
        # alone (the per-field nil thresholds were calibrated over them).
        exact_only = self.exact_only or (terminology is not None and index is None)
        return linker_spec(index, terminology=terminology, exact_only=exact_only, embedded=embedded)

    @property
    def conditions(self) -> LinkerSpec:
        return self.linker_spec(self.conditions_index, self.conditions_terminology)

    @property
    def interventions(self) -> LinkerSpec:
        if self.interventions_index or self.interventions_terminology:
            return self.linker_spec(self.interventions_index, self.interventions_terminology)
        return self.linker_spec(None, None, MESH)


def normalizer_options(function: Callable) -> Callable:
    """The options of :class:`NormalizerSources`, :class:`NilThresholds` and :class:`NormalizerSpec`, handed to
    ``function`` as one ``spec``, and ``--strict``."""

    @functools.wraps(function)
    def with_spec(**values: Any) -> Any:
        sources = settings_from(NormalizerSources, values)
        thresholds = settings_from(NilThresholds, values)
        spec = settings_from(
            NormalizerSpec,
            values,
            conditions=sources.conditions,
            interventions=sources.interventions,
            thresholds=thresholds,
        )
        return function(spec=spec, **values)

    decorated = dataclass_options(NormalizerSpec)(with_spec)
    decorated = dataclass_options(NilThresholds)(decorated)
    decorated = dataclass_options(NormalizerSources)(decorated)
    return click.option("--strict", is_flag=True, help="Stop at the first malformed record, not skip it.")(decorated)


def register(trials: click.Group) -> None:
    """Add the normalization commands to the ``trials`` group."""
    trials.add_command(normalize)
    trials.add_command(eval_normalization)


@click.command()
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option(
    "-o",
    "--output",
    "output_path",
    type=PathOption(path_type=Path, dir_okay=False),
    required=True,
    help="OUT.jsonl or OUT.parquet; a killed run resumes when run again.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes linking batches in parallel, each with its own linker.",
)
@click.option("--progress/--no-progress", default=None, help="Progress bar on standard error (default: if a terminal).")
@normalizer_options
def normalize(
    records: tuple[Path, ...],
    output_path: Path,
    workers: int,
    progress: bool | None,
    strict: bool,
    spec: NormalizerSpec,
) -> None:
    """Link the conditions and interventions of trial RECORDS (XML or API v2 JSON files, folders, .zip, .tar.gz).

    One row per record: {"nct_id", "conditions": [{"text", "concepts", "names", "score", "stage"}],
    "interventions": [{"text", "type", "concepts", "names", "score", "stage", "nil_class"}]}.
    """
    from medlink.terminology import ReadReport
    from medlink.trials.normalization.output import output_format
    from medlink.trials.normalization.run import normalize_to_file

    output_format(output_path)
    show = sys.stderr.isatty() if progress is None else progress
    summary = normalize_to_file(list(records), output_path, spec, workers, ReadReport(strict=strict), show)
    for line in summary.report.lines():
        click.echo(line, err=True)
    linked = summary.seconds and summary.written
    rate = f"{summary.written / summary.seconds:,.0f} records/s once the linkers were ready" if linked else "none new"
    click.echo(
        f"{summary.written:,} records normalized into {output_path} ({rate}); "
        f"{summary.skipped_done:,} already done, skipped",
        err=True,
    )


@click.command("eval-normalization")
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option(
    "--split",
    type=click.Choice(["train", "test", "all"]),
    default="all",
    show_default=True,
    help="Records by NCT-id hash: tune on train, report test.",
)
@click.option(
    "--mesh",
    "mesh_dir",
    type=PathOption(path_type=Path, file_okay=False),
    help="MeSH terminology that resolves browse terms (default: the interventions terminology, else the "
    "embedded descriptors; supplementary records resolve only when it holds them).",
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="Also choose each field's nil threshold with DILBERT's strategies on these records.",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@normalizer_options
def eval_normalization(
    records: tuple[Path, ...],
    split: str,
    mesh_dir: Path | None,
    calibrate: bool,
    output_format: str,
    strict: bool,
    spec: NormalizerSpec,
) -> None:
    """Score normalization against NLM's condition and intervention browse terms (micro P / R / F1)."""
    from dataclasses import replace

    from medlink.terminology import ReadReport
    from medlink.trials.normalization.browse_terms import BrowseScorer, in_split
    from medlink.trials.normalization.thresholds import calibrate_thresholds
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
    for name, tally in (
        ("conditions", evaluation.conditions),
        ("interventions", evaluation.interventions),
        ("  in D scope", evaluation.interventions_in_scope),
    ):
        click.echo(
            f"{name:14} P {tally.precision:.4f}  R {tally.recall:.4f}  F1 {tally.f1:.4f}  "
            f"({tally.correct:,}/{tally.predicted:,} predicted, {tally.found:,}/{tally.gold:,} browse terms)"
        )
    for kind, tally in sorted(evaluation.by_type.items()):
        click.echo(f"  {kind:20} P {tally.precision:.4f}  ({tally.correct:,}/{tally.predicted:,})")
    if calibrate:
        click.echo(f"calibration: {json.dumps(output['calibration'])}")


def _mesh(mesh_dir: Path | None, normalizer):
    if mesh_dir is not None:
        from medlink.terminology import load_terminology

        return load_terminology(mesh_dir)
    return normalizer.interventions.terminology
