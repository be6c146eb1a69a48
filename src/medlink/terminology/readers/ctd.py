"""CTD vocabulary TSV files: ``CTD_diseases.tsv(.gz)`` (MEDIC) and ``CTD_chemicals.tsv(.gz)``.

Columns are named by the ``# Fields:`` comment line (diseases: DiseaseName, DiseaseID, AltDiseaseIDs, Definition,
ParentIDs, TreeNumbers, ParentTreeNumbers, Synonyms, SlimMappings; chemicals: ChemicalName, ChemicalID, CasRN,
…). Ids are already namespaced (``MESH:D009203``, ``OMIM:613150``); alternative ids (OMIM, DO) resolve to the same
concept, which is how the NCBI-disease corpus's OMIM ids meet MEDIC.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers.concepts import build_concept, namespaced, split_field, split_names
from medlink.terminology.readers.source_files import iter_lines
from medlink.terminology.records import Concept, NameKind

_DISEASE_FIELDS = [
    "DiseaseName",
    "DiseaseID",
    "AltDiseaseIDs",
    "Definition",
    "ParentIDs",
    "TreeNumbers",
    "ParentTreeNumbers",
    "Synonyms",
    "SlimMappings",
]


def read_ctd(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    fields: list[str] | None = None
    previous_comment = ""
    for number, line in iter_lines(path):
        if line.startswith("#"):
            comment = line.lstrip("#").strip()
            if previous_comment == "Fields:" and comment:
                fields = comment.split("\t")
            previous_comment = comment
            continue
        if not line.strip():
            continue
        if fields is None:
            fields = _DISEASE_FIELDS  # files saved without their comment header
        values = line.split("\t")
        if len(values) < 2:
            report.problem(path, number, f"expected {len(fields)} tab-separated columns, found {len(values)}")
            continue
        row = dict(zip(fields, values, strict=False))
        kind = "Disease" if "DiseaseID" in row else "Chemical"
        concept = build_concept(
            report,
            path,
            number,
            namespaced(row.get(f"{kind}ID", ""), "MESH"),
            row.get(f"{kind}Name"),
            [(synonym, NameKind.EXACT) for synonym in split_names(row.get("Synonyms"))],
            alt_ids=tuple(split_field(row.get(f"Alt{kind}IDs"))),
            parents=tuple(namespaced(parent, "MESH") for parent in split_field(row.get("ParentIDs"))),
            tree_numbers=tuple(split_field(row.get("TreeNumbers"))),
            semantic_types=tuple(split_field(row.get("SlimMappings"))),
            xrefs=tuple(f"CAS:{cas}" for cas in split_field(row.get("CasRN"))),
            definition=(row.get("Definition") or "").strip() or None,
            source=source or f"CTD {kind.lower()}s",
        )
        if concept is not None:
            yield concept
