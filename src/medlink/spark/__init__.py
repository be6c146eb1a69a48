"""medlink in Spark: link a column of a DataFrame (``link_column``) or write linked rows to Parquet so that a job
killed midway resumes without losing or duplicating a row (``link_to_parquet``); normalize the conditions
and interventions of ClinicalTrials.gov records held as JSON (``normalize_trials``); annotate the concept mentions
of a text column (``annotate_column``); encode a terminology's names on the executors into an index
(``build_index``). ``pip install 'medlink[spark]'``.
"""

from medlink.spark.annotation import annotate_column
from medlink.spark.columns import LINK_SCHEMA, link_column
from medlink.spark.index_build import build_index
from medlink.spark.partitions import link_to_parquet
from medlink.spark.trials import normalize_trials

__all__ = ["LINK_SCHEMA", "annotate_column", "build_index", "link_column", "link_to_parquet", "normalize_trials"]
