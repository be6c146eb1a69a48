"""One system linking a dataset's mentions, or annotating its documents, in a process of its own:
``python peer_process.py REQUEST.json``.

Imports nothing of medlink unless the system is medlink itself, so it runs under the Python of a virtualenv that
holds only a peer. The system is the module ``{system}_peer`` beside this file: its ``build`` makes what the peer
keeps on disk (its database or index: once, in a run of its own, into a fresh folder that is renamed into place
when complete, so that a killed build or a run beside it never leaves half of one), its ``linker`` or
``annotator`` loads the peer and returns what answers. The request names the task, the files (the terminology as
JSON Lines, a UMLS-style folder for QuickUMLS, the mentions or documents, texts to learn from) and where to write
the answer: per mention the concepts claimed (``[]``: nil) and the candidates ranked, or per document its spans
``[start, end, concept]``; then the build, start-up and run times. A peer that cannot run writes why instead.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

DISTRIBUTIONS = {
    "gilda": "gilda",
    "quickumls": "medspacy-quickumls",
    "scispacy": "scispacy",
    "medcat": "medcat",
    "medlink": "medlink",
}
BUILD_TIME = "build-time.json"  # kept inside what was built, for the runs that load it


def lines_of(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def version_of(system: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTIONS[system])
    except PackageNotFoundError:
        return None


def run(request: dict[str, Any], answer: dict[str, Any]) -> None:
    system = importlib.import_module(f"{request['system']}_peer")
    # What a peer built is kept per version of the package and of its recipe here (its module's BUILD): an
    # upgrade, or a changed recipe, builds anew instead of loading what the old one made.
    recipe = f"{version_of(request['system'])}-build{getattr(system, 'BUILD', 0)}"
    built = Path(request["work"]) / recipe / "built"
    request = {**request, "built": str(built)}
    if request["task"] == "build":  # sent only for the peers that keep something (isolated.BUILDERS)
        if not built.exists():  # the terminology is read only to build: 784k concepts take seconds
            build(system, request, lines_of(request["terminology"]), built)
        timed = built / BUILD_TIME  # a build whose time was not kept (an older medlink's) is still complete
        if timed.exists():
            answer["build_seconds"] = json.loads(timed.read_text(encoding="utf-8"))["seconds"]
        return
    concepts = lines_of(request["terminology"]) if request["system"] != "medlink" else []
    started = time.perf_counter()
    linking = request["task"] == "link"
    answering = system.linker(request, concepts) if linking else system.annotator(request, concepts)
    answer["startup_seconds"] = time.perf_counter() - started
    inputs = lines_of(request["mentions"] if linking else request["documents"])
    started = time.perf_counter()
    answer["predictions" if linking else "annotations"] = answering(inputs)
    answer["link_seconds"] = time.perf_counter() - started


def build(system: Any, request: dict[str, Any], concepts: list[dict[str, Any]], built: Path) -> None:
    """``system.build`` into a fresh folder, renamed to ``built`` once complete (a run beside this one that
    finished first keeps its own)."""
    built.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=built.parent, prefix=".building-"))
    started = time.perf_counter()
    system.build(request, concepts, partial)
    (partial / BUILD_TIME).write_text(json.dumps({"seconds": time.perf_counter() - started}), encoding="utf-8")
    try:
        partial.rename(built)
    except OSError:
        shutil.rmtree(partial)


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    answer: dict[str, Any] = {"system": request["system"], "version": version_of(request["system"])}
    try:
        run(request, answer)
    except Exception as error:  # a peer that cannot run here: the report says why in its row
        answer["unavailable"] = f"{type(error).__name__}: {error}".strip()[:500]
        answer["traceback"] = traceback.format_exc()[-4000:]
    answer["peak_rss_mb"] = peak_rss_mb()
    Path(request["answer"]).write_text(json.dumps(answer), encoding="utf-8")


def peak_rss_mb() -> float | None:
    """This process's own peak resident memory (``VmHWM``: reset by exec, unlike ``ru_maxrss``, which a child
    inherits from the parent that forked it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    main()
