"""How to build a linker, as a small picklable description.

A linker holds an ONNX session and FAISS indexes, which cannot be pickled; its :class:`LinkerRecipe` can. A linker made
from a recipe (``Linker.load``, ``Linker.from_recipe``) pickles as that recipe and its settings, and the copy rebuilds
itself in the receiving process on first use: that is what lets a linker go into a process pool, a spaCy ``n_process``
pipeline or a Spark worker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.linking.defaults import (
    MESH,
    default_drug_terminology_path,
    default_index_ready,
    descriptors_index,
    mesh_index,
    shipped_nil_threshold,
)
from medlink.linking.pipeline import DEFAULT_SIEVES, exact_parts, index_parts, ranker_parts
from medlink.linking.settings import LinkerConfig, LinkerParts
from medlink.resources import default_reranker_path
from medlink.terminology import load_default_terminology, load_terminology

DESCRIPTORS = "descriptors"
DRUGS = "drugs"  # the name MESH had while only the trials' drug linker used it; still accepted
EMBEDDED = (MESH, DESCRIPTORS, DRUGS)


@dataclass(frozen=True)
class LinkerRecipe:
    """A linker over ``index_dir`` (exact match, then dense retrieval, with the index's own terminology unless
    ``terminology_dir`` is given), over ``terminology_dir`` alone with ``exact_only`` (no encoder, no index), or
    the embedded default: all of MeSH shipped with medlink, descriptors and supplementary records, exact → dense, its
    index built and cached on first use.

    sieves: the sieve order (``medlink.linking.pipeline``; default ``exact,D-T@0.95,OD-T``); needs ``index_dir``.
    ef_search: the HNSW search beam (default: what the index was built with).
    ranker_dir: link with a set ranker (``medlink train set-ranker``) over ``terminology_dir`` (or the embedded MeSH)
        instead of sieves: each mention claims the set of concepts it names.
    reranker_dir: rerank close retrieval decisions with a reranker from ``medlink train candidate-reranker`` for the
        index; the embedded default uses the reranker shipped for it (``LinkerConfig.rerank`` switches either off).
    embedded: which embedded default links when no index or terminology is given: ``mesh`` (the default: the
        descriptors, searched by exact match and dense retrieval, and the 323k supplementary records of drugs,
        chemicals and rare diseases by exact match; compiled into the cache on first use,
        :mod:`medlink.linking.defaults`) or ``descriptors`` (the descriptors alone). Where one text names both a
        descriptor and a supplementary record ("mpox": the disease and a chemical), the descriptor comes first and
        the record follows as an alternative, unless the linker's branches (``--entity-type``) leave only one.
    """

    index_dir: Path | None = None
    terminology_dir: Path | None = None
    exact_only: bool = False
    sieves: str | None = None
    ef_search: int | None = None
    ranker_dir: Path | None = None
    reranker_dir: Path | None = None
    embedded: str = MESH

    def __post_init__(self) -> None:
        if self.embedded not in EMBEDDED:
            raise MedlinkError(f"embedded must be one of {', '.join(EMBEDDED[:2])}, not {self.embedded!r}")
        if self.embedded == DRUGS:
            object.__setattr__(self, "embedded", MESH)
        for name in ("index_dir", "terminology_dir", "ranker_dir", "reranker_dir"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Path):
                object.__setattr__(self, name, Path(value))
        if self.ranker_dir is not None:
            if (
                self.exact_only
                or self.index_dir is not None
                or self.sieves
                or self.ef_search is not None
                or self.reranker_dir is not None
            ):
                raise MedlinkError(
                    "a ranker links on its own: it takes no index, sieves, ef_search, exact_only or reranker"
                )
            return
        if self.exact_only and self.reranker_dir is not None:
            raise MedlinkError("exact-only linking has no retrieval decisions to rerank: drop the reranker")
        if self.exact_only and (self.index_dir is not None or self.ef_search is not None):
            raise MedlinkError("exact-only linking searches no index: drop the index (and ef_search) or exact_only")
        if not self.exact_only and self.terminology_dir is not None and self.index_dir is None:
            raise MedlinkError("a terminology of your own needs an index built from it (or exact_only)")
        if self.sieves and self.index_dir is None:
            raise MedlinkError("a sieve order needs an index of your own")

    @property
    def uses_default_index(self) -> bool:
        """Whether :meth:`parts` opens the embedded default's index (built and cached on first use)."""
        return not self.exact_only and self.index_dir is None and self.ranker_dir is None

    def default_index(self, progress: bool = False) -> Path:
        """The embedded default's index this recipe links with, built and cached on first use."""
        return mesh_index(progress) if self.embedded == MESH else descriptors_index(progress)

    def index_ready(self) -> bool:
        """Whether :meth:`parts` opens its index without building it (so always, but for the embedded default's
        when neither the prebuilt package nor the cache has it)."""
        return not self.uses_default_index or default_index_ready()

    def exact_parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        """Exact match over the terminology this recipe links with: what a linker answers while its index is
        still being built. Under the index's calibrated nil threshold (known before it is built) unless ``config``
        sets one, so that what is not a term is nil from the first mention on, as with the index."""
        config = config or LinkerConfig()
        if config.nil_threshold is None and self.uses_default_index:
            config = replace(config, nil_threshold=shipped_nil_threshold())
        exact = LinkerRecipe(terminology_dir=self.terminology_dir, exact_only=True, embedded=self.embedded)
        return replace(exact.parts(config, progress), calibrated_nil_threshold=config.nil_threshold)

    def warm(self, progress: bool = False) -> None:
        """Build what :meth:`parts` would build on first use (the default index, the drug terminology), so that
        worker processes find it cached instead of all building it at once."""
        if self.uses_default_index:
            self.default_index(progress)
        elif self.embedded == MESH and self.terminology_dir is None:
            default_drug_terminology_path(progress)

    def parts(self, config: LinkerConfig | None = None, progress: bool = False) -> LinkerParts:
        """What the linker this recipe describes links with (``Linker.from_recipe`` makes the linker); ``config``
        replaces the settings an index was calibrated with."""
        if self.exact_only or self.ranker_dir is not None:
            if self.terminology_dir:
                terminology = load_terminology(self.terminology_dir)
            elif self.embedded == MESH and self.ranker_dir is None:  # rankers were fitted over the descriptors
                terminology = load_terminology(default_drug_terminology_path(progress))
            else:
                terminology = load_default_terminology()
            if self.ranker_dir is None:
                return exact_parts(terminology, config)
            return ranker_parts(terminology, self.ranker_dir, config)
        folder = self.index_dir or self.default_index(progress)
        shipped = default_reranker_path() if self.index_dir is None else None
        reranker = self.reranker_dir or shipped
        if config is not None and not config.rerank:
            reranker = None  # not even loaded
        return index_parts(
            folder,
            self.terminology_dir,
            self.sieves or DEFAULT_SIEVES,
            config=config,
            ef_search=self.ef_search,
            reranker_dir=reranker,
        )
