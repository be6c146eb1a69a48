"""Benchmark: what the calibrated nil threshold costs and catches, on every row of a benchmark suite (issue 21).

    .venv/bin/python benchmarks/nil_threshold.py benchmarks/default-model.toml [--encoders none,medlink] [--data DIR]

For each dataset with a training corpus and each system whose encoder is one of ``--encoders`` (``none``: the
systems without one), the
threshold is calibrated as ``medlink index build --train`` does it: strategy ``budget`` on the training mentions
whose gold the terminology has, linked over names only (the system's sieves without ``exact``), plus the
calibration half of medlink's non-medical negatives. Then the test corpus is linked with and without it.

Columns: Acc@1 on in-KB mentions without / with the threshold (target: at most 0.2 points lost), nil precision and
recall on the test corpus's gold-nil mentions (BC5CDR's -1), the share of the held-out negatives declared nil, and
nil precision over the test mentions and held-out negatives together (target ≥ 0.9). Prints Markdown.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from medlink.benchmark.config import SystemSpec, load_config
from medlink.benchmark.runner import Prepared, prepare, system_linker
from medlink.encoders import load_encoder
from medlink.encoders.base import Encoder
from medlink.evaluation.negatives import non_medical_negatives
from medlink.evaluation.nil_calibration import calibrate_with_negatives, in_terminology
from medlink.evaluation.runner import Evaluation, evaluate
from medlink.evaluation.scoring import is_correct
from medlink.linking.mentions.term_model import TermModel


def calibration_system(system: SystemSpec) -> SystemSpec | None:
    """The system searching names only and without exact match, whose scores a threshold acts on."""
    sieves = ",".join(p for p in system.sieves.split(",") if p.strip().lower() != "exact")
    return replace(system, sieves=sieves, mentions=False) if sieves else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--encoders", default="none,medlink", help="Comma-separated encoders whose systems to run.")
    parser.add_argument("--skip-datasets", default="", help="Comma-separated dataset names to leave out.")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--work", type=Path, default=Path("build/benchmark"))
    args = parser.parse_args()
    config = load_config(args.config)
    wanted = {e.strip() for e in args.encoders.split(",")}
    systems = [s for s in config.systems if s.encoder in wanted or (s.encoder is None and "none" in wanted)]
    encoders = {name: load_encoder(name) for name in wanted if any(s.encoder == name for s in systems)}
    log = functools.partial(print, file=sys.stderr)
    print(
        "| dataset | system | threshold | Acc@1 in-KB without | with | change (points) | gold-nil P / R |"
        " negatives nil | nil precision, mixed |"
    )
    print("|---|---|---:|---:|---:|---:|---|---:|---:|")
    skipped = {name.strip() for name in args.skip_datasets.split(",") if name.strip()}
    for dataset in (d for d in config.datasets if d.name not in skipped):
        for fold in dataset.folds:
            prepared = prepare(dataset.for_fold(fold, args.data.resolve()), fold)
            name = f"{dataset.name}{f' fold {fold}' if fold else ''}"
            held_out = [n.text for n in non_medical_negatives(prepared.terminology, "held-out")]
            for system in systems:
                row = measure(system, prepared, encoders, args.work, log, held_out)
                print(f"| {name} | {system.name} | {row} |", flush=True)


def measure(
    system: SystemSpec,
    prepared: Prepared,
    encoders: dict[str, Encoder],
    work: Path,
    log: Callable[[str], None],
    held_out: list[str],
) -> str:
    """One row: the threshold, in-KB Acc@1 without and with it, and what it declares nil."""
    encoder = encoders.get(system.encoder) if system.encoder else None
    calibrating = calibration_system(system)
    if prepared.train is None or calibrating is None:
        why = "no training data" if prepared.train is None else "exact match alone has no score to threshold"
        return f"none ({why}) | | | | | |"
    started = time.perf_counter()
    names_only = system_linker(calibrating, prepared, encoder, work, log)
    calibration = calibrate_with_negatives(names_only, in_terminology(prepared.train, names_only), encoder=encoder)
    threshold = calibration.threshold
    if threshold is None:
        return "none (no correct dense decision in training) | | | | | |"
    without = evaluate(system_linker(system, prepared, encoder, work, log), prepared.corpus, ks=(1,))
    term_model = TermModel.from_dict(calibration.term_model) if calibration.term_model else None
    thresholded = system_linker(system, prepared, encoder, work, log, threshold, term_model)
    with_nil = evaluate(thresholded, prepared.corpus, ks=(1,))
    in_kb = [i for i, gold in enumerate(without.golds) if not gold.is_nil]

    def accuracy(evaluation: Evaluation) -> float:
        return 100 * sum(is_correct(evaluation.golds[i], evaluation.predictions[i]) for i in in_kb) / len(in_kb)

    nil = with_nil.scores.nil
    negatives_nil = sum(r.stage.value == "nil" for r in thresholded.link_many(held_out))
    predicted_nil = nil.predicted_nil + negatives_nil
    mixed = (nil.true_nil + negatives_nil) / predicted_nil if predicted_nil else 0.0
    gold_nil = f"{nil.precision:.2f} / {nil.recall:.2f} (n={nil.gold_nil})" if nil.gold_nil else "no gold nil"
    before, after = accuracy(without), accuracy(with_nil)
    print(f"<!-- {system.name}: {time.perf_counter() - started:.0f} s -->", flush=True)
    shown = f"{threshold:.3f}{' + term model' if calibration.term_model else ''}"
    return (
        f"{shown} | {before:.2f} | {after:.2f} | {after - before:+.2f} | {gold_nil} | "
        f"{negatives_nil / len(held_out):.2f} | {mixed:.2f}"
    )


if __name__ == "__main__":
    main()
