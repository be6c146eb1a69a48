"""Test collections for patient-to-trial matching, read in their published formats.

- **BIRCO** (``{"query": {id: note}, "corpus": {nct_id: text}, "qrel": {id: {nct_id: grade}}}``): the SIGIR 2016
  collection of Koopman & Zuccon as BIRCO packages it; a trial is a text, judged per patient in a pool.
- **TREC Clinical Trials 2021/2022** as TrialGPT packages it: ``queries.jsonl`` (``{"_id", "text"}``) and
  ``qrels/test.tsv`` (``query-id  corpus-id  score`` with a header). Grades: 0 not relevant, 1 excluded,
  2 eligible. The 375k-trial corpus is not part of it: trials come from records the user has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError


@dataclass(frozen=True)
class Collection:
    """Patients, their graded judgements, and trial texts when the collection carries them (BIRCO)."""

    name: str
    notes: dict[str, str]
    qrels: dict[str, dict[str, int]]
    trial_texts: dict[str, str]

    def judged(self, trials: set[str] | None = None) -> Collection:
        """Only judgements of ``trials`` (the trials at hand), and only patients left with one."""
        if trials is None:
            return self
        qrels = {q: {t: g for t, g in docs.items() if t in trials} for q, docs in self.qrels.items()}
        qrels = {q: docs for q, docs in qrels.items() if docs}
        return Collection(self.name, {q: self.notes[q] for q in qrels}, qrels, self.trial_texts)


def read_birco(path: Path | str) -> Collection:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MedlinkError(f"{path}: not a readable BIRCO JSON file ({error})") from None
    missing = [key for key in ("query", "corpus", "qrel") if not isinstance(data, dict) or key not in data]
    if missing:
        raise MedlinkError(f"{path}: a BIRCO file needs the keys query, corpus and qrel; missing {', '.join(missing)}")
    qrels = {str(q): {str(t): int(g) for t, g in docs.items()} for q, docs in data["qrel"].items()}
    unknown = sorted(q for q in qrels if q not in data["query"])
    if unknown:
        raise MedlinkError(f"{path}: judgements for patients with no query text: {', '.join(unknown[:5])}")
    return Collection(
        path.stem,
        {str(k): str(v) for k, v in data["query"].items()},
        qrels,
        {str(k): str(v) for k, v in data["corpus"].items()},
    )


def read_trec(folder: Path | str) -> Collection:
    folder = Path(folder)
    queries, qrels_file = folder / "queries.jsonl", folder / "qrels" / "test.tsv"
    for needed in (queries, qrels_file):
        if not needed.is_file():
            raise MedlinkError(
                f"{folder}: a TREC CT folder needs queries.jsonl and qrels/test.tsv; {needed} is missing"
            )
    notes: dict[str, str] = {}
    for number, line in enumerate(queries.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            notes[str(row["_id"])] = str(row["text"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise MedlinkError(f"{queries}:{number}: expected a JSON object with _id and text") from None
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(qrels_file.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split("\t")
        if number == 1 and not fields[-1].strip().lstrip("-").isdigit():
            continue  # the header
        if len(fields) != 3 or not fields[2].strip().lstrip("-").isdigit():
            raise MedlinkError(
                f"{qrels_file}:{number}: expected query-id, corpus-id and an integer grade, tab-separated"
            )
        qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    unknown = sorted(q for q in qrels if q not in notes)
    if unknown:
        raise MedlinkError(f"{qrels_file}: judgements for topics missing from queries.jsonl: {', '.join(unknown[:5])}")
    return Collection(folder.name, notes, qrels, {})
