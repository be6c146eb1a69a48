"""``medlink trials``: ClinicalTrials.gov records normalized to concepts, and that normalization scored."""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path

import click

from medlink.cli.paths import PathOption


@click.group()
def trials() -> None:
    """Clinical trial records: normalize conditions and interventions, evaluate against NLM's MeSH terms."""


def _normalizer_options(function):
    options = [
        click.option("--conditions-index", type=PathOption(path_type=Path, file_okay=False),
                     help="Index for conditions and non-drug interventions (default: the embedded MeSH one)."),
        click.option("--conditions-terminology", type=PathOption(path_type=Path, file_okay=False),
                     help="Compiled terminology for conditions (alone: exact match only; with an index: its "
                          "terminology)."),
        click.option("--interventions-index", type=PathOption(path_type=Path, file_okay=False),
                     help="Index for drug-like interventions, e.g. DrugBank (default: the embedded MeSH descriptors "
                          "+ supplementary records, the latter by exact match; compiled on first use)."),
        click.option("--interventions-terminology", type=PathOption(path_type=Path, file_okay=False),
                     help="Compiled terminology for drug-like interventions (alone: exact match only)."),
        click.option("--exact-only", is_flag=True, help="Exact normalized match only: no encoder, no index."),
        click.option("--condition-nil", type=float, default=None, help="Nil threshold for conditions (default 0.52)."),
        click.option("--drug-nil", type=float, default=None,
                     help="Nil threshold for drug-like interventions (default 0.66)."),
        click.option("--other-nil", type=float, default=None,
                     help="Nil threshold for other interventions (default 0.97)."),
        click.option("--refine/--no-refine", default=True, show_default=True,
                     help="Add to each linked condition the narrower concepts the title or summary names."),
        click.option("--shorthand/--no-shorthand", default=True, show_default=True,
                     help="Also search strings with clinical shorthand spelled out ('T2DM', 'NSCLC')."),
        click.option("--respell/--no-respell", default=True, show_default=True,
                     help="Also search British spellings the American way, salts as their parent drug, "
                          "labelled compounds without their isotope label, possessive eponyms as their disease."),
        click.option("--qualifiers/--no-qualifiers", default=True, show_default=True,
                     help="Also link conditions without staging and course qualifiers ('Stage IIIB Breast Cancer', "
                          "'Recurrent Adult Burkitt Lymphoma') and keep the better spelling."),
        click.option("--batch-records", type=click.IntRange(min=1), default=256, show_default=True,
                     help="Records linked together (larger: fuller encoder batches, more memory)."),
        click.option("--strict", is_flag=True, help="Stop at the first malformed record, not skip it."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)

    @functools.wraps(function)
    def with_spec(**kwargs):
        from dataclasses import replace

        from medlink.linking.recipe import DRUGS, LinkerRecipe
        from medlink.trials.normalization.normalizer import NilThresholds
        from medlink.trials.normalization.normalizer_spec import NormalizerSpec

        exact = kwargs.pop("exact_only")

        def recipe(index: Path | None, terminology: Path | None) -> LinkerRecipe:
            # A terminology given without an index is linked by exact match.
            return LinkerRecipe(index, terminology, exact or (terminology is not None and index is None))

        conditions = recipe(kwargs.pop("conditions_index"), kwargs.pop("conditions_terminology"))
        drug_index, drug_terminology = kwargs.pop("interventions_index"), kwargs.pop("interventions_terminology")
        interventions = (recipe(drug_index, drug_terminology) if drug_index or drug_terminology
                         else LinkerRecipe(exact_only=exact, embedded=DRUGS))  # fmt: skip
        given = {name: value for name in ("condition", "drug", "other")
                 if (value := kwargs.pop(f"{name}_nil")) is not None}  # fmt: skip
        thresholds = replace(NilThresholds(), **given)
        spec = NormalizerSpec(conditions, interventions, thresholds, kwargs.pop("batch_records"), kwargs.pop("refine"),
                              kwargs.pop("shorthand"), kwargs.pop("respell"), kwargs.pop("qualifiers"))  # fmt: skip
        return function(spec=spec, **kwargs)

    return with_spec


@trials.command()
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option("-o", "--output", "output_path", type=PathOption(path_type=Path, dir_okay=False), required=True,
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
    from medlink.trials.normalization.output import output_format
    from medlink.trials.normalization.run import normalize_to_file

    output_format(output_path)
    show = sys.stderr.isatty() if progress is None else progress
    summary = normalize_to_file(list(records), output_path, spec, workers, ReadReport(strict=strict), show)
    for line in summary.report.lines():
        click.echo(line, err=True)
    linked = summary.seconds and summary.written
    rate = f"{summary.written / summary.seconds:,.0f} records/s once the linkers were ready" if linked else "none new"
    click.echo(f"{summary.written:,} records normalized into {output_path} ({rate}); "
               f"{summary.skipped_done:,} already done, skipped", err=True)  # fmt: skip


@trials.command("eval-normalization")
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option("--split", type=click.Choice(["train", "test", "all"]), default="all", show_default=True,
              help="Records by NCT-id hash: tune on train, report test.")  # fmt: skip
@click.option("--mesh", "mesh_dir", type=PathOption(path_type=Path, file_okay=False),
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


# --- matching patients to trials (TrialMatcher) ------------------------------------------------------------------


def _matcher_options(function):
    options = [
        click.option("--encoders", "encoders", default=None,
                     help="Trial encoders: a folder from `medlink trials train`, or a term encoder name for both "
                          "sides (default: the index's own, else the shipped ones)."),
        click.option("--rerank", "reranker", default=None,
                     help="Cross-encoder over the top trials: 'msmarco' (pip install 'medlink[rerank]') or an ONNX "
                          "cross-encoder folder (default: none)."),
        click.option("--rerank-top", type=click.IntRange(min=1), default=20, show_default=True,
                     help="How many top trials the reranker reads."),
        click.option("--weights", default="", help="Fusion weights to change, e.g. 'bm25=0.3,rerank=2' "
                                                   "(see medlink.trials.matching.scoring.FusionWeights)."),
        click.option("--no-concepts", is_flag=True, help="Do not compare the diseases of the note and the trials."),
        click.option("--no-expand", is_flag=True,
                     help="Do not add the names of the note's diseases to its BM25 query."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)

    @functools.wraps(function)
    def with_spec(**kwargs):
        from medlink.trials.matching.matcher_spec import MatcherSpec
        from medlink.trials.matching.scoring import FusionWeights

        try:
            weights = FusionWeights.parse(kwargs.pop("weights"))
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--weights") from None
        spec = MatcherSpec(kwargs.pop("index_dir", None), kwargs.pop("encoders"), kwargs.pop("reranker"), weights,
                           not kwargs.pop("no_concepts"), kwargs.pop("rerank_top"),
                           not kwargs.pop("no_expand"))  # fmt: skip
        return function(spec=spec, **kwargs)

    return with_spec


@trials.command("index")
@click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path))
@click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path, file_okay=False), required=True)
@click.option("--encoders", default=None, help="Trial encoders (default: the shipped ones).")
@click.option("--progress/--no-progress", default=None, help="Progress bars on standard error (default: if a tty).")
@_normalizer_options
def index_trials(records: tuple[Path, ...], output_dir: Path, encoders: str | None, progress: bool | None,
                 strict: bool, spec) -> None:  # fmt: skip
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
    index = index_records(read_trials(records, report), output_dir, trial_encoders, spec.build(show),
                          ConceptScanner(load_default_terminology()), show)  # fmt: skip
    for line in report.lines():
        click.echo(line, err=True)
    click.echo(f"{len(index):,} trials indexed into {output_dir} with encoders {trial_encoders.name!r} "
               f"({time.perf_counter() - started:,.0f} s)", err=True)  # fmt: skip


