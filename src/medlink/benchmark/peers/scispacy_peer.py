"""scispaCy's TF-IDF character 3-gram ANN ``CandidateGenerator`` over a ``KnowledgeBase`` of the terminology,
scored as its ``EntityLinker`` does by default (k 30, threshold 0.7, at most 5 per mention), except that the
definition filter is off: these terminologies carry few definitions, and the filter would drop most concepts.
Its index is built once per terminology by its own ``create_tfidf_ann_index`` and loaded by its ``LinkerPaths``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BUILD = 1  # the recipe below; raise it when the build changes, so that indexes built before are not loaded


def _kb(concepts: list[dict[str, Any]]) -> Any:
    from scispacy.linking_utils import Entity, KnowledgeBase

    return KnowledgeBase([Entity(c["id"], c["names"][0], c["names"][1:]) for c in concepts])


def build(request: dict[str, Any], concepts: list[dict[str, Any]], into: Path) -> None:
    from scispacy.candidate_generation import create_tfidf_ann_index

    create_tfidf_ann_index(str(into), _kb(concepts))


def linker(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    from scispacy.candidate_generation import CandidateGenerator, LinkerPaths

    aliases, vectorizer, index = LinkerPaths.from_directory(request["built"]).load()
    generator = CandidateGenerator(index, vectorizer, aliases, _kb(concepts))
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
