"""Test helpers: paths to fixtures and to the real data in ../shared (tests skip cleanly without it)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TRIALS = FIXTURES / "trials"
XML_RECORDS = [TRIALS / "NCT90000001.xml", TRIALS / "NCT90000002.xml"]
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or a skip when this checkout has no shared data beside it."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


def write_archive(path: Path, members: dict[str, bytes]) -> Path:
    """A .zip (by its suffix) or .tar.gz archive of ``members`` (name → bytes) at ``path``."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serving(app: object) -> Iterator[str]:
    """A real uvicorn server for ``app`` on 127.0.0.1 in a thread, for a fixture to ``yield from``: its URL."""
    import threading
    import time

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(timeout=30)


def two_trial_matcher(linker: object, folder: Path) -> object:
    """A trial matcher over two hand-written trials (diabetes in adults, asthma in children), indexed in ``folder``
    with the packaged MiniLM on both sides and ``linker``'s terminology for concepts."""
    from medlink.linking import Linker
    from medlink.linking.mentions.scanner import ConceptScanner
    from medlink.trials import TrialRecord
    from medlink.trials.matching.encoders import load_trial_encoders
    from medlink.trials.matching.index_build import index_records
    from medlink.trials.matching.matcher import TrialMatcher
    from medlink.trials.matching.trial_index import TrialIndex
    from medlink.trials.normalization.normalizer import TrialNormalizer

    assert isinstance(linker, Linker)
    exact = Linker(linker.terminology)
    records = [
        TrialRecord(
            "NCT1",
            title="Metformin in type 2 diabetes",
            conditions=("Type 2 Diabetes",),
            inclusion=("Type 2 diabetes",),
            exclusion=("Pregnancy",),
            minimum_age=18.0,
        ),
        TrialRecord("NCT2", title="Asthma in children", conditions=("Asthma",), maximum_age=12.0),
    ]
    encoders, scanner = load_trial_encoders("minilm"), ConceptScanner(linker.terminology)
    index_records(records, folder, encoders, TrialNormalizer(exact, exact), scanner)
    return TrialMatcher(TrialIndex.load(folder), encoders, scanner)


def dense_linker(terminology, index, encoder, sieves=None, config=None, term_model=None, reranker_dir=None):  # type: ignore[no-untyped-def]
    """A linker over an index, terminology and encoder held in memory (``Linker.from_parts``), as tests make them."""
    from medlink.linking import Linker
    from medlink.linking.pipeline import DEFAULT_SIEVES, dense_parts

    parts = dense_parts(terminology, index, encoder, sieves or DEFAULT_SIEVES, config, term_model, reranker_dir)
    return Linker.from_parts(parts)


def ranker_linker(terminology, ranker_dir, config=None):  # type: ignore[no-untyped-def]
    """A linker whose one sieve is a set ranker, over a terminology held in memory."""
    from medlink.linking import Linker
    from medlink.linking.pipeline import ranker_parts

    return Linker.from_parts(ranker_parts(terminology, ranker_dir, config))
