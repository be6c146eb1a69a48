"""Benchmark: a UMLS-size release on one machine — compile, load, exact linking (issue 37).

Writes a synthetic UMLS release whose names are real terminology text (``medlink.benchmark.synthetic_umls``, the
pool read from ``../shared/data/terminologies``), compiles it with ``medlink terminology compile umls:META``, then in
fresh processes loads the compiled folder and answers names with an exact-only linker. Every step reports wall
time and the peak resident memory of its own process.

    python benchmarks/umls_scale.py --concepts 4000000 --rows 12000000 [--work DIR] [--markdown]
    python benchmarks/umls_scale.py --linker-only DIR/compiled-4000000-12000000   # load and link a kept folder again

Targets (2 cores, 24 GB): compile ≤ 15 min with ≤ 8 GB peak, load ≤ 2 s, an exact-only linker ≤ 1.5 GB RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_POOL_SOURCES = (
    ("mesh-desc-tsv", "mesh/mesh_descriptors.tsv.gz"),
    ("mesh-supp-tsv", "mesh/mesh_supplementary.tsv.gz"),
    ("ctd", "medic/CTD_diseases.tsv.gz"),
    ("obo", "obo/hp.obo.gz"),
    ("obo", "obo/doid.obo.gz"),
    ("drugbank", "drugbank/drugbank_vocabulary.csv.gz"),
    ("icd10cm", "icd/icd10cm_tabular_2026.xml.gz"),
)

_LINK = """
import json, random, sys, time


def status_mb(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


def peak_mb():
    return status_mb("VmHWM")


started = time.perf_counter()
from medlink.terminology import load_terminology
terminology = load_terminology(sys.argv[1])
loaded = time.perf_counter()
load_mb = peak_mb()
from medlink.linking.linker import Linker
from medlink.linking.pipeline import parse_sieves
linker = Linker(terminology, parse_sieves("exact", terminology, None, None))
rng = random.Random(0)
concepts = len(terminology)
names = [terminology.concept_preferred_name(f"UMLS:C{rng.randrange(concepts):07d}") for _ in range(1000)]
names += [f"{name} variant" for name in names]  # 1,000 known names and 1,000 that no concept has
ready = time.perf_counter()
results = linker.link_many(names)
linked = time.perf_counter()
print(json.dumps({"load_s": loaded - started, "load_rss_mb": load_mb, "link_s": linked - ready,
                  "found": sum(bool(r.concepts) for r in results), "asked": len(names),
                  "rss_mb": peak_mb(), "anon_mb": status_mb("RssAnon"), "file_mb": status_mb("RssFile"),
                  "concepts": concepts, "names": terminology.name_count}))
"""


def child_peak(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and output of a child process. The parent stays small: a child's ``ru_maxrss``
    starts from the parent's resident size at the fork."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    out, err = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"{' '.join(command[:5])}… failed:\n{err[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, out


def measure_linker(compiled: Path) -> dict:
    """Load and exact linking in fresh processes: the first after the folder was written, the second warm."""
    _, link_mb, out = child_peak([sys.executable, "-c", _LINK, str(compiled)])
    link = json.loads(out)
    _, _, again = child_peak([sys.executable, "-c", _LINK, str(compiled)])  # warm page cache
    warm = json.loads(again)
    return {
        "names": link["names"],
        "load_s_cold": round(link["load_s"], 2),
        "load_s_warm": round(warm["load_s"], 2),
        "load_rss_mb": round(warm["load_rss_mb"]),
        "exact_link_2000_s": round(warm["link_s"], 2),
        "found": warm["found"],
        "exact_linker_rss_mb": round(link_mb),
        "exact_linker_private_mb": round(link["anon_mb"]),
        "exact_linker_file_mb": round(link["file_mb"]),
    }


def build_pool(shared: Path) -> list:
    from medlink.benchmark.synthetic_umls import pool_from_terminologies
    from medlink.terminology import ReadReport, SourceSpec, compile_terminology

    folder = shared / "data/terminologies"
    found = [(fmt, folder / name) for fmt, name in _POOL_SOURCES if (folder / name).exists()]
    if not found:
        raise SystemExit(f"no terminology under {folder}: run with ../shared beside the repository")
    terminologies = (compile_terminology([SourceSpec(path, fmt)], ReadReport()) for fmt, path in found)
    return pool_from_terminologies(terminologies)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    parser.add_argument("--concepts", type=int, default=4_000_000)
    parser.add_argument("--rows", type=int, default=12_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="keep the release and compiled folder here (default: a temp dir)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--write-only", type=Path, metavar="META", help=argparse.SUPPRESS)
    parser.add_argument("--linker-only", type=Path, metavar="COMPILED", help="measure load and linking of this folder")
    args = parser.parse_args()
    from medlink.benchmark.synthetic_umls import write_release

    if args.write_only:  # in a child process, so that the pool's memory is not counted in the steps measured
        summary = write_release(args.write_only, build_pool(args.shared), args.concepts, args.rows, seed=args.seed)
        print(json.dumps(vars(summary)))
        return 0
    if args.linker_only:
        print(json.dumps(measure_linker(args.linker_only)))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="umls-scale-"))
    meta, compiled = work / f"META-{args.concepts}-{args.rows}", work / f"compiled-{args.concepts}-{args.rows}"
    try:
        write_s, _, out = child_peak(
            [
                sys.executable,
                __file__,
                "--shared",
                str(args.shared),
                "--concepts",
                str(args.concepts),
                "--rows",
                str(args.rows),
                "--seed",
                str(args.seed),
                "--write-only",
                str(meta),
            ]
        )
        summary = json.loads(out)
        release_mb = sum(path.stat().st_size for path in meta.iterdir()) / 1e6
        compile_s, compile_mb, _ = child_peak(
            [sys.executable, "-m", "medlink", "terminology", "compile", f"umls:{meta}", "-o", str(compiled)]
        )
        on_disk_mb = sum(path.stat().st_size for path in compiled.iterdir()) / 1e6
        measured = measure_linker(compiled)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    record = {
        "concepts": summary["concepts"],
        "mrconso_rows": summary["mrconso_rows"],
        "mrrel_rows": summary["mrrel_rows"],
        "release_mb": round(release_mb),
        "write_s": round(write_s),
        "compile_s": round(compile_s, 1),
        "compile_peak_mb": round(compile_mb),
        "on_disk_mb": round(on_disk_mb),
        **measured,
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
    }
    if args.markdown:
        print(
            "| concepts | MRCONSO rows | names kept | compile | peak | on disk | load (cold / warm) | exact linker: "
            "2,000 names | exact linker peak RSS | of which private / mapped files |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {record['concepts']:,} | {record['mrconso_rows']:,} | {record['names']:,} | "
            f"{record['compile_s'] / 60:.1f} min | {record['compile_peak_mb'] / 1024:.1f} GB | "
            f"{record['on_disk_mb'] / 1024:.2f} GB | {record['load_s_cold']} s / {record['load_s_warm']} s | "
            f"{record['exact_link_2000_s']} s | {record['exact_linker_rss_mb']:,} MB | "
            f"{record['exact_linker_private_mb']} MB / {record['exact_linker_file_mb']:,} MB |"
        )
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
