"""``annotate_column``: a DataFrame with the concept mentions found in one of its text columns (notes, abstracts,
eligibility criteria), annotated in Spark's workers with one linker per worker."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from medlink.errors import MedlinkError
from medlink.linking import LinkerConfig
from medlink.linking.annotation.annotator import AnnotatorConfig, with_span_sources
from medlink.linking.annotation.tagger import choose_tagger
from medlink.linking.mentions.branches import branches_for
from medlink.spark.columns import prepare_spec
from medlink.spark.workers import annotate_batches

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ANNOTATION_TYPE = (
    "array<struct<start:int,end:int,text:string,concepts:array<string>,preferred_names:array<string>,"
    "score:double,stage:string,negated:boolean,uncertain:boolean,reason:string>>"
)


def annotate_column(
    df: DataFrame,
    column: str,
    *,
    index: Path | str | None = None,
    terminology: Path | str | None = None,
    exact_only: bool = False,
    entity_type: str | None = None,
    context: bool = True,
    tagger: str = "auto",
    output: str = "annotations",
    config: LinkerConfig | None = None,
    corpus_lexicon: bool = True,
) -> DataFrame:
    """``df`` with ``output``: the mentions found in ``column``, each with offsets, concepts, preferred names,
    score, stage, negation, uncertainty and reason (``medlink annotate``'s fields). Lazy; the linker is the one
    ``Linker.load`` makes from the same arguments, loaded once per Python worker; ``tagger`` as for ``medlink
    annotate --tagger``; ``config``: the linker's settings (default: ``LinkerConfig()``, the index's calibration
    kept); ``corpus_lexicon``: use what public corpora teach (``medlink annotate --no-corpus-lexicon`` is
    ``False``), read once per worker."""
    from pyspark.sql.types import StringType, StructField, StructType, _parse_datatype_string

    if column not in df.columns:
        raise MedlinkError(f"no column {column!r} to annotate; the DataFrame has: {', '.join(df.columns)}")
    if not isinstance(df.schema[column].dataType, StringType):
        raise MedlinkError(f"column {column!r} holds {df.schema[column].dataType.simpleString()}, not text")
    if output in df.columns:
        raise MedlinkError(f"the DataFrame already has a column {output!r}: pass another output name")
    spec = prepare_spec(index, terminology, exact_only, None)
    branches = branches_for(entity_type) if entity_type else None
    annotation = with_span_sources(  # the corpus lexicon is the worker's own (workers.worker_corpus_lexicon)
        AnnotatorConfig(context=context, branches=branches, corpus_lexicon=corpus_lexicon),
        choose_tagger(tagger),
        None,
        entity_type,
    )
    schema = StructType([*df.schema.fields, StructField(output, _parse_datatype_string(ANNOTATION_TYPE))])
    work = partial(
        annotate_batches,
        spec=spec,
        settings=config,
        config=annotation,
        column=column,
        output=output,
        entity_type=entity_type,
    )
    return df.mapInPandas(work, schema)
