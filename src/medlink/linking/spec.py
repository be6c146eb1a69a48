"""What a linker is, said once, as a small value that pickles: one of four kinds.

    EmbeddedDefault()            all of MeSH shipped with medlink: exact match, then dense retrieval (the default)
    ExactMatch(terminology)      exact normalized match over a terminology alone: no encoder, no index
    OverIndex(index)             exact match, then dense retrieval over a saved index, with its sieves and reranker
    SetRanked(ranker)            a set ranker from ``medlink train set-ranker``: each mention claims a set of concepts

``Linker.load(spec, config)`` makes the linker; ``medlink.link`` uses the default. A linker holds an ONNX session and
FAISS indexes, which cannot be pickled; it pickles as its spec and settings, and the copy rebuilds itself where it
is used (process pools, spaCy's ``n_process``, Spark workers). :func:`linker_spec` reads the flat options the CLI,
``Linker.load``'s keywords and the Spark helpers take, and says which of them do not go together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypedDict, Unpack

from medlink.errors import MedlinkError
from medlink.linking.defaults import (
    MESH,
    default_drug_terminology_path,
    default_index_ready,
    descriptors_index,
    mesh_index,
    shipped_nil_threshold,
)
from medlink.linking.pipeline import DEFAULT_SIEVES, exact_parts, index_parts, parse_sieves, ranker_parts
from medlink.linking.settings import LinkerConfig, LinkerParts
from medlink.resources import default_reranker_path
from medlink.terminology import load_default_terminology, load_terminology

if TYPE_CHECKING:
    from medlink.terminology import Terminology

DESCRIPTORS = "descriptors"
DRUGS = "drugs"  # the name MESH had while only the trials' drug linker used it; still accepted
EMBEDDED = (MESH, DESCRIPTORS, DRUGS)


@dataclass(frozen=True)
class TrainingMentions:
    """Annotated mentions that join the search as source D: the exact sieve matches them, and the dense sieves search
    an index that holds them too (a cached copy of the index with only the mentions encoded,
    :mod:`medlink.index.with_mentions`). ``several``: mentions annotated with several concepts at once."""

    pairs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    several: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()

    @classmethod
    def of(
        cls,
        pairs: Iterable[tuple[str, Iterable[str]]],
        several: Iterable[tuple[str, Iterable[Iterable[str]]]] = (),
    ) -> TrainingMentions:
        return cls(
            tuple((text, tuple(ids)) for text, ids in pairs),
            tuple((text, tuple(tuple(part) for part in parts)) for text, parts in several),
        )

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def __repr__(self) -> str:  # thousands of pairs would flood every message that shows a spec
        return f"TrainingMentions({len(self.pairs)} mentions)"

    def entries_over(self, terminology: Terminology) -> list:
        from medlink.index import mention_entries

        return mention_entries(self.pairs, terminology, several=self.several)

    def joined_to(self, index: Path, terminology: Path | None = None) -> Path:
        """``index`` itself without mentions, else the cached copy that holds them too."""
        if not self:
            return index
        from medlink.linking.pipeline import with_training_mentions

        return with_training_mentions(index, self.pairs, terminology, self.several)


def _as_path(value: Path | str | None) -> Path | None:
    """A path, or ``None`` for none given (an empty text too)."""
    return Path(value) if value else None


class _Checked:
    """Paths given as text become ``Path`` (so equal specs compare equal); an embedded default is one of
    :data:`EMBEDDED` (its old name read as the new); training mentions must be :class:`TrainingMentions` (hashable,
    so a spec can key a cache)."""

    def __post_init__(self) -> None:
        for item in fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if isinstance(value, str) and item.type in ("Path", "Path | None"):
                if not value:
                    raise MedlinkError(f"{type(self).__name__}: {item.name} is empty; give a folder")
                object.__setattr__(self, item.name, Path(value))
            if item.name == "embedded":
                object.__setattr__(self, item.name, _embedded(value))
            if item.name == "mentions" and not isinstance(value, TrainingMentions):
                raise MedlinkError(f"{type(self).__name__}: mentions must be TrainingMentions.of(pairs)")


def _embedded(which: str) -> str:
    if which not in EMBEDDED:
        raise MedlinkError(f"embedded must be one of {', '.join(EMBEDDED[:2])}, not {which!r}")
    return MESH if which == DRUGS else which


def _embedded_terminology(which: str, progress: bool) -> Terminology:
    """``mesh``: descriptors and supplementary records (compiled on first use); ``descriptors``: those alone."""
    if which == MESH:
        return load_terminology(default_drug_terminology_path(progress))
    return load_default_terminology()


@dataclass(frozen=True)
class EmbeddedDefault(_Checked):
    """All of MeSH shipped with medlink: ``mesh`` (the default) searches the descriptors by exact match and dense
    retrieval and the 323k supplementary records of drugs, chemicals and rare diseases by exact match;
    ``descriptors`` the descriptors alone. Prebuilt in the ``medlink-default-index`` package (else built and cached
    on first use, exact hits answered meanwhile). Where one text names both a descriptor and a supplementary record
    ("mpox": the disease and a chemical), the descriptor comes first and the record follows as an alternative,
    unless the linker's branches leave only one. It reranks close decisions with the reranker shipped for it, or
    ``reranker`` (``LinkerConfig.rerank`` switches either off)."""

    kind: ClassVar[str] = "embedded default"
    embedded: str = MESH
    ef_search: int | None = None
    reranker: Path | None = None
    mentions: TrainingMentions = field(default_factory=TrainingMentions)

    def default_index(self, progress: bool = False) -> Path:
        """The index it links with, built and cached on first use."""
        return mesh_index(progress) if self.embedded == MESH else descriptors_index(progress)

    def index_ready(self) -> bool:
        return default_index_ready()

    def warm(self, progress: bool = False) -> None:
        self.mentions.joined_to(self.default_index(progress))

    def exact_parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        """Exact match alone, under the index's calibrated nil threshold (known before it is built) unless
        ``config`` sets one: what it answers while its index is built, so that what is not a term is nil from the
        first mention on."""
        config = config or LinkerConfig()
        if config.nil_threshold is None:
            config = replace(config, nil_threshold=shipped_nil_threshold())
        exact = ExactMatch(embedded=self.embedded, mentions=self.mentions)
        return replace(exact.parts(config, progress), calibrated_nil_threshold=config.nil_threshold)

    def parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        # The shipped reranker over the names alone, where it was fitted and measured.
        reranker = self.reranker or (default_reranker_path() if not self.mentions else None)
        if config is not None and not config.rerank:
            reranker = None  # not even loaded
        folder = self.mentions.joined_to(self.default_index(progress))
        return index_parts(folder, None, DEFAULT_SIEVES, config, self.ef_search, reranker)


@dataclass(frozen=True)
class ExactMatch(_Checked):
    """Exact normalized match over ``terminology`` (a compiled folder), or over the embedded MeSH when none is given
    (``embedded`` as for :class:`EmbeddedDefault`), and over the training ``mentions``."""

    kind: ClassVar[str] = "exact match"
    terminology: Path | None = None
    embedded: str = MESH
    mentions: TrainingMentions = field(default_factory=TrainingMentions)

    def index_ready(self) -> bool:
        return True

    def warm(self, progress: bool = False) -> None:
        if self.terminology is None and self.embedded == MESH:
            default_drug_terminology_path(progress)

    def parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        terminology = (
            load_terminology(self.terminology) if self.terminology else _embedded_terminology(self.embedded, progress)
        )
        if not self.mentions:
            return exact_parts(terminology, config)
        sieves = parse_sieves("exact", terminology, None, None, entries=self.mentions.entries_over(terminology))
        return LinkerParts(terminology, tuple(sieves), config or LinkerConfig())

    exact_parts = parts


@dataclass(frozen=True)
class OverIndex(_Checked):
    """Exact match, then dense retrieval over a saved ``index`` (``medlink index build``) with the terminology and
    encoder it was built from (``terminology`` overrides the former).

    sieves: the sieve order (:func:`medlink.linking.pipeline.parse_sieves`; default ``exact,D-T@0.95,OD-T``).
    ef_search: the HNSW search beam (default: what the index was built with).
    reranker: a reranker from ``medlink train candidate-reranker`` for this index, for close decisions.
    mentions: training mentions that join the search (:class:`TrainingMentions`).
    """

    kind: ClassVar[str] = "index"
    index: Path
    terminology: Path | None = None
    sieves: str = DEFAULT_SIEVES
    ef_search: int | None = None
    reranker: Path | None = None
    mentions: TrainingMentions = field(default_factory=TrainingMentions)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.sieves, str) or not self.sieves.strip():
            raise MedlinkError(
                f"OverIndex: sieves must be a sieve order such as {DEFAULT_SIEVES!r}, not {self.sieves!r}"
            )

    def index_ready(self) -> bool:
        return True

    def warm(self, progress: bool = False) -> None:
        self.mentions.joined_to(self.index, self.terminology)

    def parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        reranker = self.reranker if config is None or config.rerank else None
        folder = self.mentions.joined_to(self.index, self.terminology)
        return index_parts(folder, self.terminology, self.sieves, config, self.ef_search, reranker)

    exact_parts = parts


@dataclass(frozen=True)
class SetRanked(_Checked):
    """A set ranker from ``medlink train set-ranker`` over ``terminology`` (default: the embedded MeSH descriptors,
    which the shipped rankers were fitted over): each mention claims the set of concepts the ranker puts above its
    threshold. It remembers the mentions it was fitted on, and decides sets itself (composites are not split)."""

    kind: ClassVar[str] = "set ranker"
    ranker: Path
    terminology: Path | None = None

    def index_ready(self) -> bool:
        return True

    def warm(self, progress: bool = False) -> None:
        pass

    def parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        terminology = load_terminology(self.terminology) if self.terminology else load_default_terminology()
        return ranker_parts(terminology, self.ranker, config)

    exact_parts = parts


LinkerSpec = EmbeddedDefault | ExactMatch | OverIndex | SetRanked
SPECS = (EmbeddedDefault, ExactMatch, OverIndex, SetRanked)  # spelled out: isinstance narrows on it


class SpecOptions(TypedDict, total=False):
    """The flat options :func:`linker_spec` reads (``Linker.load`` takes them too)."""

    terminology: Path | str | None
    exact_only: bool
    sieves: str | None
    ef_search: int | None
    ranker: Path | str | None
    reranker: Path | str | None
    embedded: str
    mentions: TrainingMentions | None


def check_option_names(options: SpecOptions) -> None:
    unknown = set(options) - set(SpecOptions.__annotations__)
    if unknown:
        raise TypeError(f"unexpected linker options: {', '.join(sorted(unknown))}")


def linker_spec(index: Path | str | None = None, **options: Unpack[SpecOptions]) -> LinkerSpec:
    """The spec flat options describe (the CLI's, ``Linker.load``'s keywords, the Spark helpers'), refusing options
    that do not go together with a message that says which."""
    check_option_names(options)
    # paths as Path, an empty text as not given (a config file's ``terminology = ""``)
    index, terminology = _as_path(index), _as_path(options.get("terminology"))
    ranker, reranker = _as_path(options.get("ranker")), _as_path(options.get("reranker"))
    exact_only, sieves, ef_search = options.get("exact_only", False), options.get("sieves"), options.get("ef_search")
    embedded, mentions = _embedded(options.get("embedded", MESH)), options.get("mentions") or TrainingMentions()
    if ranker is not None:
        if exact_only or index is not None or sieves or ef_search is not None or reranker is not None:
            raise MedlinkError(
                "a ranker links on its own: it takes no index, sieves, ef_search, exact_only or reranker"
            )
        if mentions:
            raise MedlinkError("a ranker remembers the training mentions it was fitted on: drop them")
        return SetRanked(ranker, terminology)
    if exact_only:
        if reranker is not None:
            raise MedlinkError("exact-only linking has no retrieval decisions to rerank: drop the reranker")
        if index is not None or ef_search is not None:
            raise MedlinkError("exact-only linking searches no index: drop the index (and ef_search) or exact_only")
        if sieves:
            raise MedlinkError("exact-only linking has one sieve: drop the sieve order or exact_only")
        return ExactMatch(terminology, embedded, mentions)
    if index is not None:
        return OverIndex(index, terminology, sieves or DEFAULT_SIEVES, ef_search, reranker, mentions)
    if terminology is not None:
        raise MedlinkError("a terminology of your own needs an index built from it (or exact_only)")
    if sieves:
        raise MedlinkError("a sieve order needs an index of your own")
    return EmbeddedDefault(embedded, ef_search, reranker, mentions)


def described(spec: LinkerSpec) -> dict[str, str | None]:
    """The spec in words, for manifests and logs (training mentions by their number)."""
    words: dict[str, str | None] = {"kind": spec.kind}
    for item in fields(spec):
        value = getattr(spec, item.name)
        if isinstance(value, TrainingMentions):
            words[item.name] = str(len(value.pairs))
        else:
            words[item.name] = None if value is None else str(value)
    return words


def from_own_folders(spec: LinkerSpec) -> bool:
    """Whether the spec links with an index, terminology or ranker of the user's own (not an embedded default)."""
    return not isinstance(spec, EmbeddedDefault) and not (isinstance(spec, ExactMatch) and spec.terminology is None)


__all__: Sequence[str] = [
    "DESCRIPTORS",
    "EMBEDDED",
    "MESH",
    "EmbeddedDefault",
    "ExactMatch",
    "LinkerSpec",
    "OverIndex",
    "SetRanked",
    "SpecOptions",
    "TrainingMentions",
    "described",
    "linker_spec",
]
