"""Clinical trials: ClinicalTrials.gov records read into one typed record, and their conditions and interventions
normalized to terminology concepts by medlink's linker (DILBERT §3, §5).

``records``: the :class:`TrialRecord` schema; ``criteria``: eligibility text split into inclusion and exclusion
criteria; ``readers``: the legacy XML (folders, ``.zip``, ``.tar.gz``) and API v2 JSON formats, streamed;
``interventions``: what an intervention string needs before linking (dosage stripped, combinations split, placebo
recognized); ``normalize``: records in, one row of linked conditions and interventions per record out;
``output``: those rows written to JSON Lines or Parquet, resumably; ``evaluation``: scores against NLM's browse terms.
"""

from medlink.trials.records import Intervention, TrialRecord

__all__ = ["Intervention", "TrialRecord"]
