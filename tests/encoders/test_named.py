"""Names that a saved folder's manifest records: opened only when they name a model, a folder or a hub id."""

import json
import os
import shutil
from pathlib import Path

import pytest

from medlink.encoders.named import MODEL_FILES, folder_named_in, model_named_in
from medlink.errors import MedlinkError
from medlink.folders import read_manifest_json
from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.linking.pipeline import encoder_of, terminology_of
from medlink.terminology import Terminology, save_terminology
from medlink.terminology.records import Name, NameKind, make_concept


def test_catalog_names_model_folders_and_hub_ids_pass(tmp_path) -> None:
    manifest = tmp_path / "index" / "manifest.json"
    (tmp_path / "index" / "model").mkdir(parents=True)
    (tmp_path / "index" / "model" / "config.json").write_text("{}")
    assert model_named_in(manifest, "medlink") == "medlink"
    assert model_named_in(manifest, "trial-matcher", also={"trial-matcher"}) == "trial-matcher"
    assert model_named_in(manifest, "cambridgeltl/SapBERT-from-PubMedBERT-fulltext") == (
        "cambridgeltl/SapBERT-from-PubMedBERT-fulltext"
    )
    # a relative name is looked for beside the manifest first: a folder moved with its model still opens
    assert model_named_in(manifest, "model") == str((tmp_path / "index" / "model").resolve())
    assert model_named_in(manifest, str(tmp_path / "index" / "model")) == str((tmp_path / "index" / "model").resolve())


@pytest.mark.parametrize(
    "name",
    ["/dev/zero", "/etc", "../../secrets", "a/b/c", "owner/../name", "", 7, None, {"x": 1}, "x" * 5000, "a\x00b", "-x"],
)
def test_anything_else_a_manifest_names_is_refused_naming_the_manifest(tmp_path, name) -> None:
    manifest = tmp_path / "manifest.json"
    with pytest.raises(MedlinkError, match=r"manifest\.json"):
        model_named_in(manifest, name)


def test_a_folder_without_a_model_is_refused_before_anything_in_it_is_read(tmp_path) -> None:
    (tmp_path / "home" / ".aws").mkdir(parents=True)
    (tmp_path / "home" / ".aws" / "credentials").write_text("secret")
    with pytest.raises(MedlinkError, match="not a model folder"):
        model_named_in(tmp_path / "manifest.json", str(tmp_path / "home" / ".aws"))
    (tmp_path / "home" / ".aws" / MODEL_FILES[1]).mkdir()  # a folder with a model file's name is not one
    with pytest.raises(MedlinkError, match="not a model folder"):
        model_named_in(tmp_path / "manifest.json", str(tmp_path / "home" / ".aws"))


def test_the_trial_matcher_folder_manifest_is_among_the_model_files() -> None:
    from medlink.trials.matching.training_settings import MANIFEST

    assert MANIFEST in MODEL_FILES


def test_a_named_folder_must_be_a_folder(tmp_path) -> None:
    (tmp_path / "terms").mkdir()
    assert folder_named_in(tmp_path / "manifest.json", "terms", "terminology") == (tmp_path / "terms").resolve()
    for name in ("/dev/zero", str(tmp_path / "missing"), 3):
        with pytest.raises(MedlinkError, match=r"manifest\.json"):
            folder_named_in(tmp_path / "manifest.json", name, "terminology")


def test_a_manifest_that_is_a_pipe_is_refused_not_read(tmp_path) -> None:
    os.mkfifo(tmp_path / "manifest.json")
    with pytest.raises(MedlinkError, match="not a regular file"):
        read_manifest_json(tmp_path / "manifest.json", MedlinkError, "missing")


@pytest.fixture(scope="module")
def small_index(encoder, tmp_path_factory) -> Path:
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D006973", "Hypertension"),
        ]
    )
    root = tmp_path_factory.mktemp("named")
    save_terminology(terminology, root / "terms")
    origin = {"encoder": "minilm", "backend": "onnx", "terminology": str(root / "terms")}
    return build_index(ontology_entries(terminology), encoder, root / "index", terminology.fingerprint(), origin=origin)


def _edited(small_index: Path, target: Path, **origin: object) -> VectorIndex:
    shutil.copytree(small_index, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["origin"].update(origin)
    (target / "manifest.json").write_text(json.dumps(manifest))
    return VectorIndex.load(target)


def test_an_index_naming_a_place_that_holds_no_model_or_terminology_is_refused(small_index, tmp_path) -> None:
    for number, encoder in enumerate(("/dev/zero", str(Path.home()), "../x", ["minilm"])):
        with pytest.raises(MedlinkError, match=rf"encoder-{number}/manifest\.json"):  # a list: refused as read
            encoder_of(_edited(small_index, tmp_path / f"encoder-{number}", encoder=encoder))
    for number, terminology in enumerate(("/dev/zero", str(tmp_path / "nowhere"))):
        index = _edited(small_index, tmp_path / f"terms-{number}", terminology=terminology)
        with pytest.raises(MedlinkError, match=rf"terms-{number}/manifest\.json"):
            terminology_of(index)
    with pytest.raises(MedlinkError, match="backend"):
        encoder_of(_edited(small_index, tmp_path / "backend", backend="../../bin/sh"))


def test_an_index_moved_with_its_model_beside_it_opens_it_and_checks_its_vectors(small_index, tmp_path) -> None:
    from medlink.encoders.registry import packaged_minilm_path

    moved = tmp_path / "moved"
    index = _edited(small_index, moved, encoder="model")
    (moved / "model").symlink_to(packaged_minilm_path())
    assert encoder_of(index).identity.fingerprint() == index.encoder.fingerprint()
    other = _edited(small_index, tmp_path / "other", encoder="e5-small")  # a catalog name, another model
    with pytest.raises(MedlinkError, match="built with encoder"):
        encoder_of(other)


def test_a_set_ranker_naming_a_place_that_holds_no_model_is_refused(tmp_path) -> None:
    from medlink.linking.sets.set_ranker import _dense_names

    for encoder in ({"name": "/etc", "fingerprint": "0"}, {"name": 5}, ["medlink"]):
        with pytest.raises(MedlinkError, match="ranker"):
            _dense_names(tmp_path, encoder)


def test_a_model_folder_whose_files_link_out_or_never_end_is_refused_before_they_are_read(tmp_path) -> None:
    for number, (name, target) in enumerate((("encoder.json", "/dev/zero"), ("vocab.txt", str(tmp_path / "secret")))):
        model = tmp_path / f"model-{number}"
        model.mkdir()
        (model / "config.json").write_text("{}")
        (model / name).symlink_to(target)
        with pytest.raises(MedlinkError, match=r"links out of the model folder|not a regular file"):
            model_named_in(tmp_path / "manifest.json", str(model))
    piped = tmp_path / "piped"
    piped.mkdir()
    (piped / "config.json").write_text("{}")
    os.mkfifo(piped / "model.onnx")
    with pytest.raises(MedlinkError, match="not a regular file"):
        model_named_in(tmp_path / "manifest.json", str(piped))


def test_one_word_hub_names_still_open() -> None:
    assert model_named_in(Path("/nowhere/manifest.json"), "bert-base-uncased") == "bert-base-uncased"
