"""Gilda (``gilda`` 1.6) as its README runs it: a ``Grounder`` over the terminology's names (status ``name`` for a
preferred name, ``synonym`` for the rest), ``ground`` for a lone mention and ``gilda.ner.annotate`` for a document.
Its disambiguation models are not used: Gilda downloads them on first use, which cannot happen offline."""

from __future__ import annotations

from typing import Any


def grounder(concepts: list[dict[str, Any]]) -> Any:
    from gilda import Grounder
    from gilda.process import normalize
    from gilda.term import Term

    terms = []
    for concept in concepts:
        db, _, local = concept["id"].partition(":")
        for position, name in enumerate(concept["names"]):
            if normalize(name).strip():
                status = "name" if position == 0 else "synonym"
                terms.append(Term(normalize(name), name, db, local, concept["names"][0], status, "medlink"))
    found = Grounder(terms)
    # An empty table is what Grounder.disambiguate reads as "loaded, none for this text": no download.
    found.gilda_disambiguators = {}
    found.adeft_disambiguators = {}
    return found


def linker(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    names = grounder(concepts)

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for mention in mentions:
            ranked = list(dict.fromkeys(f"{m.term.db}:{m.term.id}" for m in names.ground(mention["text"])))
            answers.append({"concepts": ranked[:1], "ranked": ranked})
        return answers

    return rank


def annotator(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    from gilda.ner import annotate

    names = grounder(concepts)

    def spans(documents: list[dict[str, Any]]) -> list[list[list[Any]]]:
        found = []
        for document in documents:
            found.append(
                [
                    [a.start, a.end, f"{a.matches[0].term.db}:{a.matches[0].term.id}"]
                    for a in annotate(document["text"], grounder=names)
                    if a.matches
                ]
            )
        return found

    return spans
