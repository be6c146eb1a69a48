"""The JSON API's routes (the web pages are ``web/pages.py``; ``/health`` and ``/metrics``, ``app.py``): each
checks its request, hands the work to the :class:`ServiceCore`, and answers with results or says why not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from medlink.errors import MedlinkError
from medlink.linking import Mention
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.serve.answers import ERRORS, TextJSONResponse, busy, check_batch, refuse
from medlink.serve.busy import Busy
from medlink.serve.core import NO_TRIAL_INDEX, ServiceCore
from medlink.serve.schemas import ConceptOut, LinkResponse, RequestModels
from medlink.serve.text_checks import text_problems
from medlink.serve.work import annotator_config


def add_api_routes(app: FastAPI, core: ServiceCore, models: RequestModels) -> None:
    _add_linking(app, core, models)
    _add_trials(app, core, models)
    _add_annotation(app, core, models)


def _add_linking(app: FastAPI, core: ServiceCore, models: RequestModels) -> None:
    settings, linker = core.settings, core.linker

    @app.post("/v1/link", responses={200: {"model": LinkResponse}, **ERRORS})
    @_body(models.link)
    async def link(body: Any) -> JSONResponse:
        """Link a batch of mentions; concurrent requests share encoder batches, one mention of each in turn."""
        check_batch(len(body.mentions), settings.max_batch, "mentions")
        mentions = [_mention(item, body.document) for item in body.mentions]
        problems = text_problems(mentions, linker.config.max_mention_chars, settings.max_document_chars)
        if problems:
            return refuse(422, "a mention or document is over its limit or not text", problems)
        try:
            results = await core.link(mentions)
        except Busy as error:
            return busy(str(error))
        return TextJSONResponse({"results": [result.to_dict() for result in results]})

    @app.get("/v1/concepts/{concept_id}", response_model=ConceptOut, responses=ERRORS)
    async def concept(concept_id: str) -> dict[str, Any]:
        """A concept of the linker's terminology (alternative ids resolve to their concept)."""
        found = linker.terminology.get(concept_id)
        if found is None:
            raise HTTPException(404, f"unknown concept id {concept_id!r} in this terminology")
        return {
            "id": found.id,
            "preferred_name": found.preferred_name,
            "names": [{"text": name.text, "kind": str(name.kind)} for name in found.names],
            "semantic_types": list(found.semantic_types),
            "parents": list(found.parents),
            "tree_numbers": list(found.tree_numbers),
            "alt_ids": list(found.alt_ids),
            "xrefs": list(found.xrefs),
            "definition": found.definition,
            "source": found.source,
        }


def _add_trials(app: FastAPI, core: ServiceCore, models: RequestModels) -> None:
    settings, matcher = core.settings, core.matcher

    @app.post("/v1/trials/normalize", responses=ERRORS)
    @_body(models.trials)
    async def normalize_trials(body: Any) -> JSONResponse:
        """Conditions and interventions of ClinicalTrials.gov API v2 studies, linked (as ``medlink trials
        normalize`` writes them)."""
        from medlink.trials.readers import parse_api_study

        check_batch(len(body.records), settings.max_batch, "records")
        records, problems = [], []
        for position, study in enumerate(body.records):
            try:
                records.append(parse_api_study(study.model_dump()))
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                problems.append(f"records[{position}]: {error}")
        if problems:
            return refuse(422, "a record is not a ClinicalTrials.gov API v2 study", problems)
        try:
            normalized = await core.normalize(records)
        except Busy as error:
            return busy(str(error))
        return TextJSONResponse({"records": [trial.to_dict() for trial in normalized]})

    @app.post("/v1/trials/match", responses=ERRORS)
    @_body(models.match)
    async def match_trials(body: Any) -> JSONResponse:
        """The trials of the service's trial index ranked for a patient note, each with why (as ``medlink trials
        match --format json`` prints them)."""
        if matcher is None:
            raise HTTPException(404, NO_TRIAL_INDEX)
        from medlink.trials.matching.notes import read_note

        problems = text_problems([body.note], settings.max_note_chars, None, "note")
        if problems:
            return refuse(422, "the note is over its limit or not text", problems)
        try:
            read_note(body.note)  # what is wrong with the note itself is the client's to fix: 422, not a fault
        except MedlinkError as error:
            return refuse(422, str(error))
        try:
            result = await core.match(body.note, body.top)
        except Busy as error:
            return busy(str(error))
        return TextJSONResponse(result.to_dict())


def _add_annotation(app: FastAPI, core: ServiceCore, models: RequestModels) -> None:
    settings, linker = core.settings, core.linker

    @app.post("/v1/annotate", responses=ERRORS)
    @_body(models.annotate)
    async def annotate(body: Any) -> JSONResponse:
        """Every concept mention of each document, linked, with offsets and whether it is negated or uncertain
        (as ``medlink annotate`` writes them)."""
        check_batch(len(body.documents), settings.max_batch, "documents")
        texts = [document.text for document in body.documents]
        problems = text_problems(texts, settings.max_document_chars, None, "documents")
        if problems:
            return refuse(422, "a document is over its limit or not text", problems)
        try:
            annotator_config(
                linker, AnnotatorConfig(), body.context, body.entity_type
            )  # refused here, with what to change
        except MedlinkError as error:
            return refuse(422, str(error))
        try:
            found = await core.annotate(texts, body.context, body.entity_type)
        except Busy as error:
            return busy(str(error))
        return TextJSONResponse(
            {
                "documents": [
                    {"id": document.id, "annotations": [a.to_dict() for a in annotated]}
                    for document, annotated in zip(body.documents, found, strict=True)
                ]
            }
        )


def _body(model: type) -> Callable[[Callable], Callable]:
    """Give a route's ``body`` parameter its request model: a class made for this service's limits, which FastAPI
    reads from the annotation (set here, since a string annotation would not resolve to a local class)."""

    def annotate(route: Callable) -> Callable:
        route.__annotations__["body"] = model
        return route

    return annotate


def _mention(item: Any, shared_document: str | None) -> str | Mention:
    if not isinstance(item, str):  # a MentionIn
        return Mention(item.text, item.document if item.document is not None else shared_document)
    return Mention(item, shared_document) if shared_document else item  # plain text: cached by its text
