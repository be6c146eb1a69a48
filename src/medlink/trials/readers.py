"""Reading ClinicalTrials.gov records, streamed, from the formats users have.

- the legacy XML record (``public.xsd``; the TREC Clinical Trials corpus and the old bulk download): one
  ``<clinical_study>`` per ``.xml`` file;
- the current API v2 JSON (``protocolSection``, ``derivedSection``): one study per ``.json`` file, a page of the
  API (``{"studies": [...]}``), or a JSON Lines dump with one study per line (``.jsonl``, ``.ndjson``).

Any of these are read from a single file, a folder (searched recursively), or a ``.zip`` / ``.tar`` / ``.tar.gz`` /
``.tgz`` archive, which is streamed member by member without extracting it. A record that cannot be parsed is
reported with its file and archive member, counted in the :class:`~medlink.terminology.ReadReport` and skipped
(``strict`` stops at it); a source holding no record at all is an error.

Nothing is read whole that could be unbounded: an XML or JSON record over :data:`MAX_RECORD_BYTES` (a decompression
bomb, a dump mistaken for a record) and a JSON Lines line over :data:`MAX_LINE_BYTES` are reported and skipped
without being read past their limit; JSON Lines are read line by line.
"""

from __future__ import annotations

import json
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any
from xml.etree import ElementTree

from medlink.errors import MedlinkError
from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.trials.criteria import split_criteria
from medlink.trials.records import Intervention, TrialRecord

_RECORD_SUFFIXES = (".xml", ".json", ".jsonl", ".ndjson")
_ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
_AGE_UNITS = {
    "year": 1.0,
    "month": 1 / 12,
    "week": 7 / 365.25,
    "day": 1 / 365.25,
    "hour": 1 / 8766,
    "minute": 1 / 525960,
}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(year|month|week|day|hour|minute)s?\s*$", re.IGNORECASE)
_V2_TYPES = {
    "DIETARY_SUPPLEMENT": "Dietary Supplement",
    "COMBINATION_PRODUCT": "Combination Product",
    "DIAGNOSTIC_TEST": "Diagnostic Test",
}


MAX_RECORD_BYTES = 64 << 20  # one XML record or JSON document; an API page of 1,000 studies is about 30 MB
MAX_LINE_BYTES = 16 << 20  # one JSON Lines study; the largest of the shared sample is under 200 KB


@dataclass(frozen=True)
class Member:
    """One file and where it came from (``archive.tar.gz:folder/NCT….xml`` for archive members); ``open`` gives
    its bytes as a stream, valid until the next member of its archive is asked for."""

    location: str
    name: str
    open: Callable[[], IO[bytes]]


def read_trials(sources: Iterable[Path | str], report: ReadReport | None = None) -> Iterator[TrialRecord]:
    """Every record in ``sources`` (files, folders or archives), in order, streamed."""
    report = report or ReadReport()
    for source in sources:
        path = Path(source)
        found = 0
        for member in _members(path):
            for record in _parse_member(member, report):
                found += 1
                yield record
        if found == 0 and not report.counts.get(_SKIPPED):
            raise MedlinkError(
                f"{path}: no ClinicalTrials.gov record found (expected {', '.join(_RECORD_SUFFIXES)} "
                f"files, or archives of them)"
            )


_SKIPPED = "malformed records skipped"


def _members(path: Path) -> Iterator[Member]:
    if not path.exists():
        raise MedlinkError(f"{path}: file not found")
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if (p.is_file() and _is_record_name(p.name)) or _is_archive(p))
        for file in files:
            yield from _members(file) if _is_archive(file) else [_file_member(file)]
    elif _is_archive(path):
        yield from _archive_members(path)
    else:
        yield _file_member(path)


def _file_member(path: Path) -> Member:
    return Member(str(path), path.name, lambda: open(path, "rb"))


def _is_record_name(name: str) -> bool:
    return name.lower().endswith(_RECORD_SUFFIXES) and not Path(name).name.startswith(".")


def _is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(_ARCHIVE_SUFFIXES)


def _archive_members(path: Path) -> Iterator[Member]:
    try:
        if path.name.lower().endswith(".zip"):
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    if not info.is_dir() and _is_record_name(info.filename):
                        yield Member(f"{path}:{info.filename}", info.filename, partial(archive.open, info))
            return
        with tarfile.open(path, "r|*") as archive:  # a stream: members are read in order, never extracted
            for entry in archive:
                if entry.isfile() and _is_record_name(entry.name):
                    handle = archive.extractfile(entry)
                    if handle is not None:
                        yield Member(f"{path}:{entry.name}", entry.name, partial(_opened, handle))
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as error:
        raise SourceError(path, f"cannot read the archive ({error}); is it truncated?") from None


def _opened(handle: IO[bytes]) -> IO[bytes]:
    return handle


