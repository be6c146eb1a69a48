"""Options shared by the commands that link (``link``, ``eval``, ``calibrate``) and the linker they describe."""

from __future__ import annotations

from pathlib import Path

import click

from medlink.linking import Linker


def linker_options(function):
    options = [
        click.option("--terminology", "terminology_dir", type=click.Path(path_type=Path),
                     help="Compiled terminology (default: the embedded MeSH descriptors, or the index's own)."),
        click.option("--index", "index_dir", type=click.Path(path_type=Path),
                     help="Vector index from `medlink index build` (default: the embedded one, built on first use)."),
        click.option("--sieves", default=None,
                     help="Sieve order, e.g. 'exact,D-T@0.95,OD-T' (the default) or 'exact,O-T'."),
        click.option("--exact-only", is_flag=True, help="Exact normalized match only: no encoder, no index."),
        click.option("--nil-threshold", type=float, default=None,
                     help="Dense decisions scoring below this are nil (default: the index's calibrated one, if any)."),
        click.option("--several-within", type=float, default=None,
                     help="Claim every concept scoring within this margin of the best (multi-concept mentions)."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


def make_linker(terminology_dir: Path | None, index_dir: Path | None, sieves: str | None, exact_only: bool,
                nil_threshold: float | None = None, several_within: float | None = None,
                progress: bool = True) -> Linker:  # fmt: skip
    """The linker the options describe; explicit thresholds override what an index was calibrated with."""
    from dataclasses import replace

    linker = _base_linker(terminology_dir, index_dir, sieves, exact_only, progress)
    if nil_threshold is not None or several_within is not None:
        linker.config = replace(
            linker.config,
            nil_threshold=nil_threshold if nil_threshold is not None else linker.config.nil_threshold,
            several_within=several_within if several_within is not None else linker.config.several_within,
        )
    return linker


def _base_linker(terminology_dir: Path | None, index_dir: Path | None, sieves: str | None, exact_only: bool,
                 progress: bool) -> Linker:  # fmt: skip
    from medlink.linking.pipeline import DEFAULT_SIEVES, default_dense_linker, open_index_linker

    if exact_only:
        if index_dir:
            raise click.UsageError("--exact-only and --index exclude each other")
        return Linker.from_path(terminology_dir) if terminology_dir else Linker.default()
    if index_dir:
        return open_index_linker(index_dir, terminology_dir, sieves or DEFAULT_SIEVES)
    if terminology_dir:
        raise click.UsageError("a --terminology of your own needs an --index built from it (or --exact-only)")
    if sieves:
        raise click.UsageError("--sieves needs --index")
    return default_dense_linker(progress=progress)
