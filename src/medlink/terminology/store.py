"""The compiled on-disk form of a terminology: a folder of Parquet tables and a JSON manifest.

``DIR/manifest.json``   format, schema version, medlink version, normalizer, counts, sources with checksums, and
                        the checksum of each table file
``DIR/concepts.parquet`` one row per concept (the :data:`CONCEPT_FIELDS`)
``DIR/names.parquet``    one row per name: concept row, text, kind, normalized key (grouped by concept)
``DIR/relations.parquet`` typed relation triples

A folder is written next to its destination and renamed into place, so an interrupted compile never leaves a half
terminology where a good one was.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError
from medlink.folders import read_manifest_json, sha256_of, staged_folder
from medlink.terminology.terminology import (
    CONCEPT_FIELDS,
    NAME_FIELDS,
    RELATION_FIELDS,
    Columns,
    SourceInfo,
    Terminology,
)
from medlink.text import Normalizer
from medlink.version import __version__

FORMAT_NAME = "medlink-terminology"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
TABLE_FILES = {"concepts": "concepts.parquet", "names": "names.parquet", "relations": "relations.parquet"}
_LIST_FIELDS = ("semantic_types", "parents", "alt_ids", "xrefs", "tree_numbers")


class TerminologyFormatError(MedlinkError):
    """A compiled terminology that cannot be used as it is (other schema, corrupt file)."""


def save_terminology(terminology: Terminology, directory: Path | str) -> Path:
    """Write ``terminology`` to ``directory`` atomically (temporary folder, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    with staged_folder(directory, MANIFEST, "a compiled terminology") as staging:
        concept_schema = pa.schema(
            [(name, pa.list_(pa.string()) if name in _LIST_FIELDS else pa.string()) for name in CONCEPT_FIELDS]
        )
        tables = {
            "concepts": pa.table({name: terminology.concepts[name] for name in CONCEPT_FIELDS}, schema=concept_schema),
            "names": pa.table(
                {
                    "concept": pa.array(terminology.names["concept"], pa.int32()),
                    "text": pa.array(terminology.names["text"], pa.string()),
                    "kind": pa.array(terminology.names["kind"], pa.string()).dictionary_encode(),
                    "norm": pa.array(terminology.names["norm"], pa.string()),
                }
            ),
            "relations": pa.table(
                {name: pa.array(terminology.relations_table[name], pa.string()) for name in RELATION_FIELDS}
            ),
        }
        checksums = {}
        for table_name, table in tables.items():
            path = staging / TABLE_FILES[table_name]
            pq.write_table(table, path, compression="zstd")
            checksums[path.name] = sha256_of(path)
        manifest = {
            "format": FORMAT_NAME,
            "schema_version": SCHEMA_VERSION,
            "medlink_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "normalizer": terminology.normalizer.fingerprint,
            "counts": {
                "concepts": len(terminology),
                "names": terminology.name_count,
                "relations": len(terminology.relations_table),
            },
            "sources": [vars(source) for source in terminology.sources],
            "files": checksums,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return directory


def read_manifest(directory: Path | str) -> dict[str, Any]:
    """The manifest of a compiled terminology, checked for format and schema version."""
    directory = Path(directory)
    path = directory / MANIFEST
    missing = f"{directory} is not a compiled terminology (no {MANIFEST}); make one with `medlink terminology compile`"
    manifest = read_manifest_json(path, TerminologyFormatError, missing)
    if manifest.get("format") != FORMAT_NAME:
        raise TerminologyFormatError(f"{path}: not a medlink terminology manifest")
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        raise TerminologyFormatError(
            f"{directory} was compiled with terminology schema version {version}; this medlink ({__version__}) reads "
            f"version {SCHEMA_VERSION}. Rebuild it from its sources with `medlink terminology compile` "
            f"(its sources: {', '.join(source['path'] for source in manifest.get('sources', [])) or 'unknown'})"
        )
    return manifest


def load_terminology(directory: Path | str, verify: bool = True, normalizer: Normalizer | None = None) -> Terminology:
    """Load a compiled terminology. Columns convert to Python lazily; lookup tables build on first use."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    manifest = read_manifest(directory)
    tables = {}
    for table_name, file_name in TABLE_FILES.items():
        path = directory / file_name
        if not path.exists():
            raise TerminologyFormatError(f"{path} is missing; the compiled terminology is incomplete, rebuild it")
        if verify and sha256_of(path) != manifest["files"].get(file_name):
            raise TerminologyFormatError(f"{path} does not match the checksum in its manifest; rebuild it")
        tables[table_name] = pq.ParquetFile(path).read()  # read_table would import pandas: +0.4 s, +50 MB
    normalizer = normalizer or Normalizer()
    names = {name: tables["names"].column(name) for name in NAME_FIELDS}
    if manifest.get("normalizer") != normalizer.fingerprint:
        # Keys were made by another normalizer: recompute them rather than silently missing matches.
        names["norm"] = [normalizer(text) for text in names["text"].to_pylist()]
    return Terminology(
        concepts=Columns({name: tables["concepts"].column(name) for name in CONCEPT_FIELDS}, _to_list),
        names=Columns(names, _to_list),
        relations_table=Columns({name: tables["relations"].column(name) for name in RELATION_FIELDS}, _to_list),
        sources=tuple(SourceInfo(**source) for source in manifest.get("sources", [])),
        normalizer=normalizer,
    )


def _to_list(column: Any) -> list:
    if hasattr(column, "type") and str(column.type).startswith("dictionary"):
        column = column.cast(column.type.value_type)
    return column.to_pylist()
