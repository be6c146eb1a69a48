"""What requests carry and what responses look like (also the OpenAPI schema at ``/docs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from medlink.linking.settings import LinkerConfig
from medlink.trials.matching.matcher import DEFAULT_TOP


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
    nil_cause: str | None = Field(
        None,
        description="Why a nil result is nil, as one of: threshold, term test, form "
        "test, not a term, too long, out of scope, no candidate; null otherwise.",
    )
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


# What the service reads of a ClinicalTrials.gov API v2 study, typed as it reads it, each text and list with a
# limit far above what registered records hold (so that no field reaches the normalizer at any length); other
# fields pass as they are (the body's size bounds them), unread.
class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


NAME_CHARS = LinkerConfig.max_mention_chars
PROSE_CHARS = 50_000
NAME = Annotated[str, Field(max_length=NAME_CHARS)]  # a condition, keyword or drug name
SHORT = Annotated[str, Field(max_length=200)]  # an id, an age, a sex, an intervention type
TITLE = Annotated[str, Field(max_length=2_000)]
PROSE = Annotated[str, Field(max_length=PROSE_CHARS)]  # a summary, the eligibility criteria
MOST_NAMES = 1_000  # conditions, keywords, interventions or other names of one record


class IdentificationModule(_Open):
    nctId: str = Field(min_length=1, max_length=200, description="The record's NCT id.")
    officialTitle: TITLE | None = None
    briefTitle: TITLE | None = None


class DescriptionModule(_Open):
    briefSummary: PROSE | None = None


class ConditionsModule(_Open):
    conditions: list[NAME] | None = Field(None, max_length=MOST_NAMES)
    keywords: list[NAME] | None = Field(None, max_length=MOST_NAMES)


class StudyIntervention(_Open):
    type: SHORT | None = None
    name: NAME | None = None
    otherNames: list[NAME] | None = Field(None, max_length=MOST_NAMES)


class ArmsInterventionsModule(_Open):
    interventions: list[StudyIntervention] | None = Field(None, max_length=MOST_NAMES)


class EligibilityModule(_Open):
    eligibilityCriteria: PROSE | None = None
    minimumAge: SHORT | None = None
    maximumAge: SHORT | None = None
    sex: SHORT | None = None
    healthyVolunteers: StrictBool | None = None


class ProtocolSection(_Open):
    identificationModule: IdentificationModule
    descriptionModule: DescriptionModule | None = None
    conditionsModule: ConditionsModule | None = None
    armsInterventionsModule: ArmsInterventionsModule | None = None
    eligibilityModule: EligibilityModule | None = None


class MeshTerm(_Open):
    term: NAME | None = None


class BrowseModule(_Open):
    meshes: list[MeshTerm] | None = Field(None, max_length=MOST_NAMES)


class DerivedSection(_Open):
    conditionBrowseModule: BrowseModule | None = None
    interventionBrowseModule: BrowseModule | None = None


class Study(_Open):
    protocolSection: ProtocolSection
    derivedSection: DerivedSection | None = None


_TEXT = r"^[^\ud800-\udfff]*$"  # any text but a lone surrogate, which JSON allows and UTF-8 cannot carry
_NOTE = r"^[^\ud800-\udfff]*\S[^\ud800-\udfff]*$"  # and a note says something


EntityType = Literal["Disease", "Chemical", "Drug", "Anatomy", "Organism", "Procedure", "Phenomenon"]


def _documented(**constraints: Any) -> dict[str, Any]:
    """Limits written into the JSON schema only (``json_schema_extra``): the service checks them itself, to answer
    with a message that names the field, its length and the limit (a batch over the limit gets 413, as the body
    size does)."""
    return {key: value for key, value in constraints.items() if value is not None}


@dataclass(frozen=True)
class RequestModels:
    """The request bodies of one service, with its limits in their schema (so that ``/openapi.json`` says what
    the service accepts, and a request it refuses is one its schema refuses too)."""

    mention: type[BaseModel]
    link: type[BaseModel]
    trials: type[BaseModel]
    match: type[BaseModel]
    annotate: type[BaseModel]


def request_models(
    max_batch: int, max_mention_chars: int | None, max_document_chars: int, max_note_chars: int
) -> RequestModels:
    mention_limits = _documented(maxLength=max_mention_chars or None, pattern=_TEXT)
    document_limits = _documented(maxLength=max_document_chars, pattern=_TEXT)

    class MentionIn(BaseModel):
        model_config = ConfigDict(extra="forbid")

        text: str = Field(description="The mention, e.g. 'MI'.", json_schema_extra=mention_limits)
        document: str | None = Field(
            None,
            description="The text it occurs in; short forms defined there are expanded.",
            json_schema_extra=document_limits,
        )

    plain = Annotated[str, Field(json_schema_extra=mention_limits)]

    class LinkRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")

        mentions: list[plain | MentionIn] = Field(  # type: ignore[valid-type]
            min_length=1,
            description="Mentions: plain strings or objects.",
            json_schema_extra=_documented(maxItems=max_batch),
        )
        document: str | None = Field(
            None, description="A document shared by every plain-string mention.", json_schema_extra=document_limits
        )

    class TrialsRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")

        records: list[Study] = Field(
            min_length=1,
            description="ClinicalTrials.gov API v2 studies.",
            json_schema_extra=_documented(maxItems=max_batch),
        )

    class MatchRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")

        note: str = Field(
            description="The patient note: age, sex, history, findings (English).",
            json_schema_extra=_documented(maxLength=max_note_chars, pattern=_NOTE),
        )
        top: int = Field(DEFAULT_TOP, ge=1, le=100, description="How many trials to return.")

    class DocumentIn(BaseModel):
        model_config = ConfigDict(extra="forbid")

        id: str = Field("", description="The document's id, given back with its annotations.", max_length=200)
        text: str = Field(
            description="Running text: a note, an abstract, eligibility criteria.", json_schema_extra=document_limits
        )

    class AnnotateRequest(BaseModel):
        model_config = ConfigDict(extra="forbid")

        documents: list[DocumentIn] = Field(
            min_length=1, description="Documents to annotate.", json_schema_extra=_documented(maxItems=max_batch)
        )
        entity_type: EntityType | None = Field(
            None,
            description="Annotate only concepts of this kind (its MeSH "
            "branches; needs a terminology with tree numbers).",
        )
        context: StrictBool = Field(True, description="Mark each mention negated or uncertain (ConText).")

    return RequestModels(MentionIn, LinkRequest, TrialsRequest, MatchRequest, AnnotateRequest)
