"""``medlink trials select``: the ranking setting chosen by cross-validation over judged trial collections
(:mod:`medlink.trials.matching.selection`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from medlink.cli.aliases import OptionWithOldName
from medlink.cli.paths import PathOption
from medlink.trials.matching.matcher_spec import MatcherSpec


@click.command("select")
@click.option(
    "--birco",
    "bircos",
    multiple=True,
    type=PathOption(path_type=Path, dir_okay=False),
    help="A BIRCO collection (repeatable), ranked with its own trial texts.",
)
@click.option(
    "--trec",
    "trecs",
    multiple=True,
    type=PathOption(path_type=Path, file_okay=False),
    help="A TREC CT folder (repeatable), ranked within --index.",
)
@click.option(
    "--index",
    "index_dir",
    type=PathOption(path_type=Path, file_okay=False),
    default=None,
    help="The trial index the TREC CT collections are ranked in.",
)
@click.option("--encoders", default=None, help="Trial encoders (default: the index's own, else the shipped ones).")
@click.option(
    "--reranker",
    "--rerank",
    "reranker",
    cls=OptionWithOldName,
    old_name="--rerank",
    default="msmarco",
    show_default=True,
    help="The cross-encoder the settings may use: 'msmarco' or an ONNX cross-encoder folder.",
)
@click.option("--rerank-tokens", type=click.IntRange(min=16), default=MatcherSpec.rerank_tokens, show_default=True)
@click.option(
    "--readings",
    default="whole,findings,windows",
    show_default=True,
    help="The note readings to compare (see medlink.trials.matching.note_readings).",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Topic folds of the by-topic cross-validation.",
)
@click.option(
    "--objective",
    type=click.Choice(["worst", "mean"]),
    default="worst",
    show_default=True,
    help="worst: the largest smallest change from today's default over the collections; mean: the best "
    "mean NDCG@10 over collections.",
)
@click.option(
    "--cache",
    "cache_dir",
    type=PathOption(path_type=Path, file_okay=False),
    default=None,
    help="Keep each collection's gathered evidence here and reuse it when nothing it depends on changed.",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def select(
    bircos: tuple[Path, ...],
    trecs: tuple[Path, ...],
    index_dir: Path | None,
    encoders: str | None,
    reranker: str,
    rerank_tokens: int,
    readings: str,
    folds: int,
    objective: str,
    cache_dir: Path | None,
    output_format: str,
) -> None:
    """Choose the ranking setting (fusion; reranker on or off, how it reads the note, how many trials, its weight)
    by cross-validation over every collection given, folded by collection and by topic; print each collection's
    held-out NDCG@10 beside today's default, and the options of the setting chosen on all of them."""
    from medlink.trials.matching.judged_collections import read_birco, read_trec
    from medlink.trials.matching.note_readings import NoteReading
    from medlink.trials.matching.selection import select_setting, settings_grid

    if len(bircos) + len(trecs) < 2:
        raise click.UsageError("cross-validation needs at least two collections (--birco FILE, --trec FOLDER)")
    if trecs and index_dir is None:
        raise click.UsageError("TREC CT topics come without trials; give --index of the trials you have")
    try:
        chosen_readings = [NoteReading(mode.strip()) for mode in readings.split(",") if mode.strip()]
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--readings") from None
    collections = [*(read_birco(path) for path in bircos), *(read_trec(path) for path in trecs)]
    names = [c.name for c in collections]
    if len(set(names)) != len(names):
        raise click.UsageError(f"two collections share a name ({', '.join(names)}): rename one of the files")
    evidence = []
    for collection in collections:
        spec = MatcherSpec(
            index_dir=None if collection.trial_texts else index_dir,
            encoders=encoders,
            reranker=reranker,
            rerank_tokens=rerank_tokens,
        )
        evidence += _pool_evidence(spec, collection, chosen_readings, cache_dir)
    if not evidence:
        raise click.ClickException("no judged trial of these collections is in the index: nothing to select on")
    grid = settings_grid([r.mode for r in chosen_readings])
    selection = select_setting(evidence, grid, folds=folds, objective=objective)
    report = {
        "chosen": selection.chosen.label,
        "options": selection.chosen.options(reranker),
        "today": selection.today.label,
        "folds": folds,
        "objective": objective,
        "held_out": [vars(h) for h in selection.held_out],
        "leaderboard": [{"setting": s, "ndcg@10": m, "per_collection": c} for s, m, c in selection.leaderboard],
    }
    if output_format == "json":
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(
        f"NDCG@10 per collection (patients): today's default ({selection.today.label}); held out by "
        f"collection; held out by topic ({folds} folds); the chosen setting on all"
    )
    for h in selection.held_out:
        click.echo(
            f"  {h.collection:<16} ({h.patients:>3})  today {h.today:.4f}  by collection {h.by_collection:.4f}"
            f"  by topic {h.by_topic:.4f}  chosen {h.chosen:.4f}   [{h.by_collection_setting}]"
        )
    click.echo(f"chosen by the {objective} objective; best settings by NDCG@10 averaged over collections:")
    for label, macro, _ in selection.leaderboard[:8]:
        click.echo(f"  {macro:.4f}  {label}")
    click.echo(f"chosen: {selection.chosen.label}  ({report['options']})")


def _pool_evidence(spec: MatcherSpec, collection, readings, cache_dir: Path | None) -> list:
    from medlink.trials.matching.pool_evidence import (
        gather_pool_evidence,
        gathering_key,
        load_pool_evidence,
        save_pool_evidence,
    )

    progress = sys.stderr.isatty()
    matcher = spec.build(collection.trial_texts, progress=progress)
    key = {**gathering_key(matcher, readings), "collection": collection.name}
    path = cache_dir / f"{collection.name}.json" if cache_dir else None
    saved = load_pool_evidence(path, key) if path else None
    if saved is not None:
        click.echo(f"{collection.name}: evidence read from {path}", err=True)
        return saved
    started = time.perf_counter()
    evidence = gather_pool_evidence(matcher, collection, readings, progress)
    click.echo(
        f"{collection.name}: evidence on {sum(len(e.trials) for e in evidence):,} judged trials of "
        f"{len(evidence)} patients gathered in {time.perf_counter() - started:,.0f} s",
        err=True,
    )
    if path:
        save_pool_evidence(evidence, key, path)
    return evidence
