"""The compiled on-disk form of a terminology: Arrow IPC tables, key tables and a JSON manifest.

``DIR/manifest.json``      format, schema version, medlink version, normalizer, counts, sources with checksums, and
                           each file's size and checksums
``DIR/concepts.arrow``     one row per concept (the :data:`CONCEPT_FIELDS`)
``DIR/names.arrow``        one row per name: concept row, text, kind, normalized key (grouped by concept)
``DIR/relations.arrow``    typed relation triples
``DIR/name_offsets.npy``   where each concept's names start (concept row r: ``offsets[r]:offsets[r + 1]``)
``DIR/norms.*.npy``        normalized name → name rows, ``DIR/ids.*.npy`` concept id or alternative id → row,
                           ``DIR/heads.*.npy`` relation head → relation rows (:class:`KeyTable`)

Uncompressed tables (the default) are memory-mapped: loading reads the manifest and maps the files, whatever the
size, and the processes of a service or a Spark executor share one copy of the pages. ``compression="zstd"`` makes
a small folder to ship (the embedded default) at the price of decompressing the tables on load.

A folder is written next to its destination and renamed into place, so an interrupted compile never leaves a half
terminology where a good one was.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

from medlink.errors import MedlinkError
from medlink.folders import (
    check_file_record,
    contained_file,
    read_manifest_json,
    sampled_sha256,
    sha256_of,
    staged_folder,
)
from medlink.terminology.columns import Columns, arrow_to_list
from medlink.terminology.key_table import KEY_HASH, KeyTable, row_dtype
from medlink.terminology.point_reads import FileArray, FileKeyTable, arrow_point_readers
from medlink.terminology.terminology import (
    CONCEPT_FIELDS,
    NAME_FIELDS,
    RELATION_FIELDS,
    Lookups,
    SourceInfo,
    Terminology,
)
from medlink.text import Normalizer
from medlink.version import __version__

FORMAT_NAME = "medlink-terminology"
SCHEMA_VERSION = 2
MANIFEST = "manifest.json"
TABLE_FILES = {"concepts": "concepts.arrow", "names": "names.arrow", "relations": "relations.arrow"}
OFFSETS_FILE = "name_offsets.npy"
HEADS = "heads"  # relation head → relation rows; stores written before it have none (then indexed on first use)
_LIST_FIELDS = ("semantic_types", "parents", "alt_ids", "xrefs", "tree_numbers")
Verify = Literal["quick", "full", "none"]


class TerminologyFormatError(MedlinkError):
    """A compiled terminology that cannot be used as it is (other schema, corrupt file)."""


def _concept_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [(name, pa.list_(pa.string()) if name in _LIST_FIELDS else pa.string()) for name in CONCEPT_FIELDS]
    )


def _names_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("concept", pa.int32()),
            ("text", pa.large_string()),
            ("kind", pa.dictionary(pa.int8(), pa.string())),
            ("norm", pa.large_string()),
        ]
    )


def _relations_schema() -> Any:
    import pyarrow as pa

    return pa.schema([(name, pa.string()) for name in RELATION_FIELDS])


def save_terminology(terminology: Terminology, directory: Path | str, compression: str | None = None) -> Path:
    """Write ``terminology`` to ``directory`` atomically (temporary folder, then rename)."""
    import pyarrow as pa

    def table(columns: Columns, schema: Any) -> Any:
        return pa.table({field.name: columns.arrow(field.name, field.type) for field in schema}, schema=schema)

    tables = {
        "concepts": table(terminology.concepts, _concept_schema()),
        "names": table(terminology.names, _names_schema()),
        "relations": table(terminology.relations_table, _relations_schema()),
    }
    return _write_store(directory, tables, terminology.normalizer, terminology.sources, compression)


def _write_store(
    directory: Path | str,
    tables: dict[str, Any],
    normalizer: Normalizer,
    sources: tuple[SourceInfo, ...],
    compression: str | None,
) -> Path:
    """Write the three Arrow tables (names grouped by concept row) with their key tables and manifest."""
    import pyarrow as pa
    import pyarrow.compute as pc

    directory = Path(directory)
    concepts, names = tables["concepts"], tables["names"]
    with staged_folder(directory, MANIFEST, "a compiled terminology") as staging:
        files = []
        options = pa.ipc.IpcWriteOptions(compression=compression)
        for table_name, table in tables.items():
            path = staging / TABLE_FILES[table_name]
            table = table.combine_chunks()
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema, options=options) as writer:
                writer.write_table(table, max_chunksize=max(len(table), 1))  # one batch: rows index it directly
            files.append(path)
        concept_rows = names.column("concept").to_numpy()
        offsets = np.searchsorted(concept_rows, np.arange(len(concepts) + 1), side="left")
        offsets = offsets.astype(row_dtype(len(names)))
        np.save(staging / OFFSETS_FILE, offsets)
        files.append(staging / OFFSETS_FILE)
        files.extend(_id_table(concepts).save(staging, "ids"))
        norms = names.column("norm")
        kept = np.flatnonzero(pc.fill_null(pc.greater(pc.utf8_length(norms), 0), False).to_numpy(zero_copy_only=False))
        files.extend(KeyTable.build(norms.take(kept).to_pylist(), kept).save(staging, "norms"))
        heads = tables["relations"].column("head")
        files.extend(KeyTable.build(heads.to_pylist(), np.arange(len(heads))).save(staging, HEADS))
        manifest = {
            "format": FORMAT_NAME,
            "schema_version": SCHEMA_VERSION,
            "medlink_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "normalizer": normalizer.fingerprint,
            "compression": compression,
            "key_hash": KEY_HASH,
            "counts": {"concepts": len(concepts), "names": len(names), "relations": len(tables["relations"])},
            "sources": [vars(source) for source in sources],
            "files": {path.name: _file_record(path) for path in files},
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return directory


def _id_table(concepts: Any) -> KeyTable:
    """Own ids first, then alternative ids: a lookup prefers a concept's own id (as :meth:`Terminology.resolve`)."""
    import pyarrow.compute as pc

    alt_ids = concepts.column("alt_ids")
    keys = concepts.column("id").to_pylist() + pc.list_flatten(alt_ids).to_pylist()
    rows = np.concatenate([np.arange(len(concepts)), pc.list_parent_indices(alt_ids).to_numpy()])
    return KeyTable.build(keys, rows)


