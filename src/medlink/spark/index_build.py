"""``build_index``: encode a terminology's names on Spark executors, then assemble the index on the driver.

The work folder is the one a local ``medlink index build`` resumes from (``.NAME.building`` beside the output,
with its plan and ``chunks/NNNNN.npy``): each Spark task encodes one chunk with an encoder loaded once per Python
worker and renames the finished file into place, and the driver then runs the ordinary build, which finds every
chunk encoded and only assembles the index. So a killed job, rerun, encodes only the chunks that have no file yet,
and a build begun on Spark can be finished on one machine or the other way round.

Executors read the names and write the chunks through a :class:`~medlink.spark.shard_store.ShardStore`: by default
the work folder itself, which must then be a filesystem every executor can write and rename in (local disk in local
mode, a shared mount such as NFS on a cluster); with ``shards`` any filesystem pyarrow reaches (``hdfs://``,
``s3://``, ``gs://``, …), from which the driver copies the chunks into its work folder before assembling.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING

from medlink.encoders import load_encoder
from medlink.encoders.base import Encoder
from medlink.index import build_index as build_locally
from medlink.index import ontology_entries
from medlink.index.build import DEFAULT_CHUNK, build_plan, chunk_path, prepare_workdir, workdir_of
from medlink.spark.shard_store import ShardStore
from medlink.terminology import load_terminology

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def build_index(
    spark: SparkSession,
    terminology: Path | str,
    output: Path | str,
    *,
    encoder: str = "medlink",
    quantize: str = "int8",
    kind: str = "auto",
    chunk_size: int = DEFAULT_CHUNK,
    threads_per_task: int = 1,
    shards: str | None = None,
) -> dict[str, float]:
    """Index every distinct name of the compiled ``terminology`` into ``output``, encoding on the executors.
    ``shards``: where the executors read the names and write the chunks (a folder or a filesystem URI such as
    ``hdfs://namenode/medlink/shards``; default: the build's work folder beside ``output``). Returns counts (chunks
    encoded now, chunks found encoded by an earlier run, names) and the seconds spent encoding on the executors and
    assembling on the driver."""
    terminology_dir, output = Path(terminology), Path(output)
    loaded = load_terminology(terminology_dir)
    model = load_encoder(encoder, quantize=quantize)
    entries = ontology_entries(loaded)
    workdir = workdir_of(output)
    plan = build_plan(entries, model, chunk_size, loaded.fingerprint(), range(len(entries)))
    prepare_workdir(workdir, plan)
    store = ShardStore(shards or str(workdir))
    store.claim(plan)
    store.write_names([entry.text for entry in entries], chunk_size)  # read by the executors, not sent in closures
    count = -(-len(entries) // chunk_size)
    found = store.encoded() | {number for number in range(count) if chunk_path(workdir, number).exists()}
    missing = [number for number in range(count) if number not in found]
    started = time.perf_counter()
    if missing:
        task = functools.partial(
            _encode_task, store=store, encoder=encoder, quantize=quantize, threads=threads_per_task
        )
        spark.sparkContext.parallelize(missing, len(missing)).foreach(task)
    for number in range(count):
        store.fetch(number, chunk_path(workdir, number))
    encoded = time.perf_counter() - started
    origin = {"encoder": encoder, "backend": "onnx", "terminology": str(terminology_dir.resolve())}
    build_locally(entries, model, output, loaded.fingerprint(), kind=kind, chunk_size=chunk_size, origin=origin)
    if shards:
        store.clear()
    return {
        "encoded": len(missing),
        "found": count - len(missing),
        "names": len(entries),
        "encode_seconds": round(encoded, 1),
        "assemble_seconds": round(time.perf_counter() - started - encoded, 1),
    }


@functools.cache
def worker_encoder(name: str, quantize: str, threads: int) -> Encoder:
    """One encoder per Python worker (Spark reuses workers across tasks)."""
    return load_encoder(name, quantize=quantize, threads=threads)


def _encode_task(number: int, *, store: ShardStore, encoder: str, quantize: str, threads: int) -> None:
    if store.has(number):  # a speculative or retried task found it done
        return
    store.put_chunk(number, worker_encoder(encoder, quantize, threads).encode(store.names_of(number)))
