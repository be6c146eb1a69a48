"""Trial records normalized (DILBERT §3, §5): each record's conditions and interventions linked to terminology
concepts by medlink's linker.

``interventions``: what an intervention string needs before linking (dosage stripped, combinations split, placebo
recognized); ``conditions``: the branches conditions may link to; ``normalizer``: records in, one row of linked
conditions and interventions per record out; ``normalizer_spec``: which linkers, as a small picklable description;
``run``: a whole file or archive normalized, with workers and resumption; ``output``: rows written to JSON Lines or
Parquet, resumably; ``browse_terms``: scores against NLM's MeSH browse terms; ``thresholds``: per-field nil
thresholds calibrated on them.
"""
