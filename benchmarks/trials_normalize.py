"""Benchmark: ``medlink trials normalize`` over the shared ClinicalTrials.gov records with a warm index.

Target (issue 16): >= 100 records/s on 2 cores, < 2 GB RAM. "Warm" means the index is built and cached and the
linkers are loaded before the clock starts; the linkers' result caches start empty, so every distinct string is
linked once inside the timed run. Reading the archive is timed too. Prints JSON, and a projection to the ~550,000
records of ClinicalTrials.gov.

    python benchmarks/trials_normalize.py [--records PATH] [--interventions-index DIR] [--drug-nil 0.66]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
from dataclasses import replace
from pathlib import Path

from medlink.linking.spec import DRUGS, EmbeddedDefault, OverIndex
from medlink.trials.normalization.normalizer import NilThresholds
from medlink.trials.normalization.normalizer_spec import NormalizerSpec
from medlink.trials.normalization.output import read_rows
from medlink.trials.normalization.run import normalize_to_file

SHARED = Path(__file__).resolve().parents[1].parent / "shared/data/trials/ctgov-sample/ctgov_records.tar.gz"
REGISTRY = 550_000


def peak_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=Path, default=SHARED)
    parser.add_argument("--interventions-index", type=Path, default=None)
    parser.add_argument("--drug-nil", type=float, default=None)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    thresholds = NilThresholds() if args.drug_nil is None else replace(NilThresholds(), drug=args.drug_nil)
    interventions = OverIndex(args.interventions_index) if args.interventions_index else EmbeddedDefault(DRUGS)
    spec = NormalizerSpec(EmbeddedDefault(), interventions, thresholds)
    spec.build(progress=False)  # warms the default indexes (built and cached on first use) and the encoder export
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.jsonl"
        summary = normalize_to_file([args.records], output, spec, workers=args.workers)
        seconds = summary.seconds  # from the linkers being ready (loading them from the cache is not counted)
        rows = read_rows(output)
    strings = sum(len(r["conditions"]) + len(r["interventions"]) for r in rows)
    rate = summary.written / seconds
    print(
        json.dumps(
            {
                "records": summary.written,
                "strings": strings,
                "seconds": round(seconds, 2),
                "records_per_s": round(rate, 1),
                "peak_rss_mb": round(peak_mb()),
                "workers": args.workers,
                "interventions_index": str(args.interventions_index) if args.interventions_index else "default",
                "projected_hours_for_550k": round(REGISTRY / rate / 3600, 2),
                "machine": platform.processor() or platform.machine(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
