"""One system linking one dataset's mentions in a process of its own: ``python peer_process.py REQUEST.json``.

Imports nothing of medlink unless the system is medlink itself, so it runs under the Python of a virtualenv that
holds only a peer. The request names the system, its files (the terminology as JSON Lines, a UMLS-style folder for
QuickUMLS, the mentions) and where to write the answer: per mention the concepts claimed (``[]``: nil) and the
candidates ranked; then start-up and linking times. A peer that cannot run writes why instead.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# mentions -> per mention {"concepts": claimed ([] for nil), "ranked": candidates best first, "parts": [...]}
Ranker = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def concepts(path: str) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def gilda_ranker(request: dict[str, Any]) -> Ranker:
    """Gilda's Grounder over the terminology's names (status ``name`` for preferred names, ``synonym`` for the
    rest), grounding each mention alone: no context, so its disambiguation models (downloads) are never used."""
    from gilda import Grounder
    from gilda.process import normalize
    from gilda.term import Term

    terms = []
    for concept in concepts(request["terminology"]):
        db, _, local = concept["id"].partition(":")
        for position, name in enumerate(concept["names"]):
            if normalize(name).strip():
                terms.append(
                    Term(
                        normalize(name),
                        name,
                        db,
                        local,
                        concept["names"][0],
                        "name" if position == 0 else "synonym",
                        "medlink",
                    )
                )
    grounder = Grounder(terms)

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for mention in mentions:
            ranked = list(dict.fromkeys(f"{m.term.db}:{m.term.id}" for m in grounder.ground(mention["text"])))
            answers.append({"concepts": ranked[:1], "ranked": ranked})
        return answers

    return rank


def quickumls_ranker(request: dict[str, Any]) -> Ranker:
    """QuickUMLS installed from the MRCONSO/MRSTY export (its own ``quickumls.install``), then its ``match`` on
    each mention with its defaults (Jaccard, threshold 0.7, window 5, best match)."""
    import subprocess

    from quickumls import QuickUMLS

    database = Path(request["work"]) / "quickumls"
    if not (database / "database_backend.flag").exists():
        database.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "quickumls.install", "-L", "-U", request["umls"], str(database)],
            input="y\n",
            text=True,
            capture_output=True,
        )
        if done.returncode != 0:
            said = [line for line in done.stderr.splitlines() if line.strip()] or ["no message"]
            raise RuntimeError(f"quickumls.install failed: {said[-1][:300]}")
    matcher = QuickUMLS(str(database), accepted_semtypes=None)
    cui_to_id = dict(json.loads(Path(request["umls"], "ids.json").read_text(encoding="utf-8")))

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for mention in mentions:
            found = [match for group in matcher.match(mention["text"], best_match=True) for match in group]
            found.sort(key=lambda match: -match["similarity"])
            ranked = list(dict.fromkeys(cui_to_id[match["cui"]] for match in found))
            answers.append({"concepts": ranked[:1], "ranked": ranked})
        return answers

    return rank


def scispacy_ranker(request: dict[str, Any]) -> Ranker:
    """scispaCy's TF-IDF character 3-gram ANN ``CandidateGenerator`` over a ``KnowledgeBase`` of the terminology,
    scored as its ``EntityLinker`` does by default (k 30, threshold 0.7, at most 5 per mention), except that the
    definition filter is off: these terminologies carry few definitions, and the filter would drop most concepts."""
    from scispacy.candidate_generation import CandidateGenerator, create_tfidf_ann_index
    from scispacy.linking_utils import Entity, KnowledgeBase

    entities = [
        Entity(concept["id"], concept["names"][0], concept["names"][1:]) for concept in concepts(request["terminology"])
    ]
    kb = KnowledgeBase(entities)
    folder = Path(request["work"]) / "scispacy"
    folder.mkdir(parents=True, exist_ok=True)
    aliases, vectorizer, index = create_tfidf_ann_index(str(folder), kb)
    generator = CandidateGenerator(index, vectorizer, aliases, kb)
    threshold = request.get("threshold") or 0.7

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for candidates in generator([mention["text"] for mention in mentions], 30):
            scored = sorted(((max(c.similarities), c.concept_id) for c in candidates), reverse=True)
            ranked = [concept_id for _, concept_id in scored]
            claimed = [concept_id for score, concept_id in scored if score > threshold][:1]
            answers.append({"concepts": claimed, "ranked": ranked})
        return answers

    return rank


def medlink_ranker(request: dict[str, Any]) -> Ranker:
    """medlink as the benchmark's own rows run it: the dataset's compiled terminology, its index, its sieves."""
    from medlink.encoders import load_encoder
    from medlink.evaluation.runner import prediction_of
    from medlink.index import VectorIndex
    from medlink.linking import LinkerConfig, Mention
    from medlink.linking.linker import Linker
    from medlink.linking.pipeline import dense_parts
    from medlink.terminology import load_terminology

    terminology = load_terminology(Path(request["terminology_dir"]))
    parts = dense_parts(
        terminology,
        VectorIndex.load(Path(request["index"])),
        load_encoder(request["encoder"]),
        request["sieves"],
        LinkerConfig(nil_threshold=request.get("threshold") or 0.0),
    )
    linker = Linker.from_parts(parts)

    def as_dict(prediction: Any) -> dict[str, Any]:
        return {
            "concepts": list(prediction.concepts),
            "ranked": list(prediction.ranked),
            "parts": [as_dict(part) for part in prediction.parts],
        }

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = linker.link_many([Mention(m["text"], m.get("document")) for m in mentions])
        return [as_dict(prediction_of(result)) for result in results]

    return rank


RANKERS = {"gilda": gilda_ranker, "quickumls": quickumls_ranker, "scispacy": scispacy_ranker, "medlink": medlink_ranker}
DISTRIBUTIONS = {"gilda": "gilda", "quickumls": "medspacy-quickumls", "scispacy": "scispacy", "medlink": "medlink"}


def version_of(system: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTIONS[system])
    except PackageNotFoundError:
        return None


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    answer: dict[str, Any] = {"system": request["system"], "version": version_of(request["system"])}
    try:
        started = time.perf_counter()
        rank = RANKERS[request["system"]](request)
        answer["startup_seconds"] = time.perf_counter() - started
        mentions = list(concepts(request["mentions"]))
        started = time.perf_counter()
        answer["predictions"] = rank(mentions)
        answer["link_seconds"] = time.perf_counter() - started
    except Exception as error:  # a peer that cannot run here: the report says why in its row
        answer["unavailable"] = f"{type(error).__name__}: {error}".strip()[:500]
        answer["traceback"] = traceback.format_exc()[-4000:]
    answer["peak_rss_mb"] = peak_rss_mb()
    Path(request["answer"]).write_text(json.dumps(answer), encoding="utf-8")


def peak_rss_mb() -> float | None:
    """This process's own peak resident memory (``VmHWM``: reset by exec, unlike ``ru_maxrss``, which a child
    inherits from the parent that forked it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    main()
