"""Clinical trials: ClinicalTrials.gov records read into one typed record, normalized to terminology concepts
(``normalization/``) and matched to patients (``matching/``).

``records``: the :class:`TrialRecord` schema; ``criteria``: eligibility text split into inclusion and exclusion
criteria; ``readers``: the legacy XML (folders, ``.zip``, ``.tar.gz``) and API v2 JSON formats, streamed.
"""

from medlink.trials.records import Intervention, TrialRecord

__all__ = ["Intervention", "TrialRecord"]
