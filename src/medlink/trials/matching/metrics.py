"""TREC run files and the measures of trial retrieval, computed by ``ir_measures`` (trec_eval's definitions).

NDCG@10 uses the graded judgements (0, 1, 2). P@10, MRR, R-precision and Recall@100 count grade ≥ 1 as relevant
(trec_eval's default); ``P@10(eligible)`` counts grade 2 only, the stricter reading of TREC CT.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from medlink.errors import MedlinkError

Run = Mapping[str, Mapping[str, float]]  # patient → trial → score
Qrels = Mapping[str, Mapping[str, int]]  # patient → trial → grade

MEASURES = {
    "ndcg@10": "nDCG@10",
    "p@10": "P@10",
    "p@10(eligible)": "P(rel=2)@10",
    "mrr": "RR",
    "r-prec": "Rprec",
    "recall@100": "R@100",
}


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean of each measure over the judged patients (a patient the run leaves out scores 0)."""
    import ir_measures

    measures = {name: ir_measures.parse_measure(spec) for name, spec in MEASURES.items()}
    judged = [ir_measures.Qrel(q, t, g) for q, trials in qrels.items() for t, g in trials.items()]
    scored = [ir_measures.ScoredDoc(q, t, float(s)) for q, trials in run.items() for t, s in trials.items()]
    totals = dict.fromkeys(measures.values(), 0.0)
    # Averaged here over every judged patient: whether a patient the run leaves out counts as 0 differs between
    # ir_measures' back ends, and it must.
    for metric in ir_measures.iter_calc(list(measures.values()), judged, scored):
        if metric.query_id in qrels:
            totals[metric.measure] += float(metric.value)
    return {name: round(totals[measure] / max(1, len(qrels)), 4) for name, measure in measures.items()}


def per_patient(run: Run, qrels: Qrels, measure: str = "ndcg@10") -> dict[str, float]:
    """One measure for each judged patient (0 for a patient the run leaves out), for paired tests."""
    import ir_measures

    metric = ir_measures.parse_measure(MEASURES[measure])
    judged = [ir_measures.Qrel(q, t, g) for q, trials in qrels.items() for t, g in trials.items()]
    scored = [ir_measures.ScoredDoc(q, t, float(s)) for q, trials in run.items() for t, s in trials.items()]
    values = dict.fromkeys(qrels, 0.0)
    for found in ir_measures.iter_calc([metric], judged, scored):
        if found.query_id in values:
            values[found.query_id] = float(found.value)
    return values


def write_run(run: Run, path: Path | str, tag: str = "medlink") -> Path:
    """A standard TREC run file (``qid Q0 docid rank score tag``), written to a temporary file then renamed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", encoding="utf-8") as out:
        for patient, trials in run.items():
            ranked = sorted(trials.items(), key=lambda item: (-item[1], item[0]))
            for rank, (trial, score) in enumerate(ranked, start=1):
                out.write(f"{patient} Q0 {trial} {rank} {score:.6f} {tag}\n")
    partial.replace(path)
    return path


def read_run(path: Path | str) -> dict[str, dict[str, float]]:
    path = Path(path)
    run: dict[str, dict[str, float]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise MedlinkError(f"{path}: cannot read the run file ({error})") from None
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            patient, _, trial, _, score = fields[:5]
            run.setdefault(patient, {})[trial] = float(score)
        except ValueError:
            raise MedlinkError(f"{path}:{number}: expected 'qid Q0 docid rank score tag'") from None
    return run
