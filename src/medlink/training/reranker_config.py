"""The settings of the rerank stage's training (:mod:`~medlink.training.reranker_fit`) and of the set ranker's pair
rescorer's (:mod:`~medlink.training.pair_rescorer_fit`), free of torch so that the command line reads them for its
options."""

from __future__ import annotations

from dataclasses import dataclass

from medlink.options import setting


@dataclass(frozen=True)
class RerankerFitConfig:
    """top_k: candidates per mention (the paper's 10); epochs; batch_size and the learning rates of the encoder
    and of the new head; keywords: the keywords attentive ranker, else a plain cross-encoder; held_out: share of
    the distinct mentions kept out of training to fit the fusion; synonyms: terminology names added to the
    training mentions as further examples (:func:`synonym_pairs`, never held out); quantize: ``int8`` or ``none``
    for the export; device: ``auto`` (a GPU when torch sees one), ``cpu`` or ``cuda``; freeze_embeddings: the
    token embeddings stay as in the base model; significance: the McNemar p-value below which the held-out gain
    of the fused ranking over the retriever counts (else the ranker is never consulted). Defaults chosen on
    NCBI-disease train."""

    top_k: int = setting(10, "Candidates per mention.", minimum=2)
    epochs: int = setting(3, "Passes over the training mentions.", minimum=1)
    batch_size: int = 32
    learning_rate: float = 3e-5
    head_learning_rate: float = 1e-3
    keywords: bool = setting(
        True, "The keywords attentive ranker, or (--plain) a plain cross-encoder.", flag="--keywords/--plain"
    )
    held_out: float = 0.2
    synonyms: int = setting(
        0, "Also train on this many terminology names used as mentions of their concept.", minimum=0
    )
    max_length: int = 48
    quantize: str = setting("int8", "Quantization of the exported model.", choices=("int8", "none"))
    seed: int = 13
    device: str = "auto"
    freeze_embeddings: bool = False
    significance: float = 0.05
    mean_pooled: bool = False  # a plain cross-encoder over the mean of its tokens (see KarNetwork)


@dataclass(frozen=True)
class RescorerFitConfig:
    """depth: candidates read per mention. held_out_fold: the ranker's fold the cross-encoder never sees (the
    fusion is fitted on it). The rest trains the cross-encoder, as for ``medlink train candidate-reranker``."""

    depth: int = 5
    held_out_fold: int = 0
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 3e-5
    max_length: int = 32
    quantize: str = "int8"
    mean_pooled: bool = True  # e5's tokens were trained to be averaged; its first token is no summary
    freeze_embeddings: bool = True  # a multilingual vocabulary is most of the model: its rows stay as they are
    device: str = "auto"
    seed: int = 13
