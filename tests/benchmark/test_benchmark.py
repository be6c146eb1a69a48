"""`medlink benchmark` end to end on hand-made data: folds, baselines without an encoder, the real MiniLM, cached
indexes, and the three report files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from medlink.benchmark.config import load_config
from medlink.errors import MedlinkError

TERMS = (
    "T1\tmyocardial infarction\nT1\theart attack\nT2\tdiabetes mellitus\nT3\thypertension\nT3\thigh blood pressure\n"
)
TESTS = {
    "a": "heart attack\tT1\ndiabetes mellitus\tT2\nhypertensoin\tT3\nmyocardial infarctoin\tT1\n",  # 2 exact, 2 typos
    "b": "high blood pressure\tT3\nhigh blood presure\tT3\n",  # 1 exact, 1 typo
}
TOY_DATASET = """
[[datasets]]
name = "toy"
folds = ["a", "b"]
terminology = ["tsv:{data}/terms.tsv"]
namespace = "TOY"
corpus = "tsv:{data}/test_{fold}.tsv"
"""
CONFIG = (
    """
ks = [1, 5]
compare = [["char n-gram TF-IDF", "exact match"]]
"""
    + TOY_DATASET
    + """
[[systems]]
name = "exact match"
sieves = "exact"

[[systems]]
name = "char n-gram TF-IDF"
sieves = "exact,sparse"

[[systems]]
name = "MiniLM"
encoder = "minilm"
sieves = "exact,O-T"
"""
)


def toy_data(folder: Path) -> Path:
    """``folder``/data with the toy terminology and test folds."""
    data = folder / "data"
    data.mkdir()
    (data / "terms.tsv").write_text(TERMS)
    for fold, text in TESTS.items():
        (data / f"test_{fold}.tsv").write_text(text)
    return data


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    toy_data(tmp_path)
    (tmp_path / "suite.toml").write_text(CONFIG)
    return tmp_path


def test_benchmark_writes_tables_json_and_plot(suite: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "medlink",
        "benchmark",
        str(suite / "suite.toml"),
        "--data",
        str(suite / "data"),
        "--work",
        str(suite / "work"),
        "-o",
        str(suite / "report" / "bench.md"),
    ]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
    record = json.loads((suite / "report" / "bench.json").read_text())
    by_system = {r["system"]: r for r in record["results"]}
    exact = by_system["exact match"]
    assert [f["acc@1"] for f in exact["folds"]] == [0.5, 0.5] and exact["acc@1"] == 0.5 and exact["n"] == 6
    assert by_system["char n-gram TF-IDF"]["acc@1"] == 1.0  # every typo is one n-gram away from its name
    assert 0.5 <= by_system["MiniLM"]["acc@1"] <= 1.0
    [comparison] = record["comparisons"]
    assert (comparison["only_a"], comparison["only_b"]) == (3, 0)
    markdown = (suite / "report" / "bench.md").read_text()
    assert "| exact match | 50.0 |" in markdown and "| char n-gram TF-IDF | **100.0** |" in markdown
    assert "## toy: Acc@1 per fold (%)" in markdown and "![Acc@1 per system and dataset](bench.svg)" in markdown
    assert (suite / "report" / "bench.svg").read_text().startswith("<svg")
    speed = (suite / "report" / "bench-speed.svg").read_text()
    assert speed.startswith("<svg") and "mentions linked per second" in speed
    [index] = (suite / "work" / "indexes").iterdir()  # both folds search one terminology: one index
    built = (index / "manifest.json").stat().st_mtime_ns
    subprocess.run([*command, "--dataset", "toy"], check=True, capture_output=True, timeout=300)
    assert (index / "manifest.json").stat().st_mtime_ns == built  # the cached index was reused
    # A dataset whose terminology is the same plus one name: its index takes the cached index's vectors.
    (suite / "data" / "terms.tsv").write_text(TERMS + "T2\tsugar diabetes\n")
    subprocess.run([*command, "--dataset", "toy"], check=True, capture_output=True, timeout=300)
    [grown] = [folder for folder in (suite / "work" / "indexes").iterdir() if folder != index]
    timing = json.loads((grown / "manifest.json").read_text())["timing"]
    assert (timing["encoded"], timing["reused"]) == (1, 5)


def test_config_errors_name_the_file_and_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG.replace('encoder = "minilm"\n', ""))
    with pytest.raises(MedlinkError, match=r"bad.toml: system 'MiniLM' uses dense sieves but names no encoder"):
        load_config(path)
    path.write_text(CONFIG.replace('"exact match"]]', '"no such system"]]'))
    with pytest.raises(MedlinkError, match="compare names a system that is not defined"):
        load_config(path)
    path.write_text(CONFIG.replace('folds = ["a", "b"]', 'subset = "refined"'))
    with pytest.raises(MedlinkError, match="dataset 'toy': subset 'refined' needs a train corpus"):
        load_config(path)
    path.write_text("[[datasets]\n")
    with pytest.raises(MedlinkError, match="cannot read the benchmark configuration"):
        load_config(path)


def test_a_dataset_with_a_crosswalk_is_also_scored_across_releases(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "terms.tsv").write_text(TERMS)
    (data / "test.tsv").write_text("heart attack\tOLD1\nhypertension\tT3\n")  # OLD1: T1's id in an older release
    (data / "crosswalk.tsv").write_text("old_id\tnew_id\tevidence\nTOY:OLD1\tTOY:T1\theart attack 1\n")
    (tmp_path / "suite.toml").write_text(
        'ks = [1]\n\n[[datasets]]\nname = "toy"\nterminology = ["tsv:{data}/terms.tsv"]\nnamespace = "TOY"\n'
        'corpus = "tsv:{data}/test.tsv"\ncrosswalk = "{data}/crosswalk.tsv"\n\n'
        '[[systems]]\nname = "exact match"\nsieves = "exact"\n'
    )
    report = tmp_path / "report" / "bench.md"
    command = [sys.executable, "-m", "medlink", "benchmark", str(tmp_path / "suite.toml"), "--data", str(data)]
    subprocess.run([*command, "--work", str(tmp_path / "work"), "-o", str(report)], check=True, timeout=300)
    [row] = json.loads(report.with_suffix(".json").read_text())["results"]
    assert (row["acc@1"], row["acc@1_across_releases"]) == (0.5, 1.0)  # the strict figure is unchanged
    markdown = report.read_text()
    assert "## Acc@1 across terminology releases (%)" in markdown and "| exact match | 100.0 |" in markdown
