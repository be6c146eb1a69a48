"""Other systems' rankings of a judged collection, to score beside medlink with the same judgements: a JSON file
``{"systems": {name: {patient id: [trial ids, best first]}}}`` (the form of the rankings BIRCO published for
SIGIR 2016 test_shared). Every system must rank exactly the collection's judged patients; a file that does not is
refused with the patients that differ."""

from __future__ import annotations

import json
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.trials.matching.metrics import Qrels, Run

SHOWN = 5  # patient ids named in an error before "and N more"


def read_peer_rankings(path: Path, qrels: Qrels, collection: str) -> dict[str, Run]:
    """Each system's ranking as a run (score = places from the bottom, so its order is kept)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise MedlinkError(f"{path}: cannot read the peers' rankings ({error})") from None
    except json.JSONDecodeError as error:
        raise MedlinkError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    systems = data.get("systems") if isinstance(data, dict) else None
    if not isinstance(systems, dict) or not systems:
        raise MedlinkError(f'{path}: expected {{"systems": {{name: {{patient id: [trial ids]}}}}}}')
    runs: dict[str, Run] = {}
    for name, ranking in systems.items():
        if not isinstance(ranking, dict) or not all(isinstance(v, list) for v in ranking.values()):
            raise MedlinkError(f"{path}: system {name!r}: expected {{patient id: [trial ids, best first]}}")
        _check_patients(path, name, set(ranking), set(qrels), collection)
        runs[name] = {
            patient: {str(trial): float(len(trials) - place) for place, trial in enumerate(trials)}
            for patient, trials in ranking.items()
        }
    return runs


def _check_patients(path: Path, name: str, ranked: set[str], judged: set[str], collection: str) -> None:
    if ranked == judged:
        return
    problems = []
    for what, ids in (
        ("ranks patients the collection does not judge", ranked - judged),
        ("leaves out judged patients", judged - ranked),
    ):
        if ids:
            listed = ", ".join(sorted(ids)[:SHOWN]) + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")
            problems.append(f"{what}: {listed}")
    raise MedlinkError(
        f"{path}: system {name!r} does not match {collection}: {'; '.join(problems)} "
        f"(peers' rankings are for the collection they were made on)"
    )
