"""The embedded default terminology is current: built from the shared MeSH file by this normalizer and schema."""

import json

from medlink.resources import default_terminology_path
from medlink.terminology import load_terminology
from medlink.terminology.store import SCHEMA_VERSION, sha256_of
from medlink.text import Normalizer
from support import shared_file


def test_default_terminology_matches_its_source_and_code() -> None:
    manifest = json.loads((default_terminology_path() / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["normalizer"] == Normalizer().fingerprint, "run scripts/build_default_terminology.py"
    [source] = manifest["sources"]
    assert source["path"] == "mesh_descriptors.tsv.gz"
    assert source["sha256"] == sha256_of(shared_file("terminologies/mesh/mesh_descriptors.tsv.gz"))


def test_default_terminology_loads_with_attribution_fields() -> None:
    terminology = load_terminology(default_terminology_path())
    assert len(terminology) == 30_764
    assert terminology.concept("MESH:D009203").source == "MeSH descriptors"
    assert terminology.concept("MESH:D009203").semantic_types == ("Diseases",)
