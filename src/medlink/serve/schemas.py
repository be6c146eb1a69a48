"""What requests carry and what responses look like (also the OpenAPI schema at ``/docs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class CandidateOut(BaseModel):
    concept_id: str
    name: str
    score: float


class LinkResultOut(BaseModel):
    mention: str
    concepts: list[str] = Field(description="Linked concept ids, best first; empty for nil and empty mentions.")
    score: float | None
    stage: str = Field(description="exact, dense, sparse, hybrid, composite, nil or empty.")
    strategy: str
    matched_name: str | None
    preferred_names: list[str]
    ambiguous: bool
    several: bool
    reason: str = Field(description="Why this result, in words (also why a mention is nil).")
    candidates: list[CandidateOut]
    parts: list[dict[str, Any]]


class LinkResponse(BaseModel):
    results: list[LinkResultOut]


class NameOut(BaseModel):
    text: str
    kind: str


class ConceptOut(BaseModel):
    id: str
    preferred_name: str
    names: list[NameOut]
    semantic_types: list[str]
    parents: list[str]
    tree_numbers: list[str]
    alt_ids: list[str]
    xrefs: list[str]
    definition: str | None
    source: str


class ErrorOut(BaseModel):
    error: str
    problems: list[str] = []


# What the service reads of a ClinicalTrials.gov API v2 study, typed as it reads it; other fields pass as they are.
class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class IdentificationModule(_Open):
    nctId: str = Field(min_length=1, description="The record's NCT id.")
    officialTitle: str | None = None
    briefTitle: str | None = None


class DescriptionModule(_Open):
    briefSummary: str | None = None


class ConditionsModule(_Open):
    conditions: list[str] | None = None
    keywords: list[str] | None = None


class StudyIntervention(_Open):
    type: str | None = None
    name: str | None = None
    otherNames: list[str] | None = None


class ArmsInterventionsModule(_Open):
    interventions: list[StudyIntervention] | None = None


class EligibilityModule(_Open):
    eligibilityCriteria: str | None = None
    minimumAge: str | None = None
    maximumAge: str | None = None
    sex: str | None = None
    healthyVolunteers: bool | None = None


class ProtocolSection(_Open):
    identificationModule: IdentificationModule
    descriptionModule: DescriptionModule | None = None
    conditionsModule: ConditionsModule | None = None
    armsInterventionsModule: ArmsInterventionsModule | None = None
    eligibilityModule: EligibilityModule | None = None


class MeshTerm(_Open):
    term: str | None = None


class BrowseModule(_Open):
    meshes: list[MeshTerm] | None = None


class DerivedSection(_Open):
    conditionBrowseModule: BrowseModule | None = None
    interventionBrowseModule: BrowseModule | None = None


class Study(_Open):
    protocolSection: ProtocolSection
    derivedSection: DerivedSection | None = None


_TEXT = r"^[^\ud800-\udfff]*$"  # any text but a lone surrogate, which JSON allows and UTF-8 cannot carry


@dataclass(frozen=True)
class RequestModels:
    """The request bodies of one service, with its limits in their schema (so that ``/openapi.json`` says what
    the service accepts, and a request it refuses is one its schema refuses too)."""

    mention: type[BaseModel]
    link: type[BaseModel]
    trials: type[BaseModel]
    match: type[BaseModel]


def request_models(max_batch: int, max_mention_chars: int | None, max_document_chars: int,
                   max_note_chars: int) -> RequestModels:  # fmt: skip
    mention_text = Field(max_length=max_mention_chars or None, pattern=_TEXT, description="The mention, e.g. 'MI'.")
    document_text = Field(None, max_length=max_document_chars, pattern=_TEXT,
                          description="The text it occurs in; short forms defined there are expanded.")  # fmt: skip

    class MentionIn(BaseModel):
        model_config = ConfigDict(extra="forbid", regex_engine="python-re")

        text: str = mention_text
        document: str | None = document_text

    plain = Annotated[str, Field(max_length=max_mention_chars or None, pattern=_TEXT)]

    class LinkRequest(BaseModel):
        model_config = ConfigDict(extra="forbid", regex_engine="python-re")

        mentions: list[plain | MentionIn] = Field(min_length=1, max_length=max_batch,  # type: ignore[valid-type]
                                                  description="Mentions: plain strings or objects.")  # fmt: skip
        document: str | None = Field(None, max_length=max_document_chars, pattern=_TEXT,
                                     description="A document shared by every plain-string mention.")  # fmt: skip

    class TrialsRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")

        records: list[Study] = Field(min_length=1, max_length=max_batch, description="ClinicalTrials.gov API v2 "
                                                                                     "studies.")  # fmt: skip

    class MatchRequest(BaseModel):
        model_config = ConfigDict(extra="forbid", regex_engine="python-re")

        note: str = Field(min_length=1, max_length=max_note_chars, pattern=r"^[^\ud800-\udfff]*\S[^\ud800-\udfff]*$",
                          description="The patient note: age, sex, history, findings (English).")  # fmt: skip
        top: int = Field(10, ge=1, le=100, description="How many trials to return.")

    return RequestModels(MentionIn, LinkRequest, TrialsRequest, MatchRequest)
