"""DrugBank open vocabulary CSV (``drugbank vocabulary.csv``, CC0).

Columns: DrugBank ID, Accession Numbers, Common name, CAS, UNII, Synonyms, Standard InChI Key; multi-valued
fields are joined by `` | ``. Ids become ``DRUGBANK:DB00001``; older accession numbers resolve to the same drug;
CAS, UNII and InChIKey are kept as cross-references.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.readers.concepts import build_concept, namespaced, split_field, split_names
from medlink.terminology.readers.source_files import open_text
from medlink.terminology.records import Concept, NameKind

_REQUIRED = ("DrugBank ID", "Common name")


def read_drugbank_vocabulary(path: Path, report: ReadReport, source: str | None = None) -> Iterator[Concept]:
    with open_text(path) as handle:
        reader = csv.DictReader(handle)
        try:
            missing = [column for column in _REQUIRED if column not in (reader.fieldnames or [])]
            if missing:
                raise SourceError(path, f"not a DrugBank vocabulary CSV: missing column(s) {', '.join(missing)}", 1)
            for row in reader:
                number = reader.line_num
                if None in row:
                    report.problem(path, number, "more columns than the header names")
                    continue
                xrefs = [
                    f"{key}:{row[column].strip()}"
                    for key, column in (("CAS", "CAS"), ("UNII", "UNII"), ("InChIKey", "Standard InChI Key"))
                    if (row.get(column) or "").strip()
                ]
                concept = build_concept(
                    report,
                    path,
                    number,
                    namespaced(row["DrugBank ID"] or "", "DRUGBANK"),
                    row["Common name"],
                    [(synonym, NameKind.EXACT) for synonym in split_names(row.get("Synonyms"), " | ")],
                    alt_ids=tuple(namespaced(a, "DRUGBANK") for a in split_field(row.get("Accession Numbers"), " | ")),
                    xrefs=tuple(xrefs),
                    semantic_types=("Drug",),
                    source=source or "DrugBank open vocabulary",
                )
                if concept is not None:
                    yield concept
        except csv.Error as error:
            raise SourceError(path, f"malformed CSV ({error})", reader.line_num) from None
        except UnicodeDecodeError as error:
            raise SourceError(
                path, f"not valid UTF-8 ({error.reason}); convert the file to UTF-8", reader.line_num
            ) from None
