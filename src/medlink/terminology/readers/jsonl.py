"""Generic JSON Lines terminology: one concept per line, for vocabularies no other reader covers.

``{"id": "X:1", "name": "preferred name", "synonyms": ["…"], "abbreviations": ["…"], "parents": ["X:0"],
"types": ["…"], "alt_ids": [], "xrefs": [], "definition": "…", "relations": [["X:1", "part_of", "X:2"]]}``;
only ``id`` and ``name`` are required. A synonym may also be ``{"name": "…", "kind": "narrow"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers.concepts import build_concept, namespaced
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind, Relation


def _strings(record: dict[str, Any], key: str) -> tuple[str, ...]:
    value = record.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return tuple(value)


def _synonyms(record: dict[str, Any]) -> list[tuple[str, NameKind]]:
    synonyms = []
    for item in record.get("synonyms") or []:
        if isinstance(item, str):
            synonyms.append((item, NameKind.EXACT))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            synonyms.append((item["name"], NameKind.parse(item.get("kind", "exact"))))
        else:
            raise ValueError("each synonym must be a string or {'name': ..., 'kind': ...}")
    synonyms.extend((text, NameKind.ABBREVIATION) for text in _strings(record, "abbreviations"))
    return synonyms


def read_jsonl(path: Path, report: ReadReport, namespace: str = "CODE", source: str | None = None) -> Iterator[Concept]:
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("each line must be a JSON object")
            identifier, name = record.get("id"), record.get("name")
            if not isinstance(identifier, str) or not isinstance(name, str):
                raise ValueError("'id' and 'name' are required strings")
            concept_id = namespaced(identifier, namespace)
            relations = tuple(Relation(*triple) for triple in record.get("relations") or [])
            fields = dict(
                parents=tuple(namespaced(p, namespace) for p in _strings(record, "parents")),
                semantic_types=_strings(record, "types"),
                alt_ids=_strings(record, "alt_ids"),
                xrefs=_strings(record, "xrefs"),
                definition=record.get("definition"),
                relations=relations,
                source=source or path.name,
            )
            synonyms = _synonyms(record)
        except (json.JSONDecodeError, ValueError, TypeError) as error:
            report.problem(path, number, str(error))
            continue
        concept = build_concept(report, path, number, concept_id, name, synonyms, **fields)
        if concept is not None:
            yield concept
