"""``build_index``: encode a terminology's names on Spark executors, then assemble the index on the driver.

The work folder is the one a local ``medlink index build`` resumes from (``.NAME.building`` beside the output,
with its plan and ``chunks/NNNNN.npy``): each Spark task encodes one chunk with an encoder loaded once per Python
worker and renames the finished file into place, and the driver then runs the ordinary build, which finds every
chunk encoded and only assembles the index. So a killed job, rerun, encodes only the chunks that have no file yet,
and a build begun on Spark can be finished on one machine or the other way round.

The output's folder must be a filesystem every executor can write and rename in (local disk in local mode, a
shared mount such as NFS on a cluster), as for :func:`medlink.spark.link_to_parquet`.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlink.encoders import load_encoder
from medlink.encoders.base import Encoder
from medlink.index import build_index as build_locally
from medlink.index import ontology_entries
from medlink.index.build import DEFAULT_CHUNK, build_plan, chunk_path, encode_chunk, prepare_workdir, workdir_of
from medlink.terminology import load_terminology

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TEXTS_FILE = "texts.arrow"


def build_index(spark: SparkSession, terminology: Path | str, output: Path | str, *, encoder: str = "medlink",
                quantize: str = "int8", kind: str = "auto", chunk_size: int = DEFAULT_CHUNK,
                threads_per_task: int = 1) -> dict[str, float]:  # fmt: skip
    """Index every distinct name of the compiled ``terminology`` into ``output``, encoding on the executors.
    Returns counts (chunks encoded now, chunks found encoded by an earlier run, names) and the seconds spent
    encoding on the executors and assembling on the driver."""
    import pyarrow as pa

    terminology_dir, output = Path(terminology), Path(output)
    loaded = load_terminology(terminology_dir)
    model = load_encoder(encoder, quantize=quantize)
    entries = ontology_entries(loaded)
    workdir = workdir_of(output)
    prepare_workdir(workdir, build_plan(entries, model, chunk_size, loaded.fingerprint(), range(len(entries))))
    texts = workdir / TEXTS_FILE
    if not texts.exists():  # the executors read their chunk's names from here, not from the task closure
        table = pa.table({"text": pa.array([entry.text for entry in entries], pa.large_string())})
        partial = texts.with_suffix(".partial")
        with pa.OSFile(str(partial), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        partial.replace(texts)
    count = -(-len(entries) // chunk_size)
    missing = [number for number in range(count) if not chunk_path(workdir, number).exists()]
    started = time.perf_counter()
    if missing:
        task = functools.partial(_encode_task, workdir=str(workdir), encoder=encoder, quantize=quantize,
                                 chunk_size=chunk_size, threads=threads_per_task)  # fmt: skip
        spark.sparkContext.parallelize(missing, len(missing)).foreach(task)
    encoded = time.perf_counter() - started
    origin = {"encoder": encoder, "backend": "onnx", "terminology": str(terminology_dir.resolve())}
    build_locally(entries, model, output, loaded.fingerprint(), kind=kind, chunk_size=chunk_size, origin=origin)
    return {"encoded": len(missing), "found": count - len(missing), "names": len(entries),
            "encode_seconds": round(encoded, 1), "assemble_seconds": round(time.perf_counter() - started - encoded, 1)}


@functools.cache
def worker_encoder(name: str, quantize: str, threads: int) -> Encoder:
    """One encoder per Python worker (Spark reuses workers across tasks)."""
    return load_encoder(name, quantize=quantize, threads=threads)


def _encode_task(number: int, *, workdir: str, encoder: str, quantize: str, chunk_size: int, threads: int) -> None:
    import pyarrow as pa

    folder = Path(workdir)
    if chunk_path(folder, number).exists():  # a speculative or retried task found it done
        return
    column: Any = pa.ipc.open_file(pa.memory_map(str(folder / TEXTS_FILE))).read_all().column("text")
    texts = column.slice(number * chunk_size, chunk_size).to_pylist()
    encode_chunk(worker_encoder(encoder, quantize, threads), texts, folder, number)
