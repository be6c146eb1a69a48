"""The shipped defaults: the embedded default's index (the MeSH descriptors encoded by medlink's own model, with the
nil calibration shipped for it), and the embedded default for drugs and chemicals: the MeSH descriptors with NLM's
supplementary concept records (323k chemicals, drugs and rare diseases, each mapped to the descriptors it falls
under), which the intervention fields of trial records need ("fludarabine phosphate", "sevirumab" and most
investigational drugs are supplementary records, not descriptors).

Both come prebuilt in the ``medlink-default-index`` package (:mod:`medlink.linking.prebuilt`) and are opened where
it is installed when they match what medlink ships; otherwise they are built into medlink's cache on first use: the
index by encoding every descriptor name (about three minutes on 2 cores), the supplementary records (NLM's file,
``resources/mesh-supplementary/``) compiled with the descriptors (about 40 s). The drug index is the default index
rebound to the larger terminology (:func:`~medlink.index.update.rebind_index`): dense retrieval over descriptor
names, supplementary records by exact match, nothing encoded again.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlink.encoders import load_encoder
from medlink.encoders.base import Encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.errors import MedlinkError
from medlink.folders import building_lock, cache_root, cached_entry, sha256_of
from medlink.index import build_index, ontology_entries
from medlink.index.compressed import CompressedParameters
from medlink.index.update import rebind_index, update_manifest
from medlink.index.vector_index import is_current_index, read_index_manifest
from medlink.linking.prebuilt import prebuilt_index, prebuilt_index_name, prebuilt_terminology
from medlink.resources import default_form_calibration, default_nil_calibration
from medlink.terminology import (
    ReadReport,
    SourceSpec,
    Terminology,
    compile_terminology,
    load_default_terminology,
    load_terminology,
)
from medlink.terminology.builder import TerminologyBuilder
from medlink.terminology.compile import release_of
from medlink.terminology.embedded import default_supplementary_source, installed_update
from medlink.terminology.glosses import with_glossed_names
from medlink.terminology.readers import read_source
from medlink.terminology.store import read_manifest, save_terminology
from medlink.terminology.terminology import SourceInfo

# The default's index: 8-bit codes in an HNSW graph. MeSH 2024's 115,933 names take 120 MB as fp16 HNSW, over the
# 100 MB a PyPI file may hold with the package; 8-bit codes take 61 MB, and at a beam of 256 the graph finds what
# exact search over them finds for 99.9 % of NCBI and BC5CDR dev mentions (0.7 ms a mention; docs/performance.md).
DEFAULT_INDEX_CODES = CompressedParameters(ef_search=256)

_UNION_RECIPE = "union2"  # changes when the union is compiled otherwise, so that cached copies are rebuilt


def default_drug_terminology_path(progress: bool = False) -> Path:
    """The compiled descriptors + supplementary records, built into the cache on first use (with ``progress``, a
    line on standard error says so: it takes about 30 s)."""
    descriptors = load_default_terminology()
    source, source_format = default_supplementary_source()
    sha256 = sha256_of(source)

    def build(folder: Path) -> None:
        if progress:
            print(
                "compiling the MeSH supplementary records into medlink's cache (first use, about 20 s)", file=sys.stderr
            )
        builder = TerminologyBuilder(ReadReport())
        for info in descriptors.sources:  # the glossed names are reached by exact match, like the records' names
            builder.add_source(with_glossed_names(descriptors, descriptors.normalizer), info)
        info = SourceInfo(source.name, source_format, sha256, source.stat().st_size, 0, release_of(source))
        builder.add_source(read_source(source, source_format, builder.report), info)
        save_terminology(builder.build(), folder)

    name = f"mesh-{_UNION_RECIPE}-{descriptors.fingerprint()}-{sha256[:16]}"
    prebuilt = prebuilt_terminology(name)
    if prebuilt is not None and _readable_store(prebuilt):
        return prebuilt
    return cached_entry(cache_root() / "terminologies" / name, _readable_store, build)


def _readable_store(folder: Path) -> bool:
    """Whether ``folder`` holds a compiled terminology this medlink reads; one missing, unreadable or of another
    schema version is compiled again (in the cache; a prebuilt one is passed over)."""
    try:
        read_manifest(folder)
    except (MedlinkError, OSError):
        return False
    return True


MESH = "mesh"  # the name of the embedded MeSH, descriptors and supplementary records (spec.py re-exports it)


def donor_terminology(name: str, progress: bool = False) -> Terminology:
    """A terminology to borrow synonyms from (:mod:`medlink.terminology.borrowing`): ``mesh`` for the embedded MeSH,
    descriptors and supplementary records; a compiled terminology folder; or a source file, ``FORMAT:PATH`` or a
    path whose format is guessed (``drugbank:drugbank_vocabulary.csv.gz``), compiled on the way."""
    if name == MESH:
        return load_terminology(default_drug_terminology_path(progress))
    if Path(name).is_dir():
        return load_terminology(Path(name))
    try:
        return compile_terminology([SourceSpec.parse(name)])
    except MedlinkError as error:
        why = (
            f"{name}: no terminology to borrow synonyms from ({error}); give a compiled terminology folder, a "
            f"source file as FORMAT:PATH, or {MESH!r} for the embedded MeSH"
        )
        raise MedlinkError(why) from None


def mesh_index(progress: bool = True) -> Path:
    """The embedded default's index (all of MeSH): the descriptors' vectors bound to the descriptors +
    supplementary records, cached on first use.

    The cache entry is named after the drug terminology's folder, which names its sources, so the 354k-concept
    terminology is loaded only to build the entry; the linker that opens it checks the fingerprint anyway."""
    terminology_dir = default_drug_terminology_path(progress)
    base = descriptors_index(progress)
    manifest = read_index_manifest(base)

    def build(folder: Path) -> None:
        terminology = load_terminology(terminology_dir)
        origin = {**manifest.origin.as_json(), "terminology": str(terminology_dir)}
        rebind_index(base, folder, terminology.fingerprint(), terminology.__contains__, origin)

    def current(folder: Path) -> bool:  # rebuilt when made before rebind_index recorded its source, or recalibrated
        if not is_current_index(folder):
            return False
        cached = read_index_manifest(folder)
        return (
            cached.rebound_from is not None
            and cached.calibration == manifest.calibration
            and cached.form_model == manifest.form_model
        )

    folder = cache_root() / "indexes" / f"{terminology_dir.name}-{manifest.encoder_fingerprint}"
    return cached_entry(folder, current, build)


def default_index_path(terminology: Terminology, encoder: Encoder) -> Path:
    return cache_root() / "indexes" / prebuilt_index_name(terminology.fingerprint(), encoder.identity.fingerprint())


def descriptors_index(progress: bool = True) -> Path:
    """The index over MeSH descriptors alone (``embedded="descriptors"``; the default's is bound from it), with
    medlink's own encoder via ONNX, built and cached on first use.

    Opened where the prebuilt package installed it when it matches; otherwise the first call encodes every name
    (115,933 names: about three minutes on 2 quiet cores, eight with other work on them) and later calls find it.
    A cached index of another index format version is rebuilt.
    """
    terminology = load_default_terminology()
    encoder = load_encoder(DEFAULT_MODEL)
    prebuilt = prebuilt_default_index(terminology, encoder)
    if prebuilt is not None:
        return prebuilt

    def build(folder: Path) -> None:
        build_default_index(terminology, encoder, folder, progress)

    folder = cached_entry(default_index_path(terminology, encoder), is_current_index, build)
    _apply_shipped_calibration(folder, terminology, encoder)
    return folder


def default_index_ready() -> bool:
    """Whether :func:`descriptors_index` opens the default's index without encoding anything: prebuilt, or cached."""
    terminology = load_default_terminology()
    encoder = load_encoder(DEFAULT_MODEL)
    return prebuilt_default_index(terminology, encoder) is not None or is_current_index(
        default_index_path(terminology, encoder)
    )


def shipped_nil_threshold() -> float | None:
    """The nil threshold the default index is calibrated with (resources/default-nil.json), known before the index
    is built; ``None`` when none was calibrated for this encoder and terminology."""
    fields = _shipped_calibration(load_default_terminology(), load_encoder(DEFAULT_MODEL))
    return float(fields["nil_threshold"]) if fields else None


def prebuilt_default_index(terminology: Terminology, encoder: Encoder) -> Path | None:
    """The prebuilt index when it is the default's for ``terminology`` and ``encoder``, with today's calibration."""
    return prebuilt_index(
        terminology.fingerprint(),
        encoder.identity.fingerprint(),
        _shipped_calibration(terminology, encoder) or {"calibration": None},
    )


def build_default_index(
    terminology: Terminology, encoder: Encoder, folder: Path, progress: bool, reuse: Sequence[Path] = ()
) -> None:
    """Encode the default index for ``terminology`` (vectors of ``reuse`` taken, not encoded again); an installed
    update's index records the shipped release it replaces, whose reranker and calibration it inherits."""
    update = installed_update()
    build_index(
        ontology_entries(terminology),
        encoder,
        folder,
        terminology.fingerprint(),
        kind="compressed",
        progress=progress,
        origin={"encoder": DEFAULT_MODEL, "backend": "onnx"},
        reuse=reuse,
        compressed=DEFAULT_INDEX_CODES,
    )
    if update is not None and update.replaces != terminology.fingerprint():
        update_manifest(folder, updated_from=update.replaces)


def _shipped_calibration(terminology: Terminology, encoder: Encoder) -> dict[str, Any] | None:
    """The manifest fields the default index gets from the calibration shipped for it (resources/default-nil.json,
    default-form.json), when that was calibrated with this encoder and terminology, or ``terminology`` is an
    installed update: it inherits the calibration shipped with this medlink, whichever release it was installed
    over (an update installed under an earlier medlink names that one's descriptors in ``replaces``)."""
    shipped = default_nil_calibration()
    if shipped is None or shipped.get("encoder_fingerprint") != encoder.identity.fingerprint():
        return None
    if shipped.get("terminology") != terminology.fingerprint() and installed_update() is None:
        return None
    form = default_form_calibration()
    form_model = form["model"] if form and form.get("encoder_fingerprint") == encoder.identity.fingerprint() else None
    return {
        "nil_threshold": shipped["threshold"],
        "term_model": shipped.get("term_model"),
        "calibration": shipped,
        "form_model": form_model,
    }


def _apply_shipped_calibration(folder: Path, terminology: Terminology, encoder: Encoder) -> None:
    """Give the default index the calibration shipped for it, when there is one for this encoder and terminology
    and the index does not carry it yet."""
    fields = _shipped_calibration(terminology, encoder)
    if fields is None:
        return
    manifest = read_index_manifest(folder)
    if manifest.calibration == fields["calibration"] and manifest.form_model == fields["form_model"]:
        return
    with building_lock(folder):
        update_manifest(folder, **fields)