def _parse_member(member: Member, report: ReadReport) -> Iterator[TrialRecord]:
    try:
        yield from _parse_stream(member, report)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error) as error:
        raise SourceError(member.location, f"cannot read it ({error}); is the archive truncated?") from None


def _parse_stream(member: Member, report: ReadReport) -> Iterator[TrialRecord]:
    name = member.name.lower()
    with member.open() as stream:
        if name.endswith((".jsonl", ".ndjson")):
            for number, line in _bounded_lines(stream):
                if line is None:
                    report.problem(
                        member.location, number, f"a line over {MAX_LINE_BYTES:,} bytes, not read", kind=_SKIPPED
                    )
                elif line.strip():
                    parsed = _guarded(member, number, report, lambda line=line: parse_api_study(json.loads(line)))
                    yield from [parsed] if parsed is not None else []
            return
        data = stream.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        report.problem(member.location, None, f"over {MAX_RECORD_BYTES:,} bytes, not read", kind=_SKIPPED)
        return
    if name.endswith(".xml"):
        record = _guarded(member, None, report, lambda: parse_legacy_xml(data))
        yield from [record] if record is not None else []
        return
    studies = _guarded(member, None, report, lambda: _json_studies(data))
    for study in studies or []:
        record = _guarded(member, None, report, lambda study=study: parse_api_study(study))
        yield from [record] if record is not None else []


