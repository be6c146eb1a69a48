"""Running one system on one dataset fold in a process of its own (``peer_process.py``): the dataset's
terminology and mentions written where that process reads them, its answer read back as predictions, and its
start-up time, linking time and peak resident memory (the child's own, from ``wait4``) kept beside them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.scoring import Prediction
from medlink.terminology import Terminology

PROCESS = Path(__file__).with_name("peer_process.py")
PEERS_PYTHON = "MEDLINK_PEERS_PYTHON"  # a virtualenv with the peers, when they cannot share medlink's
SEMANTIC_TYPE = "T047"  # the one type every exported concept gets: QuickUMLS filters on types, medlink has none


@dataclass(frozen=True)
class IsolatedRun:
    predictions: tuple[Prediction, ...]
    startup_seconds: float
    link_seconds: float
    peak_rss_mb: float
    unavailable: str | None = None  # why the system could not run here (then no predictions)
    version: str | None = None  # of the package that ran, where installed


def run_isolated(
    system: str,
    terminology: Terminology,
    corpus: Corpus,
    work: Path,
    python: str | None = None,
    timeout_minutes: float | None = None,
    **options: Any,
) -> IsolatedRun:
    """``system`` (gilda, quickumls, scispacy or medlink) over ``corpus`` with ``terminology``; ``options`` go
    into the request (medlink's ``terminology_dir``, ``index``, ``encoder``, ``sieves``; a ``threshold``)."""
    folder = work / "peers" / terminology.fingerprint()
    terms = _exported(folder / "terms.jsonl", lambda path: _write_terms(terminology, path))
    umls = folder / "umls"
    if system == "quickumls":
        _exported(umls / "MRCONSO.RRF", lambda _: _write_umls(terminology, umls))
    mentions = work / "peers" / "mentions.jsonl"
    mentions.parent.mkdir(parents=True, exist_ok=True)
    with mentions.open("w", encoding="utf-8") as out:
        for mention in corpus:
            out.write(json.dumps({"text": mention.text, "document": mention.document}) + "\n")
    answer = work / "peers" / f"answer-{system}.json"
    request = {
        "system": system,
        "terminology": str(terms),
        "umls": str(umls),
        "mentions": str(mentions),
        "answer": str(answer),
        "work": str(folder / system),
        **options,
    }
    request_path = work / "peers" / f"request-{system}.json"
    request_path.write_text(json.dumps(request), encoding="utf-8")
    answer.unlink(missing_ok=True)
    # medlink runs under this Python; a peer under the one given, or the peers' virtualenv's
    interpreter = python or (sys.executable if system == "medlink" else os.environ.get(PEERS_PYTHON, sys.executable))
    child = subprocess.Popen([interpreter, str(PROCESS), str(request_path)])
    finished, status, usage = _wait(child, timeout_minutes)
    peak = usage.ru_maxrss / 1024  # kilobytes on Linux; counts the parent's pages until exec: the child's own
    # figure (VmHWM) replaces it when the child could write its answer
    if not finished:
        return IsolatedRun(
            (),
            0.0,
            0.0,
            peak,
            f"did not finish within {timeout_minutes:g} minutes on this machine "
            f"(stopped; its start-up, building its own index, was still running)",
        )
    child.returncode = os.waitstatus_to_exitcode(status)
    if not answer.exists():
        return IsolatedRun((), 0.0, 0.0, peak, f"the {system} process exited with {child.returncode}")
    found = json.loads(answer.read_text(encoding="utf-8"))
    peak = found.get("peak_rss_mb") or peak
    if "unavailable" in found:
        return IsolatedRun((), 0.0, 0.0, peak, found["unavailable"], found.get("version"))
    predictions = tuple(_prediction(p) for p in found["predictions"])
    return IsolatedRun(predictions, found["startup_seconds"], found["link_seconds"], peak, None, found.get("version"))


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


def _exported(path: Path, write: Any) -> Path:
    """``path``, written once per terminology (through a temporary name, so a killed run leaves none half-made)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        write(partial)
        partial.replace(path)
    return path


def _write_terms(terminology: Terminology, path: Path) -> None:
    """One line per concept: its id and names, the preferred name first."""
    with path.open("w", encoding="utf-8") as out:
        for concept in terminology:
            names = list(dict.fromkeys([concept.preferred_name, *(name.text for name in concept.names)]))
            out.write(json.dumps({"id": concept.id, "names": names}, ensure_ascii=False) + "\n")


def _write_umls(terminology: Terminology, folder: Path) -> None:
    """The terminology as a UMLS release folder (MRCONSO, MRSTY) with made-up CUIs, and ``ids.json`` mapping them
    back: what QuickUMLS installs from."""
    cuis = {}
    with (folder / ".MRSTY.RRF").open("w", encoding="utf-8") as types:
        conso = (folder / ".MRCONSO.RRF.rows").open("w", encoding="utf-8")
        for number, concept in enumerate(terminology, start=1):
            cui = f"C{number:07d}"
            cuis[cui] = concept.id
            types.write(f"{cui}|{SEMANTIC_TYPE}|A1.2|Disease or Syndrome|AT{number}|256|\n")
            names = list(dict.fromkeys([concept.preferred_name, *(name.text for name in concept.names)]))
            for position, name in enumerate(names):
                text = name.replace("|", " ")
                preferred = "Y" if position == 0 else "N"
                conso.write(
                    f"{cui}|ENG|P|L{number}|PF|S{number}_{position}|{preferred}|A{number}_{position}||||"
                    f"MEDLINK|{'PT' if position == 0 else 'SY'}|{concept.id}|{text}|0|N|256|\n"
                )
        conso.close()
    (folder / ".MRSTY.RRF").replace(folder / "MRSTY.RRF")
    (folder / "ids.json").write_text(json.dumps(sorted(cuis.items())), encoding="utf-8")
    (folder / ".MRCONSO.RRF.rows").replace(folder / ".MRCONSO.RRF.partial")
