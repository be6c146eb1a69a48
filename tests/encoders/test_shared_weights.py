"""A packaged model that leaves out the tensors it shares with a sibling is assembled whole on first use."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from medlink.encoders.shared_weights import SHARED_WEIGHTS_FILE, assembled_model, needs_assembly


def _package(root: Path) -> Path:
    (root / "teacher").mkdir(parents=True)
    save_file(
        {"embeddings.weight": torch.arange(6.0).reshape(2, 3), "layer.0": torch.ones(2)},
        str(root / "teacher" / "model.safetensors"),
    )
    student = root / "student"
    (student / "1_Pooling").mkdir(parents=True)
    save_file({"layer.0": torch.zeros(2)}, str(student / "model.safetensors"))
    (student / "config.json").write_text("{}")
    (student / "1_Pooling" / "config.json").write_text("{}")
    (student / SHARED_WEIGHTS_FILE).write_text(json.dumps({"from": "teacher", "tensors": ["embeddings.weight"]}))
    return student


def test_shared_tensors_are_put_back_once(tmp_path: Path) -> None:
    student = _package(tmp_path / "package")
    assert needs_assembly(student) and not needs_assembly(tmp_path / "package" / "teacher")
    folder = assembled_model(student, tmp_path / "cache")
    weights = load_file(folder / "model.safetensors")
    assert weights["embeddings.weight"].equal(torch.arange(6.0).reshape(2, 3))
    assert weights["layer.0"].equal(torch.zeros(2))  # its own tensor, not the sibling's
    assert (folder / "1_Pooling" / "config.json").exists() and not (folder / SHARED_WEIGHTS_FILE).exists()
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert assembled_model(student, tmp_path / "cache") == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp  # reused, not rebuilt
    left = [p.name for p in (tmp_path / "cache" / "models").iterdir() if not p.name.endswith(".lock")]
    assert left == [folder.name]  # no staging left (the build lock's file stays, as for every cache entry)


def test_a_sibling_without_the_shared_tensors_is_refused(tmp_path: Path) -> None:
    student = _package(tmp_path / "package")
    save_file({"layer.0": torch.ones(2)}, str(tmp_path / "package" / "teacher" / "model.safetensors"))
    with pytest.raises(ValueError, match="lacks the shared tensors"):
        assembled_model(student, tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir() if not p.name.endswith(".lock")] == []


def test_a_packaged_folder_named_as_encoder_is_assembled(tmp_path: Path, monkeypatch) -> None:
    # `--encoder path/to/fast-model` must work like `--encoder medlink-fast`, not load a model without embeddings.
    from medlink.encoders.registry import resolve_model

    monkeypatch.setenv("MEDLINK_CACHE", str(tmp_path / "cache"))
    student = _package(tmp_path / "package")
    resolved = Path(resolve_model(str(student)))
    assert resolved.parent == tmp_path / "cache" / "models"
    assert "embeddings.weight" in load_file(resolved / "model.safetensors")
    teacher = tmp_path / "package" / "teacher"
    assert resolve_model(str(teacher)) == str(teacher.resolve())  # a complete folder is used where it is


@pytest.mark.parametrize(
    "recipe",
    [
        {"from": "../teacher", "tensors": []},
        {"from": "/etc", "tensors": []},
        {"from": "teacher", "tensors": [], "files": ["../../outside.txt"]},
        {"from": "teacher", "tensors": [], "files": ["/tmp/outside.txt"]},
        {"from": "teacher", "tensors": "embeddings.weight"},
    ],
)
def test_a_folder_naming_paths_outside_itself_is_refused_and_writes_nothing(tmp_path: Path, recipe: dict) -> None:
    from medlink.errors import MedlinkError

    student = _package(tmp_path / "package")
    (tmp_path / "package" / "teacher" / "x.txt").write_text("x")
    (student / SHARED_WEIGHTS_FILE).write_text(json.dumps(recipe))
    with pytest.raises(MedlinkError, match=SHARED_WEIGHTS_FILE):
        assembled_model(student, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "outside.txt").exists()


def test_a_shared_file_in_a_subfolder_is_copied_inside(tmp_path: Path) -> None:
    student = _package(tmp_path / "package")
    (tmp_path / "package" / "teacher" / "tokenizer").mkdir()
    (tmp_path / "package" / "teacher" / "tokenizer" / "vocab.txt").write_text("a\nb\n")
    recipe = {"from": "teacher", "tensors": ["embeddings.weight"], "files": ["tokenizer/vocab.txt"]}
    (student / SHARED_WEIGHTS_FILE).write_text(json.dumps(recipe))
    folder = assembled_model(student, tmp_path / "cache")
    assert (folder / "tokenizer" / "vocab.txt").read_text() == "a\nb\n"
