"""The peers side by side: each row in a process of its own (Gilda for real; a peer that is not installed is
reported with why, never dropped), medlink's row isolated too, all scored by the same strict scorer."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_benchmark import TERMS, TESTS, TOY_DATASET, toy_data

from medlink.benchmark.config import load_config
from medlink.benchmark.report import PACKAGES
from medlink.errors import MedlinkError

CONFIG = (
    """
ks = [1, 5]
compare = [["medlink isolated", "Gilda"], ["medlink isolated", "scispaCy linker"]]
"""
    + TOY_DATASET.replace("%", "%%")
    + """
[[systems]]
name = "medlink isolated"
encoder = "minilm"
sieves = "exact,O-T"
isolated = true

[[systems]]
name = "Gilda"
system = "gilda"

[[systems]]
name = "scispaCy linker"
system = "scispacy"
python = "%s"
"""
)


def test_peers_run_in_their_own_processes_and_a_missing_one_says_why(tmp_path: Path) -> None:
    pytest.importorskip("gilda", reason="the peer test needs the [test] extras (gilda)")
    data = toy_data(tmp_path)
    # scispaCy is deliberately run under this test's Python, where it is not installed.
    (tmp_path / "peers.toml").write_text(CONFIG % sys.executable)
    command = [
        sys.executable,
        "-m",
        "medlink",
        "benchmark",
        str(tmp_path / "peers.toml"),
        "--data",
        str(data),
        "--work",
        str(tmp_path / "work"),
        "-o",
        str(tmp_path / "peers.md"),
    ]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    record = json.loads((tmp_path / "peers.json").read_text())
    rows = {r["system"]: r for r in record["results"]}
    gilda = rows["Gilda"]
    # Gilda grounds the exact names and the typo-free ones; each typo finds nothing: nil.
    assert gilda["acc@1"] == 0.5 and gilda["nil_rate"] == 0.5 and gilda["unavailable"] is None
    fold = gilda["folds"][0]
    assert fold["startup_seconds"] > 0 and fold["peak_rss_mb"] > 20
    medlink = rows["medlink isolated"]
    assert medlink["acc@1"] >= 0.75 and medlink["nil_rate"] == 0 and medlink["folds"][0]["peak_rss_mb"] > 100
    missing = rows["scispaCy linker"]
    assert missing["unavailable"].startswith("ModuleNotFoundError: No module named 'scispacy'")
    assert [c["b"] for c in record["comparisons"]] == ["Gilda"]  # never the system that could not run
    markdown = (tmp_path / "peers.md").read_text()
    # a system that could not run shows a dash with its reason, never a 0.0: in every table, per fold too
    assert "| scispaCy linker | — |" in markdown and "| scispaCy linker | — | — | — |" in markdown
    assert "0.0 | 0.0" not in markdown.split("## toy: Acc@1 per fold")[1].split("##")[0]
    assert "- **scispaCy linker** on toy: ModuleNotFoundError" in markdown
    assert "| Gilda | nil 50.0 % ·" in markdown and "Gilda 1.6.1" in markdown


def test_an_unknown_system_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG.replace('system = "gilda"', 'system = "metamap"') % sys.executable)
    with pytest.raises(MedlinkError, match="unknown system 'metamap'"):
        load_config(path)


def test_a_run_past_its_time_is_stopped_and_reported(tmp_path: Path) -> None:
    from medlink.benchmark.peers.isolated import run_isolated
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.terminology import SourceSpec, compile_terminology

    (tmp_path / "terms.tsv").write_text(TERMS)
    (tmp_path / "test.tsv").write_text(TESTS["a"])
    terminology = compile_terminology([SourceSpec.parse(f"tsv:{tmp_path / 'terms.tsv'}")], namespace="TOY")
    corpus = load_corpus(f"tsv:{tmp_path / 'test.tsv'}", None, "TOY")
    # Gilda cannot even import in a hundredth of a second: the run is stopped, and says so.
    run = run_isolated("gilda", terminology, corpus, tmp_path / "work", sys.executable, timeout_minutes=0.0002)
    assert run.unavailable is not None and run.unavailable.startswith("did not finish within 0.0002 minutes")
    assert run.predictions == ()


def test_a_system_skipped_on_a_dataset_shows_a_dash_with_its_reason(tmp_path: Path) -> None:
    from medlink.benchmark.report import to_json, to_markdown
    from medlink.benchmark.runner import run_benchmark

    data = toy_data(tmp_path)
    path = tmp_path / "skip.toml"
    systems = '[[systems]]\nname = "exact"\n\n[[systems]]\nname = "slow"\nskip = {toy = "too slow here"}\n'
    path.write_text(TOY_DATASET + systems)
    config = load_config(path)
    cells = run_benchmark(config, data, tmp_path / "work")
    record = to_json(config, cells, "test", {"date": "", "python": "", "machine": ""})
    slow = next(r for r in record["results"] if r["system"] == "slow")
    assert slow["unavailable"] == "not run: too slow here"
    exact = next(r for r in record["results"] if r["system"] == "exact")
    assert exact["unavailable"] is None and exact["acc@1"] > 0
    markdown = to_markdown({**record, "environment": {k: "" for k in ("date", "machine", "python", *PACKAGES)}}, [1])
    assert "| slow | — |" in markdown and "- **slow** on toy: not run: too slow here" in markdown


def test_a_kept_build_without_its_time_is_loaded_not_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer's build kept by an older medlink has no build-time file: it is complete (renamed into place), so the
    build task answers without a time instead of failing the peer's rows."""
    import importlib.util

    from medlink.benchmark.peers.isolated import PROCESS

    spec = importlib.util.spec_from_file_location("peer_process", PROCESS)
    assert spec is not None and spec.loader is not None
    peer_process = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer_process)
    (tmp_path / "fake_peer.py").write_text("BUILD = 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(peer_process.DISTRIBUTIONS, "fake", "pytest")
    built = tmp_path / "work" / f"{peer_process.version_of('fake')}-build3" / "built"
    built.mkdir(parents=True)
    request = {"system": "fake", "work": str(tmp_path / "work"), "task": "build", "terminology": "/nonexistent"}
    answer: dict = {}
    peer_process.run(request, answer)
    assert answer == {}
    (built / peer_process.BUILD_TIME).write_text('{"seconds": 12.5}', encoding="utf-8")
    peer_process.run(request, answer)
    assert answer == {"build_seconds": 12.5}
