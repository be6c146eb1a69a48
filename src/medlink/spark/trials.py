"""``normalize_trials``: ClinicalTrials.gov records in a DataFrame column, their conditions and interventions
linked in Spark's workers (as ``medlink trials normalize`` links them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import pandas as pd

from medlink.errors import MedlinkError
from medlink.trials.normalization.normalizer_spec import NormalizerSpec, normalizer_in_process
from medlink.trials.records import TrialRecord

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def normalize_trials(df: DataFrame, column: str, spec: NormalizerSpec | None = None, prefix: str = "") -> DataFrame:
    """``df`` with ``nct_id``, ``normalized`` (the JSON ``medlink trials normalize`` writes for the record) and
    ``error`` (why a record could not be read, else null) for the API v2 study JSON in ``column``. ``spec``
    chooses the linkers and nil thresholds (default: the embedded MeSH default for both fields)."""
    from pyspark.sql.types import StringType, StructField, StructType

    spec = spec or NormalizerSpec()
    if column not in df.columns:
        raise MedlinkError(f"no column {column!r} of trial records; the DataFrame has: {', '.join(df.columns)}")
    for linker_spec in spec.linker_specs:  # the embedded defaults are built on the driver, once
        linker_spec.warm(progress=False)
    added = [StructField(prefix + name, StringType()) for name in ("nct_id", "normalized", "error")]
    schema = StructType([*df.schema.fields, *added])
    return df.mapInPandas(partial(_normalize_batches, spec=spec, column=column, prefix=prefix), schema)


def _normalize_batches(
    batches: Iterator[pd.DataFrame], spec: NormalizerSpec, column: str, prefix: str
) -> Iterator[pd.DataFrame]:
    from medlink.trials.readers import parse_api_study

    normalizer = normalizer_in_process(spec)  # one per Python worker, as workers.py explains
    for frame in batches:
        records: list[TrialRecord | None] = []
        errors: list[str | None] = []
        for text in frame[column]:
            try:
                records.append(parse_api_study(json.loads(text)))
                errors.append(None)
            except (TypeError, ValueError, KeyError, AttributeError) as error:  # one bad record, not a failed job
                records.append(None)
                errors.append(f"not a ClinicalTrials.gov API v2 study: {error}")
        normalized = iter(normalizer.normalize_batch([record for record in records if record is not None]))
        done = [next(normalized) if record is not None else None for record in records]
        out = frame.copy()
        out[prefix + "nct_id"] = [trial.nct_id if trial else None for trial in done]
        out[prefix + "normalized"] = [json.dumps(trial.to_dict()) if trial else None for trial in done]
        out[prefix + "error"] = errors
        yield out
