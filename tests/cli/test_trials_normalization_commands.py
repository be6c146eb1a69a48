"""``medlink trials normalize`` and ``eval-normalization``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from medlink.cli import main
from medlink.trials.normalization.output import read_rows
from support import TRIALS, write_archive


def test_normalize_command_writes_resumes_and_runs_workers(tmp_path: Path) -> None:
    runner = CliRunner()
    output = tmp_path / "out.jsonl"
    result = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(output), "--exact-only"])
    assert result.exit_code == 0, result.output
    assert "3 records normalized" in result.output and "records/s once the linkers were ready" in result.output
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == ["NCT90000001", "NCT90000002", "NCT90000003"]
    again = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(output), "--exact-only"])
    assert "0 records normalized" in again.output and "(none new); 3 already done" in again.output
    assert read_rows(output) == rows
    parallel = tmp_path / "parallel.parquet"
    result = runner.invoke(
        main,
        [
            "trials",
            "normalize",
            str(TRIALS),
            "-o",
            str(parallel),
            "--exact-only",
            "--workers",
            "2",
            "--batch-records",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert read_rows(parallel) == rows


def test_commands_refuse_bad_input_clearly(tmp_path: Path) -> None:
    runner = CliRunner()
    bad_output = runner.invoke(main, ["trials", "normalize", str(TRIALS), "-o", str(tmp_path / "out.csv")])
    assert bad_output.exit_code != 0 and ".jsonl or .parquet" in bad_output.output
    empty = write_archive(tmp_path / "empty.zip", {})
    result = runner.invoke(main, ["trials", "normalize", str(empty), "-o", str(tmp_path / "o.jsonl"), "--exact-only"])
    assert result.exit_code != 0 and "no ClinicalTrials.gov record" in result.output
    assert not (tmp_path / "o.jsonl").exists()


def test_eval_normalization_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["trials", "eval-normalization", str(TRIALS), "--exact-only", "--format", "json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["records"] == 3
    assert 0.0 < scores["conditions"]["f1"] <= 1.0 and scores["interventions"]["predicted"] > 0
