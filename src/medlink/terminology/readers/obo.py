"""OBO 1.4 flat files (HPO ``hp.obo``, Disease Ontology ``doid.obo``, and any other OBO ontology).

Reads ``[Term]`` stanzas: ``id``, ``name``, ``synonym`` (scope EXACT / RELATED / BROAD / NARROW; the
``abbreviation`` synonym type becomes an abbreviation; HPO's discarded ``obsolete_synonym`` ones are skipped),
``is_a``, ``relationship``, ``alt_id``, ``xref``, ``def`` and ``namespace``. Obsolete terms are excluded and
counted. Spec: https://owlcollab.github.io/oboformat/doc/GO.format.obo-1_4.html
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers.concepts import build_concept
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind, Relation

_SCOPES = {"EXACT": NameKind.EXACT, "RELATED": NameKind.RELATED, "BROAD": NameKind.BROAD, "NARROW": NameKind.NARROW}
_SKIPPED_SYNONYM_TYPES = {"obsolete_synonym"}
_ABBREVIATION_TYPES = {"abbreviation", "acronym"}
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"\s*(.*)')
_ESCAPE = re.compile(r"\\(.)")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda match: {"n": "\n", "t": "\t", "W": " "}.get(match.group(1), match.group(1)), text)


def _strip_comment(value: str) -> str:
    """Drop a trailing ``! comment`` and ``{modifiers}``; OBO escapes a literal ``!`` as ``\\!``."""
    value = re.split(r"(?<!\\)\s!", value, maxsplit=1)[0]
    value = re.sub(r"\s*\{[^}]*\}\s*$", "", value)
    return value.strip()


class _Stanza:
    def __init__(self, line: int) -> None:
        self.line = line
        self.tags: dict[str, list[str]] = {}

    def add(self, tag: str, value: str) -> None:
        self.tags.setdefault(tag, []).append(value)

    def first(self, tag: str) -> str | None:
        values = self.tags.get(tag)
        return values[0] if values else None

    def all(self, tag: str) -> list[str]:
        return self.tags.get(tag, [])


def read_obo(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    header: dict[str, str] = {}
    stanza: _Stanza | None = None
    stanza_type: str | None = None
    for number, line in iter_lines(path):
        stripped = line.strip()
        if not stripped or stripped.startswith("!"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            if stanza is not None and stanza_type == "Term":
                yield from _term(stanza, header, path, report, source)
            stanza_type, stanza = stripped[1:-1], _Stanza(number)
            continue
        tag, sep, value = stripped.partition(":")
        if not sep:
            report.problem(path, number, f"expected 'tag: value', got {stripped[:60]!r}")
            continue
        if stanza is None:
            header.setdefault(tag.strip(), value.strip())
        else:
            stanza.add(tag.strip(), value.strip())
    if stanza is not None and stanza_type == "Term":
        yield from _term(stanza, header, path, report, source)


def _term(
    stanza: _Stanza, header: dict[str, str], path: Path, report: ReadReport, source: str | None
) -> Iterator[Concept]:
    term_id = stanza.first("id")
    if term_id is None:
        report.problem(path, stanza.line, "[Term] stanza without an id")
        return
    term_id = _strip_comment(term_id)
    if (stanza.first("is_obsolete") or "").lower() == "true":
        report.note("obsolete terms excluded")
        return
    synonyms: list[tuple[str, NameKind]] = []
    for value in stanza.all("synonym"):
        match = _QUOTED.match(value)
        if match is None:
            report.problem(path, stanza.line, f"{term_id}: synonym without a quoted text: {value[:60]!r}")
            continue
        text, rest = _unescape(match.group(1)), match.group(2).split()
        scope = rest[0] if rest and rest[0] in _SCOPES else "RELATED"  # OBO 1.4's default scope
        synonym_type = rest[1] if len(rest) > 1 and not rest[1].startswith("[") else None
        if synonym_type in _SKIPPED_SYNONYM_TYPES:
            report.note("obsolete synonyms skipped")
            continue
        kind = NameKind.ABBREVIATION if synonym_type in _ABBREVIATION_TYPES else _SCOPES[scope]
        synonyms.append((text, kind))
    relations = []
    for value in stanza.all("relationship"):
        parts = _strip_comment(value).split()
        if len(parts) >= 2:
            relations.append(Relation(term_id, parts[0], parts[1]))
    definition = stanza.first("def")
    if definition:
        match = _QUOTED.match(definition)
        definition = _unescape(match.group(1)) if match else definition
    namespace = stanza.first("namespace") or header.get("default-namespace")
    concept = build_concept(
        report,
        path,
        stanza.line,
        term_id,
        _unescape(stanza.first("name") or ""),
        synonyms,
        parents=tuple(_strip_comment(value) for value in stanza.all("is_a")),
        alt_ids=tuple(_strip_comment(value) for value in stanza.all("alt_id")),
        xrefs=tuple(_strip_comment(value).split()[0] for value in stanza.all("xref") if value.strip()),
        semantic_types=(namespace,) if namespace else (),
        definition=definition or None,
        source=source or f"{header.get('ontology', path.name)} {header.get('data-version', '')}".strip(),
        relations=tuple(relations),
    )
    if concept is not None:
        yield concept
