"""``link_column``: a DataFrame with the concepts of one of its string columns, linked in Spark's workers."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from medlink.errors import MedlinkError
from medlink.linking import LinkerConfig
from medlink.linking.spec import LinkerSpec, linker_spec
from medlink.spark.workers import link_batches

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

# The Spark types of the added columns, in the order workers.link_frame adds them.
LINK_SCHEMA = (
    ("concept_id", "string"),
    ("concepts", "array<string>"),
    ("preferred_name", "string"),
    ("score", "double"),
    ("stage", "string"),
    ("matched_name", "string"),
)


def link_column(
    df: DataFrame,
    column: str,
    *,
    index: Path | str | None = None,
    terminology: Path | str | None = None,
    exact_only: bool = False,
    sieves: str | None = None,
    config: LinkerConfig | None = None,
    prefix: str = "",
) -> DataFrame:
    """``df`` with link columns for the mentions in ``column`` (``concept_id``, ``concepts``, ``preferred_name``,
    ``score``, ``stage``, ``matched_name``, each after ``prefix``). Lazy, like every DataFrame transformation.

    The linker is the one ``Linker.load`` makes from the same arguments (default: the embedded MeSH default,
    exact → dense), loaded once per Python worker. On a cluster, ``index`` must be a path every worker can read.
    """
    spec = prepare_spec(index, terminology, exact_only, sieves)
    schema = output_schema(df, column, prefix)
    return df.mapInPandas(partial(link_batches, spec=spec, config=config, column=column, prefix=prefix), schema)


def prepare_spec(
    index: Path | str | None, terminology: Path | str | None, exact_only: bool, sieves: str | None
) -> LinkerSpec:
    """The spec workers build their linker from; the embedded default's index is built here, on the driver,
    so workers do not all build it at once."""
    spec = linker_spec(index, terminology=terminology, exact_only=exact_only, sieves=sieves)
    spec.warm(progress=False)
    return spec


def output_schema(df: DataFrame, column: str, prefix: str) -> StructType:
    """The schema of ``df`` with the link columns added, after checking that ``column`` can be linked."""
    from pyspark.sql.types import ArrayType, DoubleType, StringType, StructField, StructType

    if column not in df.columns:
        raise MedlinkError(f"no column {column!r} to link; the DataFrame has: {', '.join(df.columns)}")
    if not isinstance(df.schema[column].dataType, StringType):
        raise MedlinkError(
            f"column {column!r} holds {df.schema[column].dataType.simpleString()}, not strings: "
            f"cast it first (F.col({column!r}).cast('string'))"
        )
    types = {"string": StringType(), "double": DoubleType(), "array<string>": ArrayType(StringType())}
    added = [StructField(prefix + name, types[kind]) for name, kind in LINK_SCHEMA]
    taken = [field.name for field in added if field.name in df.columns]
    if taken:
        raise MedlinkError(f"the DataFrame already has {', '.join(taken)}: pass a prefix")
    return StructType([*df.schema.fields, *added])
