"""The model catalogue: what ``medlink models`` lists, how a missing model names its extra, and ``verify`` catching
a changed, missing or unrecorded file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.models.catalog import KNOWN, OWN, PLUGIN, ModelEntry, installed_model_folder, model_location
from medlink.models.checksums import FAILED, NOT_INSTALLED, OK, UNRECORDED, record_checksums, verify_model


def test_models_lists_every_known_model_with_where_it_comes_from() -> None:
    result = CliRunner().invoke(main, ["models", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in map(json.loads, result.output.splitlines())}
    assert {entry.name for entry in KNOWN} <= set(rows)
    assert rows["medlink"]["installed"] and rows["medlink"]["distribution"] == "medlink"
    assert rows["medlink"]["install"] == "pip install medlink" and rows["medlink"]["bytes"] > 10_000_000
    assert rows["trial-matcher"]["install"] == "pip install 'medlink[trials]'"
    assert rows["medlink-zh"]["distribution"] == "medlink-zh"
    text = CliRunner().invoke(main, ["models"]).output
    assert text.splitlines()[0].split()[:3] == ["name", "installed", "version"]


def test_the_separately_packaged_models_are_found_through_their_entry_points() -> None:
    """The test install has both model packages (the README's test command installs them from packages/)."""
    assert (installed_model_folder("trial-matcher") / "trial_model.json").is_file()
    assert (installed_model_folder("medlink-zh") / "shared_weights.json").is_file()
    assert "medlink_trial_matcher" in str(installed_model_folder("trial-matcher"))


def test_a_model_whose_distribution_is_missing_names_the_extra_that_installs_it() -> None:
    absent = ModelEntry("absent", "a test model", PLUGIN, "medlink-absent", "absent", "none", "no-such-entry-point")
    assert model_location(absent) is None
    assert verify_model(absent).status == NOT_INSTALLED
    with pytest.raises(MedlinkError, match="no model named"):
        installed_model_folder("no-such-model")


def test_verify_passes_the_installed_models_and_catches_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CliRunner().invoke(main, ["models", "verify", "medlink", "medlink-fast", "trial-matcher", "minilm"])
    assert result.exit_code == 0, result.output
    assert "medlink: ok" in result.output and "minilm: ok" in result.output

    # A copy of the fast model as an own model of its own, then damaged three ways.
    entry = next(e for e in KNOWN if e.name == "medlink-fast")
    copy = tmp_path / "fast-copy"
    shutil.copytree(model_location(entry), copy)
    (copy / "checksums.json").unlink()
    monkeypatch.setattr("medlink.models.checksums.model_location", lambda _: copy)
    copied = ModelEntry("copy", "test", OWN, "medlink", None, "Apache-2.0", "fast-copy")
    assert verify_model(copied).status == UNRECORDED
    record_checksums(copy)
    assert verify_model(copied).status == OK
    with (copy / "config.json").open("a") as config:
        config.write(" ")
    (copy / "modules.json").unlink()
    (copy / "stray.bin").write_bytes(b"x")
    verdict = verify_model(copied)
    assert verdict.status == FAILED
    assert verdict.problems == (
        "config.json: contents differ from the recorded checksum",
        "modules.json: missing",
        "stray.bin: not in checksums.json",
    )
