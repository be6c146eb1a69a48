"""``medlink benchmark``: run an accuracy suite and write its report (Markdown, JSON, SVG)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from medlink.cli.paths import PathOption


@click.command()
@click.argument("config_path", type=PathOption(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--data",
    "data_dir",
    type=PathOption(path_type=Path, file_okay=False),
    default=Path("../shared/data"),
    show_default=True,
    help="The data folder that {data} in the configuration stands for.",
)
@click.option(
    "--work",
    "work_dir",
    type=PathOption(path_type=Path, file_okay=False),
    default=Path("build/benchmark"),
    show_default=True,
    help="Where indexes are built and cached between runs.",
)
@click.option(
    "-o",
    "--output",
    "output_path",
    type=PathOption(path_type=Path, dir_okay=False),
    default=Path("docs/benchmarks.md"),
    show_default=True,
    help="The Markdown report; the JSON record and the SVG plot go beside it.",
)
@click.option("--dataset", "only_datasets", multiple=True, help="Run only these datasets (by name).")
def benchmark(
    config_path: Path, data_dir: Path, work_dir: Path, output_path: Path, only_datasets: tuple[str, ...]
) -> None:
    """Link every dataset of CONFIG with every system of CONFIG and write the report.

    \b
    Example (from the repository root, ../shared beside it):
      medlink benchmark benchmarks/suite.toml
    """
    from dataclasses import replace

    from medlink.benchmark.annotation_runs import prepare_annotation, run_annotation
    from medlink.benchmark.config import load_config
    from medlink.benchmark.report import write_report
    from medlink.benchmark.runner import run_benchmark

    config = load_config(config_path)
    if only_datasets:
        unknown = set(only_datasets) - {d.name for d in (*config.datasets, *config.annotation)}
        if unknown:
            raise click.UsageError(f"no such dataset in {config_path}: {', '.join(sorted(unknown))}")
        config = replace(
            config,
            datasets=tuple(d for d in config.datasets if d.name in only_datasets),
            annotation=tuple(d for d in config.annotation if d.name in only_datasets),
        )
    if not data_dir.exists():
        raise click.UsageError(f"{data_dir}: data folder not found (give it with --data)")

    def log(line: str) -> None:
        click.echo(line, err=True)

    corpora = prepare_annotation(config, data_dir.resolve())  # their files checked before hours of linking
    cells = run_benchmark(config, data_dir.resolve(), work_dir, log=log)
    annotation = run_annotation(config, corpora, work_dir, log=log, data=data_dir.resolve())
    command = "medlink benchmark " + shlex.join(sys.argv[2:])
    for path in write_report(config, cells, command, output_path, annotation):
        click.echo(f"wrote {path}")