def _training_options(function):
    """What both trainers take: the records, where to write, the start model and the loop's limits."""
    options = [
        click.argument("records", nargs=-1, required=True, type=PathOption(path_type=Path)),
        click.option("-o", "--output", "output_dir", type=PathOption(path_type=Path, file_okay=False), required=True),
        click.option("--base", default="minilm", show_default=True, help="Model to start from."),
        click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True),
        click.option("--batch-size", type=click.IntRange(min=2), default=16, show_default=True),
        click.option("--max-steps", type=click.IntRange(min=1), default=None),
        click.option("--time-limit", type=float, default=None, help="Seconds: stop (and save) after that step."),
        click.option("--device", default="auto", show_default=True, help="cpu, cuda, or auto."),
        click.option("--strict", is_flag=True, help="Stop at the first malformed record, not skip it."),
    ]  # fmt: skip
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
    click.echo(f"{result.steps} steps ({result.resumed_from} resumed) in {result.seconds:,.0f} s, last loss "
               f"{result.last_loss:.4f}: {output_dir}", err=True)  # fmt: skip


@trials.command("train")
@_training_options
@click.option("--freeze-layers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep the embeddings and this many lower layers of both encoders as in the base model.")
def train_trials(records: tuple[Path, ...], output_dir: Path, base: str, epochs: int, batch_size: int,
                 max_steps: int | None, time_limit: float | None, device: str, strict: bool,
                 freeze_layers: int) -> None:  # fmt: skip
    """Train TrialMatcher's patient and trial encoders on RECORDS (inclusion criteria as eligible patients,
    exclusion criteria as ineligible ones; paper 003 eq. 1–4). Run it again after an interruption to resume."""
    from medlink.trials.matching.encoder_training import TrialTrainConfig, train_trial_encoders

    config = TrialTrainConfig(epochs=epochs, batch_size=batch_size, max_steps=max_steps, time_limit=time_limit,
                              device=device, freeze_layers=freeze_layers)  # fmt: skip
    _train(train_trial_encoders, config, records, output_dir, base, strict)


@trials.command("train-reranker")
@_training_options
@click.option("--other-trial-negatives", is_flag=True,
              help="Also teach that another trial's inclusion criteria do not fit (an addition to the paper).")
