"""The embedded default, prebuilt (``medlink-default-index``, medlink/linking/prebuilt.py) and the default encoder's
shipped ONNX graph: a first use opens them instead of encoding, exporting or compiling — and the package fails
here as soon as it no longer matches what medlink ships (rebuild it: scripts/build_default_index_package.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from medlink.encoders import load_encoder
from medlink.encoders.onnx import OnnxEncoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.linking import Linker, LinkerConfig, NilCause, Stage
from medlink.linking.defaults import default_drug_terminology_path, descriptors_index, shipped_nil_threshold
from medlink.linking.pipeline import dense_parts, exact_parts
from medlink.linking.prebuilt import NO_PREBUILT, prebuilt_index, prebuilt_root
from medlink.linking.settings import LinkerParts
from medlink.resources import resource_path
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


def test_the_prebuilt_package_matches_what_medlink_ships() -> None:
    root = prebuilt_root()
    assert root is not None, "medlink-default-index is not installed"
    assert descriptors_index(progress=False).is_relative_to(root), "stale: run scripts/build_default_index_package.py"
    assert default_drug_terminology_path().is_relative_to(root), "stale: run scripts/build_default_index_package.py"


def test_a_prebuilt_index_of_another_terminology_or_encoder_is_not_taken() -> None:
    [folder] = (prebuilt_root() / "indexes").iterdir()  # type: ignore[operator]
    manifest = json.loads((folder / "manifest.json").read_text())
    terminology, encoder = manifest["terminology"], manifest["encoder_fingerprint"]
    assert prebuilt_index(terminology, encoder, {}) is not None
    assert prebuilt_index("another-terminology", encoder, {}) is None
    assert prebuilt_index(terminology, "another-encoder", {}) is None
    assert prebuilt_index(terminology, encoder, {"nil_threshold": -1.0}) is None  # another calibration


def test_medlink_no_prebuilt_switches_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_PREBUILT, "1")
    assert prebuilt_root() is None


def test_the_default_encoder_runs_its_shipped_graph() -> None:
    encoder = load_encoder(DEFAULT_MODEL)
    assert isinstance(encoder, OnnxEncoder) and encoder.folder == resource_path("default-model")
    weights = json.loads((encoder.folder / "checksums.json").read_text())["files"]["model.safetensors"]["sha256"]
    assert encoder.identity.weights_sha256 == weights  # the graph's identity is the shipped weights'


@pytest.mark.slow  # exports with torch, as a first use did before the graph shipped
def test_the_shipped_graph_encodes_exactly_as_a_fresh_export(tmp_path: Path) -> None:
    from medlink.encoders.onnx import export_onnx

    weights_only = tmp_path / "default-model"
    shutil.copytree(
        resource_path("default-model"), weights_only, ignore=shutil.ignore_patterns("model.onnx", "encoder.json")
    )
    exported = OnnxEncoder(export_onnx(weights_only, tmp_path / "export"))
    shipped = load_encoder(DEFAULT_MODEL)
    texts = ["heart attack", "myocardial infarctoin", "Crohn's disease", "5-fluorouracil " * 12, "ß-Thalassemia"]
    assert exported.identity.fingerprint() == shipped.identity.fingerprint()
    assert np.array_equal(exported.encode(texts), shipped.encode(texts))


@pytest.mark.slow  # quantizes an export
def test_other_export_options_are_exported_not_served_by_the_shipped_graph() -> None:
    encoder = load_encoder(DEFAULT_MODEL, quantize="int8")
    assert encoder.identity.quantization == "int8"
    assert encoder.folder != resource_path("default-model")  # type: ignore[attr-defined]


@pytest.mark.slow  # a fresh interpreter on an empty cache (about 10 s)
def test_the_first_dense_answer_on_an_empty_cache_encodes_and_exports_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    done = subprocess.run(
        [sys.executable, "-m", "medlink", "link", "myocardial infarctoin"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MEDLINK_CACHE": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    mention, concept, *_, stage, _matched = done.stdout.strip().splitlines()[-1].split("\t")
    assert (mention, concept, stage) == ("myocardial infarctoin", "MESH:D009203", "dense")
    assert not (cache / "encoders").exists() and not (cache / "terminologies").exists()
    assert [path.name[:5] for path in (cache / "indexes").iterdir() if not path.name.startswith(".")] == ["mesh-"]


def test_without_its_index_the_default_answers_an_exact_hit_before_building_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(NO_PREBUILT, "1")
    monkeypatch.setenv("MEDLINK_CACHE", str(tmp_path))
    linker = Linker.load(embedded="descriptors")  # the descriptors ship compiled: nothing else to build
    result, the, binary = linker.link_many(["heart attack", "the", "a\x01b"])
    assert (result.concept_id, result.stage) == ("MESH:D009203", Stage.EXACT)
    # nil by default from the first mention on, under the threshold the index will be calibrated with
    assert the.nil_cause is NilCause.NOT_A_TERM and binary.nil_cause is NilCause.NOT_A_TERM
    assert linker.config.nil_threshold == shipped_nil_threshold() is not None
    assert linker.with_config(LinkerConfig(cache_size=10)).config.nil_threshold == shipped_nil_threshold()
    assert not (tmp_path / "indexes").exists()  # the 115,933 names are not encoded for an exact hit


def test_a_deferred_index_is_built_once_when_exact_match_leaves_a_mention(encoder, tmp_path: Path) -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003424", "Crohn Disease"),
        ]
    )
    builds: list[Path] = []

    def build() -> LinkerParts:
        entries = ontology_entries(terminology)
        builds.append(build_index(entries, encoder, tmp_path / "index", terminology.fingerprint()))
        return dense_parts(terminology, VectorIndex.load(builds[-1]), encoder, config=LinkerConfig(nil_threshold=0.5))

    linker = Linker.from_parts(exact_parts(terminology))
    linker._deferred = build  # what Linker.load sets when the embedded default's index is still to be built
    assert linker.link("heart attack").stage is Stage.EXACT and builds == []
    typo, again = linker.link_many(["heart attak", "Crohns diseas"])
    assert (typo.stage, typo.concept_id, again.concept_id) == (Stage.DENSE, "MESH:D009203", "MESH:D003424")
    assert len(builds) == 1 and linker.config.nil_threshold == 0.5  # the built parts' settings are the linker's now
    assert linker.link("heart attack").stage is Stage.EXACT  # decided before the build, still cached and right
