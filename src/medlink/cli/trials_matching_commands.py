"""``medlink trials index / train / train-eligibility-reranker / match / rank / eval``: patients matched to
trials (TrialMatcher, shared/papers/003): the trial index, its encoders and eligibility cross-encoder, and ranking
on test collections."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from medlink.cli.aliases import hidden_alias
from medlink.cli.dataclass_options import dataclass_options, settings_from, with_settings
from medlink.cli.paths import PathOption
from medlink.cli.trials_normalization_commands import normalizer_options
from medlink.encoders.registry import PACKAGED_MINILM
from medlink.trials.matching.matcher import DEFAULT_TOP
from medlink.trials.matching.matcher_spec import MatcherSpec
from medlink.trials.matching.scoring import FusionWeights
from medlink.trials.matching.training_settings import EligibilityConfig, TrialTrainConfig
from medlink.trials.normalization.normalizer_spec import NormalizerSpec


def register(trials: click.Group) -> None:
    """Add the matching commands to the ``trials`` group (``train-reranker``, the old name of
    ``train-eligibility-reranker``, as a hidden alias)."""
    from medlink.cli.trials_selection_command import select

    for command in (index_trials, train_trials, train_eligibility_reranker, match, rank, eval_trials, select):
        trials.add_command(command)
    trials.add_command(hidden_alias(train_eligibility_reranker, "train-reranker"))


def matcher_options(function: Callable) -> Callable:
    """The options of :class:`MatcherSpec` (and ``--weights``), handed to ``function`` as one ``spec``; the
    command's ``--index`` becomes the spec's index."""

    @functools.wraps(function)
    def with_spec(**values: Any) -> Any:
        try:
            weights = FusionWeights.parse(values.pop("weights"))
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--weights") from None
        spec = settings_from(MatcherSpec, values, index_dir=values.pop("index_dir", None), weights=weights)
        return function(spec=spec, **values)

    weights = click.option(
        "--weights",
        default="",
        help="Fusion weights to change, e.g. 'bm25=0.3,rerank=2' (see medlink.trials.matching.scoring.FusionWeights).",
    )
    return dataclass_options(MatcherSpec)(weights(with_spec))


@click.command("index")
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path, file_okay=False), required=True)
@click.option("--encoders", default=None, help="Trial encoders (default: the shipped ones).")
@click.option("--progress/--no-progress", default=None, help="Progress bars on standard error (default: if a tty).")
@normalizer_options
def index_trials(
    records: tuple[Path, ...],
    output_dir: Path,
    encoders: str | None,
    progress: bool | None,
    strict: bool,
    spec: NormalizerSpec,
) -> None:
    """Index trial RECORDS for matching: description, inclusion and exclusion vectors (whole and per criterion),
    BM25, the concepts of conditions, interventions and exclusions, age and sex limits."""
    from medlink.linking.mentions.scanner import ConceptScanner
    from medlink.terminology import ReadReport, load_default_terminology
    from medlink.trials.matching.encoders import load_trial_encoders
    from medlink.trials.matching.index_build import index_records
    from medlink.trials.readers import read_trials

    show = sys.stderr.isatty() if progress is None else progress
    report = ReadReport(strict=strict)
    started = time.perf_counter()
    trial_encoders = load_trial_encoders(encoders)
    index = index_records(
        read_trials(records, report),
        output_dir,
        trial_encoders,
        spec.build(show),
        ConceptScanner(load_default_terminology()),
        show,
    )
    for line in report.lines():
        click.echo(line, err=True)
    click.echo(
        f"{len(index):,} trials indexed into {output_dir} with encoders {trial_encoders.name!r} "
        f"({time.perf_counter() - started:,.0f} s)",
        err=True,
    )


def _training_options(function: Callable) -> Callable:
    """What both trainers take beside their settings: the records, where to write, the start model."""
    options = [
        click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path)),
        click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path, file_okay=False), required=True),
        click.option("--base", default=PACKAGED_MINILM, show_default=True, help="Model to start from."),
        click.option("--strict", is_flag=True, help="Stop at the first malformed record, not skip it."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _train(train_function, config, records: tuple[Path, ...], output_dir: Path, base: str, strict: bool) -> None:
    """Read the records, train, and say what came of it; a rerun after an interruption resumes."""
    from medlink.encoders.registry import resolve_model
    from medlink.terminology import ReadReport
    from medlink.trials.matching.encoder_training import training_trials
    from medlink.trials.readers import read_trials

    examples = training_trials(read_trials(records, ReadReport(strict=strict)))
    try:
        result = train_function(resolve_model(base), examples, output_dir, config, progress=sys.stderr.isatty())
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"{result.steps} steps ({result.resumed_from} resumed) in {result.seconds:,.0f} s, last loss "
        f"{result.last_loss:.4f}: {output_dir}",
        err=True,
    )


@click.command("train")
@_training_options
@with_settings(TrialTrainConfig, "config")
def train_trials(
    records: tuple[Path, ...], output_dir: Path, base: str, strict: bool, config: TrialTrainConfig
) -> None:
    """Train TrialMatcher's patient and trial encoders on RECORDS (inclusion criteria as eligible patients,
    exclusion criteria as ineligible ones; TrialMatcher eq. 1–4, shared/papers/003). Run it again after an
    interruption to resume."""
    from medlink.trials.matching.encoder_training import train_trial_encoders

    _train(train_trial_encoders, config, records, output_dir, base, strict)


@click.command("train-eligibility-reranker")
@_training_options
@with_settings(EligibilityConfig, "config")
def train_eligibility_reranker(
    records: tuple[Path, ...], output_dir: Path, base: str, strict: bool, config: EligibilityConfig
) -> None:
    """Train the eligibility cross-encoder (TrialMatcher's criteria reranker) on RECORDS: is this criteria set
    the trial's inclusion or its exclusion set? Use it with `medlink trials match --reranker OUTPUT`."""
    from medlink.trials.matching.eligibility_reranker import train_eligibility_reranker as run_training

    _train(run_training, config, records, output_dir, base, strict)


@click.command("match")
@click.argument("note")
@click.option("--index", "index_dir", type=PathOption(path_type=Path, file_okay=False), required=True)
@click.option("--top", type=click.IntRange(min=1), default=DEFAULT_TOP, show_default=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@matcher_options
def match(note: str, top: int, output_format: str, spec: MatcherSpec) -> None:
    """Rank the trials of an index for a patient NOTE ('-' reads it from standard input), with why."""
    if note == "-":
        note = sys.stdin.read()
    result = spec.build().match(note, top)
    if output_format == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    age = "?" if result.note.age is None else f"{result.note.age:g}"
    click.echo(
        f"patient: age {age}, sex {result.note.sex or '?'}; diseases named: "
        f"{', '.join(result.concepts) or 'none found'}"
    )
    for trial in result.trials:
        click.echo(f"\n{trial.rank:>2}. {trial.nct_id}  {trial.score:+.3f}  {trial.title}")
        verdicts = {"age": (trial.age_ok, result.note.age), "sex": (trial.sex_ok, result.note.sex)}
        click.echo("    " + ", ".join(f"{name} {_verdict(ok, stated)}" for name, (ok, stated) in verdicts.items()))
        if trial.shared_concepts:
            click.echo(f"    shared conditions: {', '.join(trial.shared_concepts)}")
        for criterion in trial.best_inclusion:
            click.echo(f"    + {criterion.score:.2f} {criterion.text[:150]}")
        for exclusion in trial.fired_exclusions:
            click.echo(f"    - excluded by: {exclusion[:150]}")
        _echo_criteria(trial.criteria)


def _echo_criteria(verdicts) -> None:
    """Criteria the note decides, with its words; the unknown ones only counted."""
    if not verdicts:
        return
    unknown = sum(v.verdict == "unknown" for v in verdicts)
    click.echo(f"    criteria: {len(verdicts) - unknown} decided by the note, {unknown} unknown")
    for v in verdicts:
        if v.verdict != "unknown":
            click.echo(f"      {v.side} {v.verdict}: {v.criterion[:100]}  [note: {v.evidence[:80]}]")


def _collection_options(function):
    options = [
        click.option(
            "--birco",
            type=PathOption(path_type=Path, dir_okay=False),
            default=None,
            help="A BIRCO collection (JSON with query, corpus, qrel), e.g. the SIGIR 2016 test_shared.json.",
        ),
        click.option(
            "--trec",
            type=PathOption(path_type=Path, file_okay=False),
            default=None,
            help="A TREC CT folder (queries.jsonl, qrels/test.tsv); needs --index of the trials at hand.",
        ),
        click.option(
            "--index",
            "index_dir",
            type=PathOption(path_type=Path, file_okay=False),
            default=None,
            help="Trial index (default for --birco: the collection's own trial texts).",
        ),
        click.option(
            "--full",
            is_flag=True,
            help="Search the whole index (top 100) instead of ranking each patient's judged pool.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _rank(birco: Path | None, trec: Path | None, full: bool, spec: MatcherSpec):
    from medlink.trials.matching.judged_collections import read_birco, read_trec
    from medlink.trials.matching.runs import FULL, POOL, rank_collection

    if birco is not None and trec is None:
        collection = read_birco(birco)
    elif trec is not None and birco is None:
        collection = read_trec(trec)
    else:
        raise click.UsageError("give one collection: --birco FILE or --trec FOLDER")
    if spec.index_dir is None and not collection.trial_texts:
        raise click.UsageError(f"{trec}: TREC CT topics come without trials; give --index of the trials you have")
    matcher = spec.build(collection.trial_texts, progress=sys.stderr.isatty())
    runs = rank_collection(matcher, collection, FULL if full else POOL, progress=sys.stderr.isatty())
    if not runs.collection.qrels:
        raise click.ClickException("no judged trial of this collection is in the index: nothing to rank")
    return runs


def _verdict(ok: bool | None, stated: object) -> str:
    """A demographic check in words: no verdict means the note does not say, or the trial sets no limit."""
    if ok is None:
        return "not in the note" if stated is None else "no limit"
    return "ok" if ok else "EXCLUDED"


@click.command("rank")
@_collection_options
@click.option(
    "--run",
    "run_path",
    type=PathOption(path_type=Path, dir_okay=False),
    required=True,
    help="Where to write the TREC run file.",
)
@matcher_options
def rank(birco: Path | None, trec: Path | None, full: bool, run_path: Path, spec: MatcherSpec) -> None:
    """Rank each patient's trials of a test collection and write a standard TREC run file."""
    from medlink.trials.matching.metrics import write_run

    runs = _rank(birco, trec, full, spec)
    write_run(runs.system, run_path)
    click.echo(f"{len(runs.system)} patients ranked into {run_path}", err=True)


@click.command("eval")
@_collection_options
@click.option(
    "--run",
    "run_path",
    type=PathOption(path_type=Path, dir_okay=False),
    default=None,
    help="Also write the system's TREC run file here.",
)
@click.option(
    "--peers",
    "peers_path",
    type=PathOption(path_type=Path, dir_okay=False),
    default=None,
    help='Other systems\' rankings of the same collection (JSON: {"systems": {name: {patient: [trials]}}}), '
    "scored beside medlink with the same judgements.",
)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@matcher_options
def eval_trials(
    birco: Path | None,
    trec: Path | None,
    full: bool,
    run_path: Path | None,
    peers_path: Path | None,
    output_format: str,
    spec: MatcherSpec,
) -> None:
    """NDCG@10, P@10, MRR, R-precision and Recall@100 of the matcher on a test collection, with BM25 from the same
    index beside it (ir_measures). On TREC CT only the judged trials present in the index count. With --peers,
    every peer's ranking too, and a paired randomization test of medlink against the best peer by NDCG@10."""
    from medlink.trials.matching.metrics import evaluate, write_run

    runs = _rank(birco, trec, full, spec)
    if run_path:
        write_run(runs.system, run_path)
    judged = runs.collection
    peers = {}
    if peers_path is not None:
        from medlink.trials.matching.peer_rankings import read_peer_rankings

        peers = read_peer_rankings(peers_path, judged.qrels, judged.name)
    table = {
        "system": evaluate(runs.system, judged.qrels),
        "bm25": evaluate(runs.bm25, judged.qrels),
        **{name: evaluate(run, judged.qrels) for name, run in peers.items()},
    }
    report: dict = {
        "collection": judged.name,
        "protocol": "full" if full else "judged pool",
        "patients": len(judged.qrels),
        "judgements": sum(len(v) for v in judged.qrels.values()),
        **table,
    }
    if peers:
        report["against_best_peer"] = _against_best_peer(runs.system, peers, judged.qrels, table)
    if output_format == "json":
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(
        f"{judged.name}: {report['patients']} patients, {report['judgements']:,} judgements, {report['protocol']}"
    )
    width = max(8, *(len(name) + 2 for name in table))
    click.echo(f"{'':{width}}" + "".join(f"{name:>16}" for name in table["system"]))
    ordered = ["system", "bm25", *sorted(peers, key=lambda name: -table[name]["ndcg@10"])]
    for system in ordered:
        click.echo(f"{system:{width}}" + "".join(f"{value:>16.4f}" for value in table[system].values()))
    if peers:
        test = report["against_best_peer"]
        click.echo(
            f"medlink against the best peer by NDCG@10 ({test['peer']}): {test['difference']:+.4f}, paired "
            f"randomization p = {test['p_value']:.3g} over {test['patients']} patients"
        )


def _against_best_peer(system: dict, peers: dict, qrels: dict, table: dict) -> dict:
    from medlink.evaluation.significance import paired_randomization
    from medlink.trials.matching.metrics import per_patient

    best = max(peers, key=lambda name: table[name]["ndcg@10"])
    ours, theirs = per_patient(system, qrels), per_patient(peers[best], qrels)
    patients = sorted(qrels)
    test = paired_randomization([ours[p] for p in patients], [theirs[p] for p in patients])
    return {
        "peer": best,
        "measure": "ndcg@10",
        "difference": round(test.difference, 4),
        "p_value": test.p_value,
        "patients": test.queries,
        "samples": test.samples,
    }
