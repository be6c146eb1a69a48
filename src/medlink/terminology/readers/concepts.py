"""Turning one parsed source record into a :class:`Concept`, with the checks every reader shares."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.records import Concept, Name, NameKind, make_concept, validate_concept_id


def namespaced(identifier: str, namespace: str) -> str:
    """``D009203`` → ``MESH:D009203``; an id that already has a namespace keeps it."""
    identifier = identifier.strip()
    return identifier if ":" in identifier else f"{namespace}:{identifier}"


def split_field(value: str | None, separator: str = "|") -> list[str]:
    """Split a multi-valued field, dropping blanks."""
    if not value:
        return []
    return [part.strip() for part in value.split(separator) if part.strip()]


def split_names(value: str | None, separator: str = "|") -> list[str]:
    """Split a field of names, keeping blank entries between separators so :func:`build_concept` counts them as
    dropped empty names (a trailing separator is not a name)."""
    if not value or not value.strip():
        return []
    return value.strip().strip(separator).split(separator)


def build_concept(
    report: ReadReport,
    path: Path,
    line: int | None,
    concept_id: str,
    preferred_name: str | None,
    synonyms: Iterable[Name | tuple[str, NameKind]] = (),
    **fields: object,
) -> Concept | None:
    """A checked concept, or ``None`` after reporting why the record was skipped.

    Empty synonyms are dropped and counted; a record without a usable preferred name falls back on its first
    synonym; a record with no name at all, or a malformed id, is a problem (an error in strict mode).
    """
    try:
        validate_concept_id(concept_id)
    except ValueError as error:
        report.problem(path, line, str(error))
        return None
    names: list[Name] = []
    dropped = 0
    for synonym in synonyms:
        text, kind = (synonym.text, synonym.kind) if isinstance(synonym, Name) else synonym
        if text and text.strip():
            names.append(Name(text.strip(), kind))
        else:
            dropped += 1
    if dropped:
        report.note("empty names dropped", count=dropped)
    preferred = (preferred_name or "").strip()
    if not preferred:
        if not names:
            report.problem(path, line, f"concept {concept_id} has no name")
            return None
        report.note("concepts without a preferred name (first synonym used)", f"{path}:{line}: {concept_id}")
        preferred = names.pop(0).text
    return make_concept(concept_id, preferred, names, **fields)  # type: ignore[arg-type]
