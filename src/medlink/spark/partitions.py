"""``link_to_parquet``: linked rows written to Parquet one partition at a time, so a killed job resumes.

Rows are hash-partitioned by the mention column into a fixed number of partitions (repeats of a mention land
together, which is also what makes the linker's cache pay off); each partition is linked and written to a
temporary file beside its final name ``part-NNNNN.parquet``, then renamed. A rerun after a kill skips the
partitions whose file exists and redoes the rest, so no row is lost or written twice. ``_medlink_job.json``
records the column, partition count and linker, and a rerun with other ones is refused (it would split rows
differently); ``_SUCCESS`` marks a finished job.

The output folder must be a filesystem every worker can write and rename in (local disk in local mode, a shared
mount such as NFS on a cluster). For object stores, use :func:`medlink.spark.link_column` with Spark's own writer.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from medlink.errors import MedlinkError
from medlink.linking import LinkerConfig
from medlink.linking.spec import LinkerSpec, described
from medlink.spark.columns import output_schema, prepare_spec
from medlink.spark.workers import link_frame, worker_linker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

JOB_FILE = "_medlink_job.json"
SUCCESS = "_SUCCESS"
SUMMARY_SCHEMA = "partition int, rows long, written boolean"


def partition_file(folder: Path, partition: int) -> Path:
    return folder / f"part-{partition:05d}.parquet"


def link_to_parquet(
    df: DataFrame,
    column: str,
    output: Path | str,
    *,
    partitions: int | None = None,
    index: Path | str | None = None,
    terminology: Path | str | None = None,
    exact_only: bool = False,
    sieves: str | None = None,
    config: LinkerConfig | None = None,
    prefix: str = "",
) -> dict[str, int]:
    """Link ``column`` of ``df`` and write every row with its link columns (see ``link_column``) under
    ``output``; run again after a failure to finish the job. Returns counts: partitions written now, partitions
    found done, rows written now."""
    folder = Path(output)
    schema = output_schema(df, column, prefix)
    spec = prepare_spec(index, terminology, exact_only, sieves)
    count = partitions or max(df.rdd.getNumPartitions(), df.sparkSession.sparkContext.defaultParallelism)
    _claim_folder(
        folder,
        {
            "column": column,
            "partitions": count,
            "prefix": prefix,
            "linker": described(spec),
            "config": asdict(config) if config else None,
        },
    )
    (folder / SUCCESS).unlink(missing_ok=True)
    write = partial(
        _write_partitions,
        spec=spec,
        config=config,
        column=column,
        prefix=prefix,
        folder=str(folder),
        schema_json=schema.json(),
    )
    rows = df.repartition(count, column).mapInPandas(write, SUMMARY_SCHEMA).collect()
    done = sum(1 for row in rows if not row["written"])
    written = sum(1 for row in rows if row["written"])
    (folder / SUCCESS).touch()
    return {
        "partitions_written": written,
        "partitions_found_done": done,
        "rows_written": sum(row["rows"] for row in rows if row["written"]),
    }


def _claim_folder(folder: Path, job: dict) -> None:
    """Create ``folder`` for this job, or check that it holds an earlier run of the same job."""
    job = json.loads(json.dumps(job, default=str))  # as it reads back: tuples as lists, paths as text
    folder.mkdir(parents=True, exist_ok=True)
    recorded = folder / JOB_FILE
    if recorded.exists():
        earlier = json.loads(recorded.read_text())
        if earlier != job:
            changed = sorted(key for key in job if earlier.get(key) != job[key])
            raise MedlinkError(
                f"{folder} holds a job with other settings ({', '.join(changed)}): resuming it would "
                "split rows differently; write to a new folder or delete this one"
            )
    elif any(folder.glob("part-*.parquet")):
        raise MedlinkError(f"{folder} already holds Parquet parts of something else: write to a new folder")
    else:
        staged = folder / f".{JOB_FILE}.{uuid.uuid4().hex}"
        staged.write_text(json.dumps(job, indent=2) + "\n")
        os.replace(staged, recorded)
    for stale in folder.glob(".part-*.tmp"):  # left by a killed run
        stale.unlink(missing_ok=True)


def _write_partitions(
    batches: Iterator[pd.DataFrame],
    spec: LinkerSpec,
    config: LinkerConfig | None,
    column: str,
    prefix: str,
    folder: str,
    schema_json: str,
) -> Iterator[pd.DataFrame]:
    """The ``mapInPandas`` function: link this partition and write it atomically, unless it is already written."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark import TaskContext
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    context = TaskContext.get()
    if context is None:
        raise RuntimeError("write_partition runs inside a Spark task (mapInPandas), not on the driver")
    partition = context.partitionId()
    target = partition_file(Path(folder), partition)
    if target.exists():
        yield pd.DataFrame({"partition": [partition], "rows": [pq.read_metadata(target).num_rows], "written": [False]})
        return
    schema = to_arrow_schema(StructType.fromJson(json.loads(schema_json)))
    linker = worker_linker(spec, config)
    staged = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    rows = 0
    try:
        with pq.ParquetWriter(staged, schema) as writer:  # an empty partition still gets its (empty) file
            for frame in batches:
                linked = link_frame(frame, column, linker, prefix)
                writer.write_table(pa.Table.from_pandas(linked, schema=schema, preserve_index=False))
                rows += len(linked)
        with open(staged, "rb") as written:
            os.fsync(written.fileno())
        os.replace(staged, target)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    yield pd.DataFrame({"partition": [partition], "rows": [rows], "written": [True]})
