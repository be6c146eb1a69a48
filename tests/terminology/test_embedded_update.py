"""``medlink terminology update``: a newer MeSH release in place of the shipped one, only new names encoded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.linking import Linker
from medlink.linking.default_update import update_embedded
from medlink.resources import default_nil_calibration
from medlink.terminology.embedded import installed_update, load_default_terminology

DESCRIPTORS = [
    ("D000001", "Myocardial Infarction", "Heart Attack|Infarction, Myocardial", "C14.280.647"),
    ("D000002", "Heart Diseases", "Cardiac Diseases", "C14.280"),
    ("D000003", "Antineoplastic Agents", "Anticancer Drugs", "D27.505.954.248"),
    ("D000004", "Mpox (monkeypox)", "Monkeypox|Monkey Pox", "C01.925.256.743.615"),
]
NEW = ("D000005", "Long COVID", "Post-Acute COVID-19 Syndrome|Post COVID Condition", "C01.925.705")


def _write(path: Path, rows: list[tuple[str, ...]]) -> Path:
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def own_cache(tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of its own (the update must not leak into other tests), sharing the session's exported encoders."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (isolated_cache / "encoders").mkdir(exist_ok=True)
    (cache / "encoders").symlink_to(isolated_cache / "encoders")
    monkeypatch.setenv("MEDLINK_CACHE", str(cache))
    return cache


def test_an_update_becomes_the_default_encoding_only_new_names(own_cache: Path, tmp_path: Path) -> None:
    records = _write(
        tmp_path / "mesh_supplementary_2031.tsv",
        [("C000001", "quextatinib", "QXT-17", "D000003"), ("C000002", "MPOX", "", "D000003")],
    )
    first = update_embedded(_write(tmp_path / "mesh_descriptors_2031.tsv", DESCRIPTORS), records)
    assert first.release == "2031" and first.concepts == 4
    # names MeSH already had ("Heart Attack") come from the shipped (prebuilt) index; only the others are encoded
    assert first.reused > 0 and first.encoded + first.reused == 9  # 9 distinct texts
    assert installed_update() is not None and len(load_default_terminology()) == 4

    second = update_embedded(_write(tmp_path / "mesh_descriptors_2032.tsv", [*DESCRIPTORS, NEW]), records)
    assert second.release == "2032" and second.new_concepts == 1
    earlier = first.encoded + first.reused
    assert second.reused >= earlier and second.encoded + second.reused == earlier + 3  # at most its 3 new names

    linker = Linker.load()
    assert linker.link("post covid condition").concepts == ("MESH:D000005",)
    assert linker.link("quextatinib").concepts == ("MESH:C000001",)  # a supplementary record of the update
    assert linker.link("mpox").concepts == ("MESH:D000004", "MESH:C000002")  # the descriptor first
    assert linker.link("myocardial infarctoin").concepts == ("MESH:D000001",)  # dense retrieval over the update
    shipped = default_nil_calibration()
    assert shipped is not None and linker.config.nil_threshold == pytest.approx(shipped["threshold"])
    # an update installed under an earlier medlink names that one's descriptors: it inherits today's calibration
    record = own_cache / "embedded" / "current.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "replaces": "an-earlier-release"}))
    assert Linker.load().config.nil_threshold == pytest.approx(shipped["threshold"])

    info = CliRunner().invoke(main, ["terminology", "info"])
    assert info.exit_code == 0 and "MeSH release 2032" in info.output and "release 2032" in info.output
    assert "supplementary records: supplementary-" in info.output and "release 2031" in info.output
    reverted = CliRunner().invoke(main, ["terminology", "update", "--revert"])
    assert reverted.exit_code == 0 and installed_update() is None
    assert len(load_default_terminology()) == 30_764


def test_a_file_that_is_not_descriptors_changes_nothing(own_cache: Path, tmp_path: Path) -> None:
    records = _write(tmp_path / "mesh_supplementary_2031.tsv", [("C000001", "quextatinib", "", "D000003")])
    with pytest.raises(MedlinkError, match=r"mesh_supplementary_2031\.tsv: not MeSH descriptors"):
        update_embedded(records)
    misnamed = _write(tmp_path / "mesh_descriptors_2030.tsv", [("C000001", "quextatinib", "", "D000003")])
    with pytest.raises(MedlinkError, match=r"mesh_descriptors_2030\.tsv: holds 0 MeSH descriptors among 1 records"):
        update_embedded(misnamed)
    result = CliRunner().invoke(main, ["terminology", "update", str(tmp_path / "notes.txt")])
    assert result.exit_code != 0 and installed_update() is None
    descriptors = _write(tmp_path / "mesh_descriptors_2031.tsv", DESCRIPTORS)
    result = CliRunner().invoke(main, ["terminology", "update", str(descriptors), str(descriptors)])
    assert result.exit_code == 1 and "not MeSH supplementary records medlink can tell" in result.output
    misnamed = _write(tmp_path / "mesh_supplementary_2030.tsv", DESCRIPTORS)
    result = CliRunner().invoke(main, ["terminology", "update", str(descriptors), str(misnamed)])
    assert result.exit_code == 1 and "are not MeSH supplementary concept records" in result.output
    assert installed_update() is None


def test_info_names_the_shipped_release() -> None:
    result = CliRunner().invoke(main, ["terminology", "info"])
    assert result.exit_code == 0 and "the MeSH shipped with medlink" in result.output
    assert "30,764 concepts" in result.output
