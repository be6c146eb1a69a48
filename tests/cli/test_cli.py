"""The medlink command as a user runs it: a real subprocess, real files, the embedded default terminology."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

MEDLINK = [sys.executable, "-m", "medlink"]


def run(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    completed = subprocess.run([*MEDLINK, *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert completed.returncode == 0, completed.stderr
    return completed


def test_link_exact_only_on_the_embedded_terminology() -> None:
    out = run(
        "link", "--exact-only", "myocardial infarction", "heart attack", "", "no such disease at all"
    ).stdout.splitlines()
    assert out[0].split("\t") == ["mention", "concepts", "preferred_names", "score", "stage", "matched_name"]
    rows = [line.split("\t") for line in out[1:]]
    assert rows[0][:2] == ["myocardial infarction", "MESH:D009203"]
    assert rows[1][1] == "MESH:D009203" and rows[1][5] == "Heart Attack"
    assert rows[2][4] == "empty"
    assert rows[3][4] == "nil"


def test_link_json_prints_one_object_per_mention() -> None:
    lines = run(
        "link", "--exact-only", "--format", "json", "Myocardial Infarction", "Crohn's disease"
    ).stdout.splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["mention"] == "Myocardial Infarction"
    assert first["concepts"] == ["MESH:D009203"] and first["stage"] == "exact" and first["score"] == 1.0
    assert second["concepts"] == ["MESH:D003424"]


def test_the_mention_length_limit_is_an_option_and_a_nil_says_it() -> None:
    hostile = "+".join(f"a{i}" for i in range(10_000))  # 58 KB (a command line holds no more than 128 KB)
    first, second = (
        json.loads(line)
        for line in run("link", "--exact-only", "--format", "json", hostile, "heart attack").stdout.splitlines()
    )
    assert first["stage"] == "nil" and "more than the limit of 1,000" in first["reason"]  # not split, not searched
    assert second["concepts"] == ["MESH:D009203"]
    limited = json.loads(
        run("link", "--exact-only", "--format", "json", "--max-mention-chars", "5", "heart attack").stdout
    )
    assert limited["stage"] == "nil" and "the limit of 5" in limited["reason"]


def test_link_streams_files(tmp_path: Path) -> None:
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(
        '{"mention": "heart attack", "document": "The patient had a heart attack."}\n{"text": "Crohn disease"}\n'
    )
    output = tmp_path / "results.jsonl"
    run("link", "--exact-only", "--input", str(mentions), "--output", str(output))
    results = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["concepts"] for r in results] == [["MESH:D009203"], ["MESH:D003424"]]
    tsv_in, tsv_out = tmp_path / "m.tsv", tmp_path / "r.tsv"
    tsv_in.write_text("mention\tnote\nheart attack\tx\n")
    run("link", "--exact-only", "--input", str(tsv_in), "--output", str(tsv_out))
    assert tsv_out.read_text().splitlines()[1].split("\t")[:2] == ["heart attack", "MESH:D009203"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tsv", "mentions.jsonl", "r.tsv", "results.jsonl"]


def test_bad_input_file_is_one_line_error_and_keeps_existing_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"mention": "heart attack"}\n{not json}\n')
    output = tmp_path / "out.jsonl"
    output.write_text("previous results\n")
    completed = run("link", "--exact-only", "--input", str(bad), "--output", str(output), check=False)
    assert completed.returncode == 1
    assert f"{bad}:2: invalid JSON" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert output.read_text() == "previous results\n"


def test_output_paths_that_cannot_be_written_are_one_line_errors(tmp_path: Path) -> None:
    empty = run("link", "--exact-only", "heart attack", "--output", "", check=False)  # found by tests/test_fuzz.py
    assert empty.returncode == 2 and "'--output': an empty path" in empty.stderr
    (tmp_path / "a-file").write_text("")
    blocked = run("link", "--exact-only", "heart attack", "--output", str(tmp_path / "a-file" / "out.tsv"), check=False)
    assert blocked.returncode == 1 and "cannot write the results there (Not a directory)" in blocked.stderr
    assert "Traceback" not in empty.stderr + blocked.stderr


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv"])
def test_killed_link_run_resumes_without_loss_or_duplicates(tmp_path: Path, suffix: str) -> None:
    import os
    import signal
    import time

    mentions = tmp_path / "mentions.txt"
    mentions.write_text("".join(f"{name} {i}\n" for i in range(60_000) for name in ("heart attack", "asthma")))
    output, clean = tmp_path / f"out{suffix}", tmp_path / f"clean{suffix}"
    partial = tmp_path / f".out{suffix}.partial"
    command = [*MEDLINK, "link", "--exact-only", "--input", str(mentions), "--output"]
    job = subprocess.Popen([*command, str(output)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (partial.exists() and partial.stat().st_size > 100_000):
        assert job.poll() is None and time.monotonic() < deadline, "the run ended before it could be killed"
        time.sleep(0.01)
    os.kill(job.pid, signal.SIGKILL)
    job.wait(timeout=30)
    assert not output.exists() and partial.exists()
    resumed = run("link", "--exact-only", "--input", str(mentions), "--output", str(output), "--resume")
    assert "resuming after" in resumed.stderr
    run("link", "--exact-only", "--input", str(mentions), "--output", str(clean))
    assert output.read_text() == clean.read_text()  # every row once, in input order, one header
    assert not partial.exists()
    again = run("link", "--exact-only", "--input", str(mentions), "--output", str(output), "--resume")
    assert "is complete: nothing to resume" in again.stderr


def test_link_without_mentions_is_a_usage_error() -> None:
    completed = run("link", check=False)
    assert completed.returncode == 2
    assert "give mentions as arguments or with --input FILE" in completed.stderr


def test_compile_info_and_link_with_a_compiled_terminology(tmp_path: Path, fixtures: Path) -> None:
    target = tmp_path / "term"
    compiled = run(
        "terminology",
        "compile",
        f"mesh-desc-tsv:{fixtures / 'mesh_descriptors_tiny.tsv'}",
        str(fixtures / "tiny.obo"),
        "-o",
        str(target),
    )
    assert "compiled 9 concepts" in compiled.stdout
    assert "1 obsolete terms excluded" in compiled.stderr
    info = run("terminology", "info", str(target)).stdout
    assert "9 concepts" in info
    assert "MESH" in info and "TP" in info and "entry" in info
    linked = run("link", "--exact-only", "--terminology", str(target), "--format", "json", "VSD").stdout
    assert json.loads(linked)["concepts"] == ["TP:0000003"]


def test_info_on_the_embedded_default_names_its_mesh_release() -> None:
    info = run("terminology", "info").stdout
    assert "the descriptors' names from MeSH release 2024" in info
    assert "mesh2024_descriptor_terms.tsv.gz (mesh-terms-tsv, release 2024)" in info
    assert "permuted" in info and "abbreviation" in info


def test_compile_strict_stops_at_the_malformed_line(tmp_path: Path) -> None:
    source = tmp_path / "medic_bad.txt"
    source.write_text("D1||one\nbroken line\n")
    completed = run("terminology", "compile", "--strict", str(source), "-o", str(tmp_path / "t"), check=False)
    assert completed.returncode == 1
    assert f"Error: {source}:2: expected 'id||name|synonym…'" in completed.stderr
    assert not (tmp_path / "t").exists()
    lenient = run("terminology", "compile", str(source), "-o", str(tmp_path / "t"))
    assert "1 malformed lines skipped" in lenient.stderr


def test_unreadable_terminology_is_explained(tmp_path: Path) -> None:
    completed = run("link", "--exact-only", "--terminology", str(tmp_path), "x", check=False)
    assert completed.returncode == 1
    assert "is not a compiled terminology" in completed.stderr


def test_distill_names_a_bad_layer_list() -> None:
    for layers in ("a,b", "3,1", "-1,2"):
        completed = run("distill", "--layers", layers, "-o", "unused", check=False)
        assert completed.returncode == 2 and "increasing comma-separated layer indexes" in completed.stderr


def test_exact_only_refuses_an_index_search_setting() -> None:
    completed = run("link", "--exact-only", "--ef-search", "32", "heart attack", check=False)
    assert completed.returncode == 2 and "exact-only linking searches no index" in completed.stderr


def test_help_is_fast_and_lists_commands() -> None:
    out = run("--help").stdout
    assert "link" in out and "terminology" in out
    assert "obo" in run("terminology", "formats").stdout


@pytest.mark.slow
def test_default_link_runs_exact_then_dense_and_caches_its_index(isolated_cache: Path) -> None:
    """The embedded default: the MeSH descriptor index ships prebuilt (medlink-default-index), so the first run
    encodes nothing; it binds that index to all of MeSH (descriptors + supplementary records) in the cache, and
    later runs load the binding."""
    # ("… of the left ventricle" went to Heart Ventricles once MeSH 2024 named it "Left Ventricle": docs/accuracy.md)
    first = run("link", "--format", "json", "heart attack", "myocardial infarctoin", timeout=300)
    exact, dense = (json.loads(line) for line in first.stdout.splitlines())
    assert exact["stage"] == "exact" and exact["concepts"] == ["MESH:D009203"]
    assert dense["stage"] == "dense" and dense["concepts"] == ["MESH:D009203"]
    assert "encoding" not in first.stderr
    indexes = sorted(path for path in (isolated_cache / "indexes").iterdir() if not path.name.startswith("."))
    assert [index.name.startswith("mesh-") for index in indexes] == [True]  # the binding alone (not locks)
    built_at = [(index / "manifest.json").stat().st_mtime_ns for index in indexes]
    again = run("link", "--format", "json", "heart attack")
    assert json.loads(again.stdout)["concepts"] == ["MESH:D009203"]
    assert [(index / "manifest.json").stat().st_mtime_ns for index in indexes] == built_at


def test_index_build_link_add_and_eval(tmp_path: Path, fixtures: Path) -> None:
    terminology = tmp_path / "term"
    run("terminology", "compile", f"mesh-desc-tsv:{fixtures / 'mesh_descriptors_tiny.tsv'}", "-o", str(terminology))
    index = tmp_path / "index"
    built = run("index", "build", "--terminology", str(terminology), "-o", str(index))
    assert "indexed" in built.stdout
    linked = json.loads(run("link", "--index", str(index), "--format", "json", "cardiac illness").stdout)
    assert linked["stage"] == "dense" and linked["concepts"] == ["MESH:D006331"]
    several = json.loads(
        run("link", "--index", str(index), "--several-within", "1", "--format", "json", "cardiac illness").stdout
    )
    assert several["several"] and len(several["concepts"]) > 1
    strict = json.loads(
        run("link", "--index", str(index), "--nil-threshold", "0.999", "--format", "json", "cardiac illness").stdout
    )
    assert strict["stage"] == "nil" and "below the nil threshold 0.999" in strict["reason"]
    synonyms = tmp_path / "synonyms.tsv"
    synonyms.write_text("D009203\tcoronary thrombosis event\nD999999\tunknown thing\n")
    added = run("index", "add", str(index), "--synonyms", str(synonyms), "--namespace", "MESH")
    assert "1 new names encoded" in added.stdout
    assert "1 concept ids" in added.stderr
    relinked = json.loads(run("link", "--index", str(index), "--format", "json", "coronary thrombosis event").stdout)
    assert relinked["concepts"] == ["MESH:D009203"] and relinked["stage"] == "exact"
    info = json.loads(run("index", "info", str(index)).stdout)
    assert info["counts"]["O"] == 10 and info["origin"]["encoder"] == "medlink"  # 9 distinct names + 1 added
    corpus = tmp_path / "gold.tsv"
    corpus.write_text("heart attack\tD009203\ncardiac illness\tD006331\nnot a disease at all\t-1\n")
    result = json.loads(
        run("eval", "--index", str(index), "--corpus", f"tsv:{corpus}", "--namespace", "MESH", "--json").stdout
    )
    assert result["n"] == 3 and result["acc@1"] == pytest.approx(2 / 3)
    other = run(
        "index",
        "build",
        "--terminology",
        str(terminology),
        "--encoder",
        "medlink-fast",
        "--reuse",
        str(index),
        "-o",
        str(tmp_path / "other"),
        check=False,
    )
    assert other.returncode != 0 and "--reuse" in other.stderr and "cannot be reused" in other.stderr
    assert not (tmp_path / "other").exists()
