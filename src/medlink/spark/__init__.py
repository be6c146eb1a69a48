"""medlink in Spark: link a column of a DataFrame (``link_column``) or write linked rows to Parquet so that a job
killed midway resumes without losing or duplicating a row (``link_to_parquet``). ``pip install 'medlink[spark]'``.
"""

from medlink.spark.columns import LINK_SCHEMA, link_column
from medlink.spark.partitions import link_to_parquet

__all__ = ["LINK_SCHEMA", "link_column", "link_to_parquet"]