def _file_record(path: Path) -> dict[str, Any]:
    return {"size": path.stat().st_size, "sha256": sha256_of(path), "sampled_sha256": sampled_sha256(path)}


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
    if manifest.get("key_hash") != KEY_HASH:
        raise TerminologyFormatError(
            f"{directory} keeps its lookup tables under another key hash "
            f"({manifest.get('key_hash')}, this medlink uses {KEY_HASH}); rebuild it with "
            f"`medlink terminology compile`"
        )
    return manifest


def load_terminology(
    directory: Path | str, verify: bool | Verify = "quick", normalizer: Normalizer | None = None
) -> Terminology:
    """Load a compiled terminology by memory-mapping its files.

    ``verify``: ``"quick"`` (the default) checks each file's size and the checksum of its ends; ``"full"`` (or
    ``True``) its whole checksum (``medlink terminology info --verify``); ``"none"`` (or ``False``) nothing."""
    import pyarrow as pa

    directory = Path(directory)
    manifest = read_manifest(directory)
    mode: str = ("full" if verify else "none") if isinstance(verify, bool) else verify
    for file_name, record in manifest["files"].items():
        _check_file(contained_file(directory, file_name, TerminologyFormatError, "terminology"), record, mode)
    tables, points = {}, {}
    for table_name, file_name in TABLE_FILES.items():
        path = directory / file_name
        try:
            mapped = pa.memory_map(str(path))
            tables[table_name] = pa.ipc.open_file(mapped).read_all()
            points[table_name] = arrow_point_readers(path, mapped, tables[table_name])
        except (pa.ArrowInvalid, OSError) as error:
            raise TerminologyFormatError(f"{path} cannot be read ({error}); rebuild the terminology") from None
    normalizer = normalizer or Normalizer()
    names = {name: tables["names"].column(name) for name in NAME_FIELDS}
    lookups = None
    if manifest.get("normalizer") != normalizer.fingerprint:
        # Keys were made by another normalizer: recompute them rather than silently missing matches.
        names["norm"] = normalizer.normalize_all(names["text"].to_pylist())
    else:
        heads = FileKeyTable.load(directory, HEADS) if f"{HEADS}.hashes.npy" in manifest["files"] else None
        lookups = Lookups(
            ids=FileKeyTable.load(directory, "ids"),
            norms=FileKeyTable.load(directory, "norms"),
            name_offsets=FileArray(directory / OFFSETS_FILE),
            relation_heads=heads,
        )
    name_points = {name: read for name, read in points["names"].items() if not isinstance(names[name], list)}
    return Terminology(
        concepts=Columns(
            {name: tables["concepts"].column(name) for name in CONCEPT_FIELDS}, arrow_to_list, points["concepts"]
        ),
        names=Columns(names, arrow_to_list, name_points),
        relations_table=Columns(
            {name: tables["relations"].column(name) for name in RELATION_FIELDS}, arrow_to_list, points["relations"]
        ),
        sources=tuple(SourceInfo(**source) for source in manifest.get("sources", [])),
        normalizer=normalizer,
        lookups=lookups,
    )


def _check_file(path: Path, record: dict[str, Any], mode: str) -> None:
    if not path.exists():
        raise TerminologyFormatError(f"{path} is missing; the compiled terminology is incomplete, rebuild it")
    if mode == "none":
        return
    check_file_record(path, record, mode == "full", TerminologyFormatError, "terminology")