@click.option("--quantize", type=click.Choice(["none", "int8"]), default="none", show_default=True)
def train_reranker(records: tuple[Path, ...], output_dir: Path, base: str, epochs: int, batch_size: int,
                   max_steps: int | None, time_limit: float | None, device: str, strict: bool,
                   other_trial_negatives: bool, quantize: str) -> None:  # fmt: skip
    """Train the eligibility cross-encoder (TrialMatcher's damoebrtog reranker) on RECORDS: is this criteria set
    the trial's inclusion or its exclusion set? Use it with `medlink trials match --rerank OUTPUT`."""
    from medlink.trials.matching.eligibility_reranker import EligibilityConfig, train_eligibility_reranker

    config = EligibilityConfig(epochs=epochs, batch_size=batch_size, max_steps=max_steps, time_limit=time_limit,
                               other_trial_negatives=other_trial_negatives, quantize=quantize,
                               device=device)  # fmt: skip
    _train(train_eligibility_reranker, config, records, output_dir, base, strict)


@trials.command("match")
@click.argument("note")
@click.option("--index", "index_dir", type=PathOption(path_type=Path, file_okay=False), required=True)
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_matcher_options
def match(note: str, top: int, output_format: str, spec) -> None:
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
    click.echo(f"patient: age {age}, sex {result.note.sex or '?'}; diseases named: "
               f"{', '.join(result.concepts) or 'none found'}")  # fmt: skip
    for trial in result.trials:
        click.echo(f"\n{trial.rank:>2}. {trial.nct_id}  {trial.score:+.3f}  {trial.title}")
        verdicts = {"age": (trial.age_ok, result.note.age), "sex": (trial.sex_ok, result.note.sex)}
        click.echo("    " + ", ".join(f"{name} {_verdict(ok, stated)}" for name, (ok, stated) in verdicts.items()))
        if trial.shared_concepts:
            click.echo(f"    shared conditions: {', '.join(trial.shared_concepts)}")
        for criterion in trial.best_inclusion:
            click.echo(f"    + {criterion.score:.2f} {criterion.text[:150]}")
        for criterion in trial.fired_exclusions:
            click.echo(f"    - excluded by: {criterion[:150]}")


def _collection_options(function):
    options = [
        click.option("--birco", type=PathOption(path_type=Path, dir_okay=False), default=None,
                     help="A BIRCO collection (JSON with query, corpus, qrel), e.g. the SIGIR 2016 test_shared.json."),
        click.option("--trec", type=PathOption(path_type=Path, file_okay=False), default=None,
                     help="A TREC CT folder (queries.jsonl, qrels/test.tsv); needs --index of the trials at hand."),
        click.option("--index", "index_dir", type=PathOption(path_type=Path, file_okay=False), default=None,
                     help="Trial index (default for --birco: the collection's own trial texts)."),
        click.option("--full", is_flag=True,
                     help="Search the whole index (top 100) instead of ranking each patient's judged pool."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


def _rank(birco: Path | None, trec: Path | None, full: bool, spec):
    from medlink.trials.matching.collections import read_birco, read_trec
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


@trials.command("rank")
@_collection_options
@click.option("--run", "run_path", type=PathOption(path_type=Path, dir_okay=False), required=True,
              help="Where to write the TREC run file.")  # fmt: skip
@_matcher_options
def rank(birco: Path | None, trec: Path | None, full: bool, run_path: Path, spec) -> None:
    """Rank each patient's trials of a test collection and write a standard TREC run file."""
    from medlink.trials.matching.metrics import write_run

    runs = _rank(birco, trec, full, spec)
    write_run(runs.system, run_path)
    click.echo(f"{len(runs.system)} patients ranked into {run_path}", err=True)


@trials.command("eval")
@_collection_options
@click.option("--run", "run_path", type=PathOption(path_type=Path, dir_okay=False), default=None,
              help="Also write the system's TREC run file here.")  # fmt: skip
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_matcher_options
def eval_trials(birco: Path | None, trec: Path | None, full: bool, run_path: Path | None, output_format: str,
                spec) -> None:  # fmt: skip
    """NDCG@10, P@10, MRR, R-precision and Recall@100 of the matcher on a test collection, with BM25 from the same
    index beside it (ir_measures). On TREC CT only the judged trials present in the index count."""
    from medlink.trials.matching.metrics import evaluate, write_run

    runs = _rank(birco, trec, full, spec)
    if run_path:
        write_run(runs.system, run_path)
    judged = runs.collection
    table = {"system": evaluate(runs.system, judged.qrels), "bm25": evaluate(runs.bm25, judged.qrels)}
    report = {"collection": judged.name, "protocol": "full" if full else "judged pool", "patients": len(judged.qrels),
              "judgements": sum(len(v) for v in judged.qrels.values()), **table}  # fmt: skip
    if output_format == "json":
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"{judged.name}: {report['patients']} patients, {report['judgements']:,} judgements, "
               f"{report['protocol']}")  # fmt: skip
    click.echo(f"{'':8}" + "".join(f"{name:>16}" for name in table["system"]))
    for system, scores in table.items():
        click.echo(f"{system:8}" + "".join(f"{value:>16.4f}" for value in scores.values()))
