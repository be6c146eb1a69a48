"""``medlink terminology update``: put a newer MeSH release that the user downloaded from NLM in place of the one
shipped with medlink, so that the embedded default knows this year's drugs.

The descriptors (``descYYYY.xml`` or the TSV) are compiled into medlink's cache and the default index is built for
them re-encoding only names the shipped release's index lacks; the supplementary records (``suppYYYY.xml`` or the
TSV) are compiled with them on first use, as the shipped ones are. The update inherits the shipped default's nil
calibration, form test and reranker (same encoder, nearly the same names). Nothing shipped is changed: ``--revert``
goes back to it. A failed update leaves the previous state in place.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.folders import sha256_of
from medlink.index.vector_index import read_index_manifest
from medlink.terminology import ReadReport, SourceSpec, Terminology, compile_terminology
from medlink.terminology.compile import release_of
from medlink.terminology.embedded import (
    EmbeddedUpdate,
    installed_update,
    load_default_terminology,
    load_shipped_terminology,
    record_update,
    updates_folder,
)
from medlink.terminology.readers import detect_format, read_source
from medlink.terminology.store import save_terminology

DESCRIPTOR_FORMATS = ("mesh-xml", "mesh-desc-tsv")
SUPPLEMENTARY_FORMATS = ("mesh-xml", "mesh-supp-tsv")


@dataclass(frozen=True)
class UpdateSummary:
    release: str
    concepts: int
    names: int
    new_concepts: int
    encoded: int
    reused: int
    seconds: float


def update_embedded(
    descriptors: Path, supplementary: Path | None = None, release: str | None = None, progress: bool = False
) -> UpdateSummary:
    """Install the MeSH release in ``descriptors`` (and ``supplementary``) as the embedded default and build its
    index, encoding only names the current default's index (or the shipped one's) lacks; raises naming the file
    when one is not what it should be, with nothing changed."""
    from medlink.encoders import load_encoder
    from medlink.encoders.registry import DEFAULT_MODEL
    from medlink.index.vector_index import is_current_index
    from medlink.linking.defaults import (
        build_default_index,
        default_index_path,
        descriptors_index,
        mesh_index,
        prebuilt_default_index,
    )

    started = time.perf_counter()
    current, shipped = load_default_terminology(), load_shipped_terminology()
    before = set(current.ids)
    encoder = load_encoder(DEFAULT_MODEL)
    earlier = dict.fromkeys(default_index_path(terms, encoder) for terms in (current, shipped))
    reuse = [path for path in earlier if is_current_index(path)]
    if (prebuilt := prebuilt_default_index(shipped, encoder)) is not None:  # the shipped vectors, as installed
        reuse.append(prebuilt)
    terminology = _compile_descriptors(descriptors)
    supplementary_format = _check_supplementary(supplementary) if supplementary else ""
    folder = updates_folder() / f"mesh-{terminology.fingerprint()}"
    save_terminology(terminology, folder)
    kept_records = None
    if supplementary is not None:
        kept_records = updates_folder() / f"supplementary-{sha256_of(supplementary)[:16]}-{supplementary.name}"
        if not kept_records.exists():  # copied, so that moving the download does not break the default
            partial = kept_records.with_name(f".{kept_records.name}.partial")
            shutil.copyfile(supplementary, partial)
            partial.replace(kept_records)
    previous = installed_update()
    update = EmbeddedUpdate(
        folder,
        kept_records,
        supplementary_format or "mesh-supp-tsv",
        release or release_of(descriptors),
        shipped.fingerprint(),
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        tuple(p.name for p in (descriptors, supplementary) if p),
    )
    record_update(update)
    try:
        index = default_index_path(terminology, encoder)
        if not is_current_index(index):
            build_default_index(terminology, encoder, index, progress, reuse)
        descriptors_index(progress)  # the shipped calibration applied
        mesh_index(progress)
    except BaseException:
        record_update(previous)
        raise
    timing = read_index_manifest(index).timing
    return UpdateSummary(
        update.release,
        len(terminology),
        terminology.name_count,
        len(set(terminology.ids) - before),
        int(timing.get("encoded", 0)),
        int(timing.get("reused", 0)),
        time.perf_counter() - started,
    )


def revert_embedded() -> bool:
    """Go back to the MeSH shipped with medlink; ``False`` when no update was installed."""
    if installed_update() is None:
        return False
    record_update(None)
    return True


def _format_of(path: Path, allowed: tuple[str, ...], what: str) -> str:
    try:
        found = detect_format(path)
    except MedlinkError:
        found = ""
    if found not in allowed:
        raise MedlinkError(
            f"{path}: not {what} medlink can tell by its name: give NLM's XML (desc2026.xml, "
            "supp2026.xml, or gzipped) or medlink's TSV (mesh_descriptors.tsv.gz, "
            "mesh_supplementary.tsv.gz)"
        )
    return found


def _compile_descriptors(path: Path) -> Terminology:
    source_format = _format_of(path, DESCRIPTOR_FORMATS, "MeSH descriptors")
    terminology = compile_terminology([SourceSpec(path, source_format)], ReadReport())
    descriptors = sum(1 for concept_id in terminology.ids if concept_id.startswith("MESH:D"))
    if descriptors < 0.9 * len(terminology):
        raise MedlinkError(
            f"{path}: holds {descriptors:,} MeSH descriptors among {len(terminology):,} records; give "
            "the descriptors file (descYYYY.xml), the supplementary records second"
        )
    return terminology


def _check_supplementary(path: Path) -> str:
    source_format = _format_of(path, SUPPLEMENTARY_FORMATS, "MeSH supplementary records")
    first = list(islice(read_source(path, source_format, ReadReport()), 100))
    if not first or not all(concept.id.startswith("MESH:C") for concept in first):
        raise MedlinkError(
            f"{path}: its records are not MeSH supplementary concept records (ids C…); give "
            "suppYYYY.xml or the supplementary TSV"
        )
    return source_format
