"""Normalized rows written resumably to JSON Lines and Parquet."""

from __future__ import annotations

import json
from pathlib import Path

from medlink.trials.normalization.output import ResumableWriter, read_rows
from medlink.trials.readers import read_trials
from support import TRIALS


def test_writer_resumes_after_a_kill_without_loss_or_duplicates(normalizer, tmp_path: Path) -> None:
    records = list(read_trials([TRIALS]))
    trials = normalizer.normalize_batch(records)
    output = tmp_path / "out.jsonl"
    with ResumableWriter(output) as writer:
        writer.write(trials[:2])
    # a kill in the middle of the third row leaves half a line in the checkpoint and no output
    checkpoint = output.with_name(".out.jsonl.partial.jsonl")
    with checkpoint.open("a") as handle:
        handle.write(json.dumps(trials[2].to_dict())[:40])
    assert not output.exists()
    with ResumableWriter(output) as writer:
        assert writer.done == {trials[0].nct_id, trials[1].nct_id}
        assert writer.write(trials) == 1  # the two done ones are skipped
        writer.finish()
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == [t.nct_id for t in trials]
    assert not checkpoint.exists()


def test_parquet_output_and_a_finished_output_is_never_rewritten_in_place(normalizer, tmp_path: Path) -> None:
    trials = normalizer.normalize_batch(list(read_trials([TRIALS])))
    output = tmp_path / "out.parquet"
    with ResumableWriter(output) as writer:
        writer.write(trials[:1])
        writer.finish()
    before = output.read_bytes()
    with ResumableWriter(output) as writer:
        assert output.read_bytes() == before  # resuming copies it; the output itself waits for the rename
        writer.write(trials)
        writer.finish()
    rows = read_rows(output)
    assert [r["nct_id"] for r in rows] == [t.nct_id for t in trials]
    assert rows[0]["interventions"][1]["nil_class"] == "placebo"
