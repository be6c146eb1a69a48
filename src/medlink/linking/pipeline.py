"""Assembling a linker's parts (:class:`~medlink.linking.settings.LinkerParts`) from a terminology, a vector index
and an encoder; ``Linker.from_parts`` links with them.

Sieves are written as a comma-separated list, most precise first; ``NAME@T`` makes a dense sieve decide only when
its best cosine is at least ``T``, otherwise it passes the mention on:

    exact,D-T@0.95,OD-T      the default: exact match (training mentions, then names), then the nearest
                             training mention if it is very close, then the nearest of names and mentions
    exact,O-T                names only
    exact,OD-C               concept centroids
    exact,sparse             character n-gram TF-IDF over names and mentions
    exact,hybrid=0.8         dense OD-T and sparse fused by a weighted sum (dense weight 0.8)
    exact,rrf                dense OD-T and sparse fused by reciprocal rank fusion

Sieves over training mentions (``D``) are skipped when the index holds none.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from medlink.encoders.base import Encoder
from medlink.errors import MedlinkError
from medlink.index import MENTIONS, ONTOLOGY, IndexEntry, VectorIndex
from medlink.linking.mentions.form import FormJudge, FormModel
from medlink.linking.mentions.term_model import TermJudge, TermModel
from medlink.linking.settings import LinkerConfig, LinkerParts, Sieve
from medlink.linking.sieves.dense import CachingEncoder, DenseSieve, DenseStrategy, HeadCounter
from medlink.linking.sieves.exact import ExactSieve
from medlink.linking.sieves.sparse import HybridSieve, SparseRetriever, SparseSieve
from medlink.terminology import Terminology

DEFAULT_SIEVES = "exact,D-T@0.95,OD-T"


@dataclass
class _SieveParts:
    """What the sieves of one spec are made from; the sparse retriever is fitted once, on first use, and shared."""

    terminology: Terminology
    index: VectorIndex | None
    encoder: CachingEncoder | None
    top_k: int
    entries: Sequence[IndexEntry]
    fitted: SparseRetriever | None = None

    def sparse(self, part: str, accept: float | None) -> SparseSieve:
        if self.index is None and not self.entries:
            raise MedlinkError(f"sieve {part!r} needs a vector index (--index) or entries to search")
        if self.fitted is None:
            self.fitted = (
                SparseRetriever(self.entries, self.terminology)
                if self.index is None
                else SparseRetriever.from_index(self.index, self.terminology)
            )
        return SparseSieve(self.fitted, self.terminology, accept, self.top_k)

    def dense(self, part: str, name: str, accept: float | None) -> DenseSieve:
        if self.index is None or self.encoder is None:
            raise MedlinkError(f"sieve {part!r} needs a vector index (--index) and its encoder")
        return DenseSieve(self.index, self.encoder, self.terminology, DenseStrategy.parse(name), accept, self.top_k)


def _exact(parts: _SieveParts, part: str, accept: float | None, weight: float | None) -> Sieve:
    mentions: Sequence[IndexEntry]
    added: Sequence[IndexEntry]
    if parts.index is None:
        mentions = [e for e in parts.entries if e.source == MENTIONS]
        added = [e for e in parts.entries if e.source == ONTOLOGY and e.added]
    else:
        mentions = parts.index.entries.get(MENTIONS, ())
        added = parts.index.entries[ONTOLOGY].added() if ONTOLOGY in parts.index.entries else ()
    return ExactSieve(parts.terminology, mentions, added)


def _sparse(parts: _SieveParts, part: str, accept: float | None, weight: float | None) -> Sieve:
    return parts.sparse(part, accept)


def _hybrid(parts: _SieveParts, part: str, accept: float | None, weight: float | None) -> Sieve:
    dense_weight = 0.8 if weight is None else weight
    return HybridSieve(parts.dense(part, "OD-T", accept), parts.sparse(part, accept), dense_weight, accept)


def _rrf(parts: _SieveParts, part: str, accept: float | None, weight: float | None) -> Sieve:
    return HybridSieve(parts.dense(part, "OD-T", accept), parts.sparse(part, accept), None, accept)


# Sieves by name; any other name is a dense strategy (DenseStrategy.parse: O-T, D-T, OD-T, OD-C, …).
SIEVES: dict[str, Callable[[_SieveParts, str, float | None, float | None], Sieve]] = {
    "exact": _exact,
    "sparse": _sparse,
    "hybrid": _hybrid,
    "rrf": _rrf,
}


def parse_sieves(
    spec: str,
    terminology: Terminology,
    index: VectorIndex | None,
    encoder: Encoder | None,
    top_k: int = 10,
    entries: Sequence[IndexEntry] = (),
) -> list[Sieve]:
    """The sieves ``spec`` names. Without an index, ``exact`` and ``sparse`` still work: over ``entries`` (names and
    training mentions, as :func:`medlink.index.ontology_entries` and :func:`medlink.index.mention_entries` make
    them), so baselines need no encoder."""
    shared = encoder if encoder is None or isinstance(encoder, CachingEncoder) else CachingEncoder(encoder)
    parts = _SieveParts(terminology, index, shared, top_k, entries)
    sieves: list[Sieve] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, _, threshold = part.partition("@")
        kind, _, weight = name.lower().partition("=")
        try:
            accept = float(threshold) if threshold else None
            parsed_weight = float(weight) if weight else None
            if kind not in SIEVES:
                DenseStrategy.parse(name)  # a bad name fails here, before anything is built
        except ValueError as error:
            raise MedlinkError(f"bad sieve {part!r}: {error}") from None
        if kind in SIEVES:
            sieves.append(SIEVES[kind](parts, part, accept, parsed_weight))
        elif (dense := parts.dense(part, name, accept)).usable():  # D-T without training mentions is skipped
            sieves.append(dense)
    return sieves


def exact_parts(terminology: Terminology, config: LinkerConfig | None = None) -> LinkerParts:
    """Exact normalized match over ``terminology`` alone: no encoder, no index."""
    return LinkerParts(terminology, (ExactSieve(terminology),), config or LinkerConfig())


def dense_parts(
    terminology: Terminology,
    index: VectorIndex,
    encoder: Encoder,
    sieves: str = DEFAULT_SIEVES,
    config: LinkerConfig | None = None,
    term_model: TermModel | None = None,
    reranker_dir: Path | None = None,
) -> LinkerParts:
    """A linker's parts over ``index``, refusing an index built with another encoder or terminology. It declares nil
    below the index's calibrated threshold unless ``config`` sets one (0: never), where the index's term model (or
    ``term_model``, one not stored yet) says a mention is unlike a term, and where its form test says the found name
    is a look-alike. An encoder trained with a concept-count head
    (``medlink train --count-head``) also decides how many concepts a mention claims; a reranker from ``medlink
    train candidate-reranker`` for this terminology and encoder (``reranker_dir``) reorders close decisions."""
    index.check_compatible(encoder.identity, terminology.fingerprint())
    config = config or LinkerConfig()
    calibrated = index.manifest.nil_threshold
    if config.nil_threshold is None and calibrated is not None:  # 0 switches it off
        config = replace(config, nil_threshold=calibrated)
    shared = CachingEncoder(encoder)
    head = encoder.count_head  # only encoders trained with one have it
    counter = HeadCounter(shared, head) if head is not None else None
    reranker = None
    if reranker_dir is not None:
        from medlink.linking.rerank.reranker import Reranker

        # the terminology the vectors were built for, or the shipped MeSH an installed update replaces
        reranker = Reranker.load(reranker_dir, index.manifest.encoded_for, encoder.identity.fingerprint())
    return LinkerParts(
        terminology,
        tuple(parse_sieves(sieves, terminology, index, shared)),
        config,
        counter,
        _term_test(index, shared, term_model),
        reranker,
        _form_test(index, terminology),
        calibrated,
    )


def ranker_parts(terminology: Terminology, ranker_dir: Path | str, config: LinkerConfig | None = None) -> LinkerParts:
    """A linker's parts whose one sieve is a learned set ranker (``medlink train set-ranker``): each mention claims the
    set of concepts the ranker puts above its threshold. The ranker decides sets itself, so composites are not split."""
    from medlink.linking.sets.set_ranker import SetRanker, SetRankerSieve

    ranker = SetRanker.load(ranker_dir, terminology)
    config = replace(config or LinkerConfig(), split_composites=False)
    return LinkerParts(terminology, (SetRankerSieve(ranker),), config)


def _term_test(index: VectorIndex, encoder: CachingEncoder, given: TermModel | None) -> TermJudge | None:
    """``given``, else the index's calibrated term model (``linking/mentions/term_model.py``) when it has one for this
    encoder."""
    if given is not None:
        return TermJudge(given, encoder)
    stored = index.manifest.term_model
    if not stored or stored.get("encoder") != encoder.identity.fingerprint():
        return None
    return TermJudge(TermModel.from_dict(dict(stored)), encoder)


def _form_test(index: VectorIndex, terminology: Terminology) -> FormJudge | None:
    """The index's calibrated form test (``linking/mentions/form.py``), when it has one that this medlink reads (one
    over other features is left out, with a warning: linking goes on without it)."""
    stored = index.manifest.form_model
    if not stored:
        return None
    try:
        return FormJudge(FormModel.from_dict(dict(stored)), terminology)
    except (ValueError, KeyError, TypeError) as error:
        warnings.warn(f"the index's form test is left out ({error})", stacklevel=2)
        return None


def index_parts(
    index_dir: Path | str,
    terminology_dir: Path | str | None = None,
    sieves: str = DEFAULT_SIEVES,
    config: LinkerConfig | None = None,
    ef_search: int | None = None,
    reranker_dir: Path | None = None,
) -> LinkerParts:
    """A linker's parts over a saved index, reopening the terminology and encoder its manifest names; ``ef_search``
    overrides the HNSW search beam the index was saved with; ``reranker_dir``: see :func:`dense_parts`."""
    index = VectorIndex.load(index_dir, ef_search=ef_search)
    return dense_parts(
        terminology_of(index, terminology_dir), index, encoder_of(index), sieves, config, reranker_dir=reranker_dir
    )


def terminology_of(index: VectorIndex, override: Path | str | None = None) -> Terminology:
    """The terminology an index was built from (the embedded default when its manifest names none); a folder its
    manifest names must be one (see :mod:`medlink.encoders.named`), and its fingerprint is checked by the caller."""
    from medlink.encoders.named import folder_named_in
    from medlink.terminology import load_default_terminology, load_terminology

    if override:
        return load_terminology(override)
    named = index.manifest.origin.terminology
    if not named:
        return load_default_terminology()
    return load_terminology(folder_named_in(index.manifest.path, named, "terminology"))


def encoder_of(index: VectorIndex) -> Encoder:
    """The encoder an index was built with, reopened from what its manifest records (a name checked before it is
    opened, see :mod:`medlink.encoders.named`), refused when it now gives other vectors."""
    from medlink.encoders import load_encoder

    identity = index.encoder
    encoder = load_encoder(
        encoder_name_of(index),
        backend=_backend_named(index, index.manifest.origin.backend),
        quantize=identity.quantization,
        pooling=identity.pooling,
        max_length=identity.max_length,
    )
    index.check_compatible(encoder.identity)
    return encoder


def encoder_name_of(index: VectorIndex) -> str:
    """The name ``load_encoder`` reopens an index's encoder by: the one its manifest records, checked (a model folder
    as its resolved path)."""
    from medlink.encoders.named import model_named_in

    return model_named_in(index.manifest.path, index.manifest.origin.encoder or index.encoder.model)


def _backend_named(index: VectorIndex, backend: object) -> str:
    from medlink.encoders.registry import BACKENDS

    if backend not in BACKENDS:
        raise MedlinkError(f"{index.manifest.path}: unknown encoder backend {backend!r}; rebuild the index")
    return str(backend)


def with_training_mentions(
    index_dir: Path,
    pairs: Sequence[tuple[str, Sequence[str]]],
    terminology_dir: Path | str | None = None,
    several: Sequence[tuple[str, Sequence[Sequence[str]]]] = (),
) -> Path:
    """An index that also holds these annotated mentions (source D): ``index_dir`` itself when it already has
    training mentions, else a cached copy with only the mentions encoded (see :mod:`medlink.index.with_mentions`)."""
    from medlink.folders import cache_root
    from medlink.index import index_with_mentions, mention_entries, with_mentions_path

    index = VectorIndex.load(index_dir)
    if index.count(MENTIONS):
        return Path(index_dir)
    entries = mention_entries(pairs, terminology_of(index, terminology_dir), several=several)
    target = with_mentions_path(Path(index_dir), entries, cache_root() / "indexes")
    return index_with_mentions(Path(index_dir), entries, encoder_of(index), target)
