"""What requests carry and what responses look like (also the OpenAPI schema at ``/docs``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class MentionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The mention, e.g. 'MI'.")
    document: str | None = Field(None, description="The text it occurs in; short forms defined there are expanded.")


class LinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mentions: list[str | MentionIn] = Field(min_length=1, description="Mentions: plain strings or objects.")
    document: str | None = Field(None, description="A document shared by every plain-string mention.")


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


class TrialsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    records: list[dict[str, Any]] = Field(min_length=1, description="ClinicalTrials.gov API v2 studies.")


class MatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str = Field(description="The patient note: age, sex, history, findings (English).")
    top: int = Field(10, ge=1, le=100, description="How many trials to return.")


class ErrorOut(BaseModel):
    error: str
    problems: list[str] = []
