"""Running one system on one dataset fold in a process of its own (``peer_process.py``): the dataset's
terminology and mentions (or documents) written where that process reads them, its answer read back as
predictions (or annotations), and its build, start-up and run times and peak resident memory kept beside them.

A peer that keeps a database or index on disk (QuickUMLS, scispaCy, MedCAT) builds it first in a process of its
own, once per terminology: the run after it loads it, as a user's second run would, and is measured so."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlink.benchmark.peers.exports import write_terms, write_umls
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.scoring import Prediction
from medlink.terminology import Terminology

PROCESS = Path(__file__).with_name("peer_process.py")
PEERS_PYTHON = "MEDLINK_PEERS_PYTHON"  # the Python of a virtualenv for peers that cannot share medlink's
APART = frozenset({"scispacy"})  # its nmslib pins numpy below 2; the other peers install beside medlink
BUILDERS = frozenset({"quickumls", "scispacy", "medcat"})  # keep a database or index on disk, built once
Span = tuple[int, int, str]  # start, end, concept
REQUEST_KEYS = frozenset({"system", "terminology", "umls", "texts", "work", "mentions", "documents", "task", "answer"})


@dataclass(frozen=True)
class IsolatedRun:
    predictions: tuple[Prediction, ...]
    startup_seconds: float
    link_seconds: float  # linking the mentions, or annotating the documents
    peak_rss_mb: float
    unavailable: str | None = None  # why the system could not run here (then no predictions)
    version: str | None = None  # of the package that ran, where installed
    build_seconds: float | None = None  # building the peer's own database or index, once (by this run or before)
    annotations: tuple[tuple[Span, ...], ...] = ()  # per document, for the annotate task


@dataclass(frozen=True)
class PeerInput:
    """What a system is given besides the terminology: names to add to concepts (training mentions as synonyms)
    and texts to learn from without labels (MedCAT's vocabulary and context vectors)."""

    extra_names: Mapping[str, Sequence[str]] | None = None
    texts: Sequence[str] = ()
    task: str = "link"  # or "annotate" (the corpus's documents)


def run_isolated(
    system: str,
    terminology: Terminology,
    corpus: Corpus,
    work: Path,
    python: str | None = None,
    timeout_minutes: float | None = None,
    given: PeerInput = PeerInput(),
    **options: Any,
) -> IsolatedRun:
    """``system`` (gilda, quickumls, scispacy, medcat or medlink) over ``corpus`` with ``terminology``;
    ``options`` go into the request (medlink's ``terminology_dir``, ``index``, ``encoder``, ``sieves``, its
    annotation setup; a ``threshold``)."""
    clash = REQUEST_KEYS & options.keys()
    if clash:
        raise ValueError(f"options may not set the request's own keys: {', '.join(sorted(clash))}")
    extra = {concept: list(names) for concept, names in sorted((given.extra_names or {}).items())}
    folder = work / "peers" / _export_key(terminology, extra)
    terms = _exported(folder / "terms.jsonl", lambda path: write_terms(terminology, path, extra))
    umls = folder / "umls"
    if system == "quickumls":
        _exported(umls / "MRCONSO.RRF", lambda partial: write_umls(terminology, partial, extra))
    texts = _exported(folder / f"texts-{digest(list(given.texts))}.jsonl", lambda path: _lines(path, given.texts))
    request = {
        "system": system,
        "terminology": str(terms),
        "umls": str(umls),
        "texts": str(texts),
        "work": str(folder / (system if not given.texts else f"{system}-{texts.stem}")),
        **options,
    }
    # the Python given; else the peers' virtualenv's for a peer that needs one; else this one
    interpreter = python or (os.environ.get(PEERS_PYTHON, sys.executable) if system in APART else sys.executable)
    with tempfile.TemporaryDirectory(dir=folder, prefix="run-") as run:  # runs side by side never meet
        inputs = Path(run) / "inputs.jsonl"
        with inputs.open("w", encoding="utf-8") as out:
            rows = (
                [{"id": i, "text": text} for i, text in corpus.documents]
                if given.task == "annotate"
                else [{"text": m.text, "document": m.document, "start": m.start, "end": m.end} for m in corpus]
            )
            out.writelines(json.dumps(row) + "\n" for row in rows)
        request |= {"mentions": str(inputs), "documents": str(inputs)}
        built = {}
        if system in BUILDERS:
            built = _run(interpreter, {**request, "task": "build"}, Path(run), timeout_minutes)
        if "unavailable" in built:
            return IsolatedRun((), 0.0, 0.0, built["peak_rss_mb"], built["unavailable"], built.get("version"))
        found = _run(interpreter, {**request, "task": given.task}, Path(run), timeout_minutes)
    if "unavailable" in found:
        return IsolatedRun((), 0.0, 0.0, found["peak_rss_mb"], found["unavailable"], found.get("version"))
    return IsolatedRun(
        tuple(_prediction(p) for p in found.get("predictions", ())),
        found["startup_seconds"],
        found["link_seconds"],
        found["peak_rss_mb"],
        None,
        found.get("version"),
        built.get("build_seconds"),
        tuple(tuple((int(s), int(e), str(c)) for s, e, c in spans) for spans in found.get("annotations", ())),
    )


def _run(interpreter: str, request: dict[str, Any], run: Path, timeout_minutes: float | None) -> dict[str, Any]:
    """One task in a process of its own: its answer, with ``unavailable`` saying why where it has none."""
    system, task = request["system"], request["task"]
    answer, request_path = run / f"answer-{task}.json", run / f"request-{task}.json"
    request_path.write_text(json.dumps({**request, "answer": str(answer)}), encoding="utf-8")
    answer.unlink(missing_ok=True)
    child = subprocess.Popen([interpreter, str(PROCESS), str(request_path)])
    finished, status, usage = _wait(child, timeout_minutes)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: Popen must not wait for it again
    peak = usage.ru_maxrss / 1024  # kilobytes on Linux; counts the parent's pages until exec: the child's own
    # figure (VmHWM) replaces it when the child could write its answer
    if not finished:
        doing = "building its own index" if task == "build" else "its start-up or its run"
        return {
            "peak_rss_mb": peak,
            "unavailable": f"did not finish within {timeout_minutes:g} minutes on this machine (stopped during "
            f"{doing})",
        }
    if not answer.exists():
        return {"peak_rss_mb": peak, "unavailable": f"the {system} process exited with {child.returncode}"}
    found = json.loads(answer.read_text(encoding="utf-8"))
    found["peak_rss_mb"] = found.get("peak_rss_mb") or peak
    return found


def _wait(child: subprocess.Popen, minutes: float | None) -> tuple[bool, int, Any]:
    """Wait for ``child`` (at most ``minutes``, then kill it): whether it finished, its status and its usage."""
    deadline = None if minutes is None else time.monotonic() + 60 * minutes
    while True:
        pid, status, usage = os.wait4(child.pid, 0 if deadline is None else os.WNOHANG)
        if pid:
            return True, status, usage
        if time.monotonic() > deadline:  # type: ignore[operator]
            child.kill()
            _, status, usage = os.wait4(child.pid, 0)
            return False, status, usage
        time.sleep(0.5)


def _prediction(data: dict[str, Any]) -> Prediction:
    return Prediction(
        concepts=tuple(data["concepts"]),
        ranked=tuple(data["ranked"]),
        parts=tuple(_prediction(part) for part in data.get("parts", ())),
    )


def _export_key(terminology: Terminology, extra: dict[str, list[str]]) -> str:
    """The terminology's fingerprint, and the added names' digest where there are any: one export per pair."""
    return terminology.fingerprint() + (f"-{digest(extra)}" if extra else "")


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]


def _lines(path: Path, texts: Sequence[str]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps({"text": text}) + "\n" for text in texts)


def _exported(path: Path, write: Any) -> Path:
    """``path``, written once, through a temporary name of this run's own: a killed run leaves none half-made, and
    runs side by side never write into each other's file."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        os.close(handle)
        write(Path(name))
        Path(name).replace(path)
    return path
