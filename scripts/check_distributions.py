"""Build every distribution of this repository, check it as PyPI would, and smoke-test the wheels in a fresh
virtualenv that cannot see the source tree (what CI runs after the tests; issue 43).

    python scripts/check_distributions.py               # build into dist/, check, install, smoke-test
    python scripts/check_distributions.py --build-only  # build and check sizes and metadata only

The distributions: ``medlink`` (code, embedded MeSH, the default and fast encoders), ``medlink-default-index`` (the
embedded default prebuilt, which ``medlink`` depends on), ``medlink-trial-matcher``
(``medlink[trials]``), ``medlink-zh`` (``medlink[zh]``) and ``medlink-span-tagger`` (``medlink[tagger]``), each an
sdist and a wheel. Checks, in order:
1. every file ≤ 100 MB (PyPI's limit), the core wheel ≤ 80 MB; ``twine check --strict`` clean; each wheel's metadata
   names its licence and carries a NOTICE with the attribution of what it ships;
2. only the core wheel and the prebuilt default installed: the first ``medlink link "myocardial infarctoin"`` answers
   by dense retrieval without encoding anything (its wall time printed), ``medlink link "heart attack"`` gives
   MESH:D009203, ``medlink trials normalize``
   links a record's conditions, ``medlink models verify`` passes, and ``medlink trials index`` refuses, naming
   ``medlink[trials]``;
3. the trial-matcher wheel added: ``medlink trials index`` and ``medlink trials match`` rank the test records;
4. the Chinese wheel added: a Chinese diagnosis links to its ICD code with ``--encoder medlink-zh``;
5. the span-tagger wheel added: ``medlink annotate`` finds a mention with the tagger, which ``medlink models verify``
   checks too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = {
    "medlink": ROOT,
    "medlink_default_index": ROOT / "packages" / "medlink-default-index",
    "medlink_trial_matcher": ROOT / "packages" / "medlink-trial-matcher",
    "medlink_zh": ROOT / "packages" / "medlink-zh",
    "medlink_span_tagger": ROOT / "packages" / "medlink-span-tagger",
}
PYPI_LIMIT = 100 * 1000 * 1000  # PyPI refuses larger files unless the project is granted more
CORE_LIMIT = 80 * 1000 * 1000
FIXTURES = ROOT / "tests" / "fixtures"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the distributions are written")
    parser.add_argument("--build-only", action="store_true", help="build and check; no virtualenv, no smoke test")
    args = parser.parse_args()
    wheels = build(args.dist)
    check_files(args.dist, wheels)
    if not args.build_only:
        with tempfile.TemporaryDirectory(prefix="medlink-wheels-") as scratch:
            smoke_test(wheels, Path(scratch))
    print("distributions: all checks passed")


def build(dist: Path) -> dict[str, Path]:
    if dist.exists():
        shutil.rmtree(dist)
    for name, project in PROJECTS.items():
        run([sys.executable, "-m", "build", "--outdir", str(dist), str(project)], quiet=True)
        print(f"built {name}")
    return {name: next(dist.glob(f"{name}-*.whl")) for name in PROJECTS}


def check_files(dist: Path, wheels: dict[str, Path]) -> None:
    for path in sorted(dist.iterdir()):
        size = path.stat().st_size
        limit = CORE_LIMIT if path == wheels["medlink"] else PYPI_LIMIT
        print(f"{path.name}: {size / 1e6:.1f} MB (limit {limit / 1e6:.0f} MB)")
        expect(size <= limit, f"{path.name} is {size / 1e6:.1f} MB, over {limit / 1e6:.0f} MB")
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))], quiet=True)
    for name, wheel in wheels.items():
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            info = next(n for n in names if n.endswith(".dist-info/METADATA"))
            metadata = archive.read(info).decode()
            expect("License-Expression: Apache-2.0" in metadata, f"{wheel.name}: no licence in its metadata")
            notice = [n for n in names if n.endswith("licenses/NOTICE")]
            expect(bool(notice), f"{wheel.name}: no NOTICE (attribution of the data and weights it ships)")
            expect(
                b"National Library of Medicine" in archive.read(notice[0]) or name == "medlink_zh",
                f"{wheel.name}: its NOTICE does not attribute NLM's data",
            )
        shipped = {n for n in names if "/" in n and not n.split("/", 1)[0].endswith((".dist-info", ".data"))}
        missing = [path for path in package_files(name) if path not in shipped]
        expect(not missing, f"{wheel.name} lacks files of its package (package-data in pyproject.toml): {missing}")
    print("twine check, licences, notices and every package file in its wheel: passed")


def package_files(name: str) -> list[str]:
    """The files under the source package ``name`` that its wheel must carry, as wheel paths (what git tracks:
    caches and build leftovers are not the package)."""
    source = PROJECTS[name] / "src"
    listed = subprocess.run(["git", "ls-files", "-z", name], cwd=source, capture_output=True, text=True, check=True)
    return sorted(path for path in listed.stdout.split("\0") if path and not path.endswith(".pyc"))


def smoke_test(wheels: dict[str, Path], scratch: Path) -> None:
    venv = scratch / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    pip, medlink = venv / "bin" / "pip", venv / "bin" / "medlink"
    # The source tree must not be importable: run from scratch, with nothing of this shell's Python path.
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["MEDLINK_CACHE"] = str(scratch / "cache")

    def medlink_says(*arguments: str, ok: bool = True) -> str:
        done = subprocess.run([str(medlink), *arguments], cwd=scratch, env=env, capture_output=True, text=True)
        expect(
            (done.returncode == 0) == ok,
            f"medlink {' '.join(arguments)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}",
        )
        return done.stdout + done.stderr

    started = time.monotonic()
    # what `pip install medlink` brings: the core and the prebuilt default it depends on
    run([str(pip), "install", str(wheels["medlink"]), str(wheels["medlink_default_index"])], cwd=scratch, quiet=True)
    print(f"core wheel installed in a fresh virtualenv ({time.monotonic() - started:.0f} s)")
    located = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import medlink; print(medlink.__file__)"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    expect(str(venv) in located, f"medlink was imported from {located.strip()}, not from the fresh virtualenv")

    first = time.monotonic()
    linked = medlink_says("link", "myocardial infarctoin")  # a dense decision, on an empty cache
    expect(
        "myocardial infarctoin\tMESH:D009203" in linked and "\tdense\t" in linked and "encoding" not in linked,
        f"core wheel: the first dense link did not answer from the prebuilt default:\n{linked}",
    )
    print(f"first `medlink link` of a misspelled term on an empty cache: {time.monotonic() - first:.1f} s wall")
    linked = medlink_says("link", "heart attack")
    expect("heart attack\tMESH:D009203" in linked, f"core wheel: 'heart attack' did not link to D009203:\n{linked}")
    normalized = scratch / "normalized.jsonl"
    medlink_says("trials", "normalize", "--exact-only", str(FIXTURES / "trials"), "-o", str(normalized))
    expect("MESH:" in normalized.read_text(encoding="utf-8"), "core wheel: trials normalize linked no condition")
    medlink_says("models", "verify")
    refused = medlink_says("trials", "index", str(FIXTURES / "trials"), "-o", str(scratch / "no-index"), ok=False)
    expect("medlink[trials]" in refused, f"without the trial matcher, trials index did not name the extra:\n{refused}")
    print(
        f"core wheel alone: link, trials normalize, models verify, and the missing extra named: passed"
        f" ({time.monotonic() - started:.0f} s)"
    )

    run([str(pip), "install", str(wheels["medlink_trial_matcher"])], cwd=scratch, quiet=True)
    index = scratch / "trial-index"
    medlink_says("trials", "index", str(FIXTURES / "trials"), "-o", str(index))
    matched = medlink_says(
        "trials",
        "match",
        "--index",
        str(index),
        "--format",
        "json",
        "A 62-year-old man with type 2 diabetes mellitus on metformin",
    )
    expect("NCT9000000" in matched, f"trials wheel: trials match ranked no trial:\n{matched}")
    print(f"with medlink-trial-matcher: trials index and trials match: passed ({time.monotonic() - started:.0f} s)")

    run([str(pip), "install", str(wheels["medlink_zh"])], cwd=scratch, quiet=True)
    terms, zh_index = scratch / "icd-tiny", scratch / "icd-tiny-index"
    medlink_says(
        "terminology", "compile", f"tsv:{FIXTURES / 'chip_kb_tiny.tsv'}", "--namespace", "ICD", "-o", str(terms)
    )
    medlink_says("index", "build", "--terminology", str(terms), "--encoder", "medlink-zh", "-o", str(zh_index))
    chinese = medlink_says("link", "--index", str(zh_index), "--nil-threshold", "0", "卵巢恶性肿瘤晚期")
    expect("ICD:C56" in chinese, f"zh wheel: the Chinese diagnosis did not link to C56:\n{chinese}")
    print(f"with medlink-zh: a Chinese diagnosis linked with medlink-zh: passed ({time.monotonic() - started:.0f} s)")

    run([str(pip), "install", str(wheels["medlink_span_tagger"])], cwd=scratch, quiet=True)
    annotated = medlink_says("annotate", "--exact-only", "Cisplatin nephrotoxicity and heart failure were seen.")
    expect("span found by the tagger" in annotated, f"tagger wheel: annotate used no tagger span:\n{annotated}")
    medlink_says("models", "verify")
    print(
        f"with medlink-span-tagger: annotate with the tagger, models verify: passed "
        f"({time.monotonic() - started:.0f} s)"
    )


def run(command: list[str], cwd: Path = ROOT, quiet: bool = False) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=quiet, text=True)
    expect(
        done.returncode == 0,
        f"{' '.join(command)} failed ({done.returncode})"
        + (f":\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}" if quiet else ""),
    )


def expect(condition: bool, problem: str) -> None:
    if not condition:
        sys.exit(f"check_distributions: {problem}")


if __name__ == "__main__":
    main()
