"""An index's manifest read into typed fields: a field of the wrong type is refused naming the file and the field."""

import json
import shutil
from pathlib import Path

import pytest

from medlink.index import IndexFileError, VectorIndex, build_index, ontology_entries
from medlink.index.manifest import IndexOrigin
from medlink.index.update import update_manifest
from medlink.index.vector_index import INDEX_VERSION
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


@pytest.fixture(scope="module")
def built(encoder, tmp_path_factory) -> Path:
    terminology = Terminology.from_concepts(
        [make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)])]
    )
    origin = {"encoder": "minilm", "backend": "onnx"}
    folder = tmp_path_factory.mktemp("manifest") / "index"
    return build_index(ontology_entries(terminology), encoder, folder, terminology.fingerprint(), origin=origin)


def test_the_fields_are_typed(built, encoder, tmp_path) -> None:
    copy = shutil.copytree(built, tmp_path / "index")
    update_manifest(copy, nil_threshold=0.5, rebound_from="0123456789abcdef")
    manifest = VectorIndex.load(copy).manifest
    assert manifest.encoder == encoder.identity and manifest.encoder_fingerprint == encoder.identity.fingerprint()
    assert manifest.origin == IndexOrigin("minilm", "onnx", None) and manifest.origin.as_json() == {
        "encoder": "minilm",
        "backend": "onnx",
    }
    assert manifest.nil_threshold == 0.5 and manifest.term_model is None and manifest.kinds == {"O": "exact"}
    assert manifest.encoded_for == "0123456789abcdef"  # a rebound index's vectors were encoded for its source
    assert manifest.path == copy / "manifest.json" and manifest.written["version"] == INDEX_VERSION


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nil_threshold", "high"),
        ("nil_threshold", True),
        ("kinds", ["O"]),
        ("kinds", {"O": 3}),
        ("hnsw", {"m": 16, "bogus": 1}),
        ("hnsw", 16),
        ("hnsw", {"m": "16"}),
        ("compressed", {"rescore": 2.5}),
        ("encoder", {"kind": "onnx", "model": "m", "weights_sha256": "0", "pooling": "mean", "max_length": "32"}),
        ("origin", {"encoder": ["x"]}),
        ("origin", "minilm"),
        ("origin", {"encoder": "minilm", "where": "x"}),
        ("encoder", None),
        ("encoder", {"kind": "onnx"}),
        ("terminology", 7),
        ("files", {"O.faiss": 1}),
        ("term_model", [1, 2]),
        ("counts", {"O": "11"}),
        ("rebound_from", 3),
    ],
)
def test_a_field_of_the_wrong_type_is_refused_naming_the_file_and_the_field(built, tmp_path, field, value) -> None:
    copy = shutil.copytree(built, tmp_path / "index")
    written = json.loads((copy / "manifest.json").read_text())
    written[field] = value
    (copy / "manifest.json").write_text(json.dumps(written))
    with pytest.raises(IndexFileError, match=rf"index/manifest\.json: .*'{field}'"):
        VectorIndex.load(copy)


def test_names_added_keep_what_calibration_and_rebinding_added(built, encoder, tmp_path) -> None:
    from medlink.index import IndexEntry, add_entries

    copy = shutil.copytree(built, tmp_path / "index")
    calibrated = {"nil_threshold": 0.4, "term_model": {"weights": [1.0]}, "form_model": {"weights": [2.0]}}
    update_manifest(copy, **calibrated, rebound_from="0123456789abcdef", form_calibration={"examples": {}})
    add_entries(copy, [IndexEntry("cardiac infarct", "cardiac infarct", ("MESH:D009203",), "O")], encoder)
    manifest = VectorIndex.load(copy).manifest
    assert (manifest.nil_threshold, manifest.term_model, manifest.form_model) == (
        0.4,
        {"weights": [1.0]},
        {"weights": [2.0]},
    )
    assert manifest.encoded_for == "0123456789abcdef" and manifest.written["form_calibration"] == {"examples": {}}
    assert manifest.counts["O"] == VectorIndex.load(built).count("O") + 1
