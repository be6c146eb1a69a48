"""``medlink train``: one group for every trainer, the old top-level names kept as hidden aliases (issue 56)."""

from __future__ import annotations

from click.testing import CliRunner

from medlink.cli import main
from medlink.cli.train_group import TRAINERS


def test_the_trainers_are_one_group() -> None:
    shown = CliRunner().invoke(main, ["train", "--help"])
    assert shown.exit_code == 0 and all(name in shown.output for name in TRAINERS)
    listing = CliRunner().invoke(main, ["--help"]).output
    assert "train-set-ranker" not in listing and "train-tagger" not in listing  # hidden, still working
    for name in TRAINERS:
        usage = CliRunner().invoke(main, ["train", name, "--help"], prog_name="medlink")
        assert usage.exit_code == 0 and f"medlink train {name}" in usage.output


def test_the_old_ways_still_work() -> None:
    runner = CliRunner()
    # `medlink train --terminology …`: the encoder, as before; `medlink train-set-ranker …`: the set ranker
    encoder = runner.invoke(main, ["train", "--no-such-option"], prog_name="medlink")
    assert encoder.exit_code == 2 and "No such option '--no-such-option'" in encoder.output
    assert "medlink train encoder" in encoder.output
    for old, new in (("train-set-ranker", "set-ranker"), ("train-pair-rescorer", "pair-rescorer"),
                     ("train-candidate-reranker", "candidate-reranker"), ("train-tagger", "tagger"),
                     ("train-ranker", "set-ranker"), ("train-reranker", "candidate-reranker")):  # fmt: skip
        aliased, grouped = runner.invoke(main, [old, "--help"]), runner.invoke(main, ["train", new, "--help"])
        assert aliased.exit_code == 0 and aliased.output.split("Options:")[1] == grouped.output.split("Options:")[1]