def _bounded_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, line)``, a line over :data:`MAX_LINE_BYTES` as ``None`` (skipped to its end unread)."""
    number = 0
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass  # the rest of the overlong line, read in bounded pieces and dropped
            yield number, None
            continue
        yield number, line


def _guarded(member: Member, line: int | None, report: ReadReport, parse: Any) -> Any:
    try:
        return parse()
    except (
        ElementTree.ParseError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
    ) as error:
        report.problem(member.location, line, f"not a readable trial record: {error}", kind=_SKIPPED)
        return None


def _json_studies(data: bytes) -> list[dict]:
    document = json.loads(data.decode("utf-8"))
    if isinstance(document, dict) and isinstance(document.get("studies"), list):
        return document["studies"]  # a page of the API's /studies endpoint
    if isinstance(document, list):
        return document
    return [document]


# --- the legacy XML record ----------------------------------------------------------------------------------------


def parse_legacy_xml(data: bytes) -> TrialRecord:
    """One ``<clinical_study>`` document."""
    root = ElementTree.fromstring(data)
    if root.tag != "clinical_study":
        raise ValueError(f"root element is <{root.tag}>, not <clinical_study>")
    nct_id = _text(root.find("id_info/nct_id"))
    if not nct_id:
        raise ValueError("no id_info/nct_id")
    criteria = _text(root.find("eligibility/criteria/textblock"))
    inclusion, exclusion = split_criteria(criteria)
    interventions = tuple(
        Intervention(
            type=_text(element.find("intervention_type")) or "Other",
            name=_text(element.find("intervention_name")),
            other_names=tuple(_text(other) for other in element.findall("other_name") if _text(other)),
        )
        for element in root.findall("intervention")
        if _text(element.find("intervention_name"))
    )
    healthy = _text(root.find("eligibility/healthy_volunteers")).lower()
    return TrialRecord(
        nct_id=nct_id,
        title=_text(root.find("official_title")) or _text(root.find("brief_title")),
        brief_summary=_clean_block(_text(root.find("brief_summary/textblock"))),
        conditions=_texts(root.findall("condition")),
        keywords=_texts(root.findall("keyword")),
        interventions=interventions,
        criteria_text=criteria,
        inclusion=inclusion,
        exclusion=exclusion,
        minimum_age=parse_age(_text(root.find("eligibility/minimum_age"))),
        maximum_age=parse_age(_text(root.find("eligibility/maximum_age"))),
        sex=_sex(_text(root.find("eligibility/gender")) or _text(root.find("eligibility/sex"))),
        healthy_volunteers={"yes": True, "accepts healthy volunteers": True, "no": False}.get(healthy),
        condition_browse=_texts(root.findall("condition_browse/mesh_term")),
        intervention_browse=_texts(root.findall("intervention_browse/mesh_term")),
    )


def _text(element: ElementTree.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""


def _texts(elements: list[ElementTree.Element]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(text for element in elements if (text := _text(element))))


def _clean_block(text: str) -> str:
    return " ".join(text.split())


# --- the API v2 JSON study ----------------------------------------------------------------------------------------


def parse_api_study(study: dict) -> TrialRecord:
    """One study of the ClinicalTrials.gov API v2 (``protocolSection`` and ``derivedSection``). A field of the
    wrong type (``"officialTitle": 5``) is a ``ValueError`` naming the field, as a missing ``nctId`` is."""
    if not isinstance(study, dict) or "protocolSection" not in study:
        raise ValueError("no protocolSection: not an API v2 study")
    protocol = _json_object(study, "protocolSection", "")
    identification = _json_object(protocol, "identificationModule", "protocolSection")
    where = "protocolSection.identificationModule"
    nct_id = _json_text(identification, "nctId", where)
    if not nct_id:
        raise ValueError("no protocolSection.identificationModule.nctId")
    eligibility = _json_object(protocol, "eligibilityModule", "protocolSection")
    criteria = _json_text(eligibility, "eligibilityCriteria", "protocolSection.eligibilityModule")
    inclusion, exclusion = split_criteria(criteria)
    conditions_module = _json_object(protocol, "conditionsModule", "protocolSection")
    derived = _json_object(study, "derivedSection", "")
    arms = _json_object(protocol, "armsInterventionsModule", "protocolSection")
    interventions = []
    for position, item in enumerate(_json_list(arms, "interventions", "protocolSection.armsInterventionsModule")):
        at = f"protocolSection.armsInterventionsModule.interventions[{position}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at}: expected an object, got {type(item).__name__}")
        if name := _json_text(item, "name", at).strip():
            others = tuple(other.strip() for other in _json_texts(item, "otherNames", at) if other.strip())
            interventions.append(
                Intervention(type=_v2_type(_json_text(item, "type", at) or "OTHER"), name=name, other_names=others)
            )
    eligibility_at = "protocolSection.eligibilityModule"
    healthy = eligibility.get("healthyVolunteers")
    if healthy is not None and not isinstance(healthy, bool):
        raise ValueError(f"{eligibility_at}.healthyVolunteers: expected true or false, got {type(healthy).__name__}")
    description = _json_object(protocol, "descriptionModule", "protocolSection")
    conditions_at = "protocolSection.conditionsModule"
    conditions = [c.strip() for c in _json_texts(conditions_module, "conditions", conditions_at) if c.strip()]
    keywords = [k.strip() for k in _json_texts(conditions_module, "keywords", conditions_at) if k.strip()]
    condition_browse = _json_object(derived, "conditionBrowseModule", "derivedSection")
    intervention_browse = _json_object(derived, "interventionBrowseModule", "derivedSection")
    return TrialRecord(
        nct_id=nct_id,
        title=_json_text(identification, "officialTitle", where) or _json_text(identification, "briefTitle", where),
        brief_summary=_clean_block(_json_text(description, "briefSummary", "protocolSection.descriptionModule")),
        conditions=tuple(dict.fromkeys(conditions)),
        keywords=tuple(dict.fromkeys(keywords)),
        interventions=tuple(interventions),
        criteria_text=criteria,
        inclusion=inclusion,
        exclusion=exclusion,
        minimum_age=parse_age(_json_text(eligibility, "minimumAge", eligibility_at)),
        maximum_age=parse_age(_json_text(eligibility, "maximumAge", eligibility_at)),
        sex=_sex(_json_text(eligibility, "sex", eligibility_at)),
        healthy_volunteers=healthy,
        condition_browse=_mesh_terms(condition_browse, "derivedSection.conditionBrowseModule"),
        intervention_browse=_mesh_terms(intervention_browse, "derivedSection.interventionBrowseModule"),
    )


def _v2_type(value: str) -> str:
    return _V2_TYPES.get(value, value.replace("_", " ").title())


def _mesh_terms(module: dict, where: str) -> tuple[str, ...]:
    terms = []
    for position, mesh in enumerate(_json_list(module, "meshes", where)):
        if not isinstance(mesh, dict):
            raise ValueError(f"{where}.meshes[{position}]: expected an object, got {type(mesh).__name__}")
        terms.append(_json_text(mesh, "term", f"{where}.meshes[{position}]"))
    return tuple(dict.fromkeys(term for term in terms if term))


# --- typed access to an API v2 study: a wrong type names its field instead of failing later -----------------------


def _field(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _json_object(parent: dict, key: str, where: str) -> dict:
    value = parent.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{_field(where, key)}: expected an object, got {type(value).__name__}")
    return value


def _json_list(parent: dict, key: str, where: str) -> list:
    value = parent.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{_field(where, key)}: expected a list, got {type(value).__name__}")
    return value


def _json_text(parent: dict, key: str, where: str) -> str:
    value = parent.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{_field(where, key)}: expected text, got {type(value).__name__} {value!r:.40}")
    return value


def _json_texts(parent: dict, key: str, where: str) -> list[str]:
    values = _json_list(parent, key, where)
    for position, value in enumerate(values):
        if not isinstance(value, str):
            raise ValueError(f"{_field(where, key)}[{position}]: expected text, got {type(value).__name__}")
    return values


# --- shared field parsing -----------------------------------------------------------------------------------------


def parse_age(text: str) -> float | None:
    """Years from the registry's "18 Years", "6 Months", "N/A" (no limit: ``None``)."""
    match = _AGE.match(text or "")
    if match is None:
        return None
    return round(float(match.group(1)) * _AGE_UNITS[match.group(2).lower()], 4)


def _sex(text: str) -> str:
    value = (text or "").strip().lower()
    return value if value in ("female", "male") else "all"
