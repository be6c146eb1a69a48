"""Fitting the term model (``linking/mentions/term_model.py``): is a mention a term at all, from its vector and
best score.

Positives: the correct dense decisions of a calibration corpus and a sample of the terminology's names; negatives:
medlink's non-medical negatives the linker searches. The fit is cross-validated so that the cut, chosen by the
accuracy budget of :mod:`medlink.evaluation.calibration`, is set on decisions no fitted model saw.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from medlink.encoders.base import Encoder
from medlink.evaluation.calibration import Decisions, budget_threshold
from medlink.linking.mentions.term_model import TermModel
from medlink.terminology import Terminology


def fit_term_model(
    decisions: Decisions,
    terminology: Terminology,
    encoder: Encoder,
    max_loss: float,
    floor: float,
    names: int = 4000,
    folds: int = 5,
    seed: int = 0,
) -> tuple[TermModel, float]:
    """A term model on the correct decisions and ``names`` sampled terminology names (score 1) against the searched
    negatives; its cut is the budget's. Returns it and the share of the negatives nil under it and the score
    ``floor``."""
    from sklearn.linear_model import LogisticRegression

    right = [(r.mention, r.score) for r in decisions.correct()]
    wrong = [(r.mention, r.score) for r in decisions.scored_negatives()]
    all_names = terminology.normalized_names()
    sampled = random.Random(seed).sample(all_names, min(names, len(all_names)))

    def features(items: Sequence[tuple[str, float | None]]) -> np.ndarray:
        vectors = encoder.encode([text for text, _ in items])
        return np.hstack([vectors, np.array([[score or 0.0] for _, score in items], dtype=np.float32)])

    right_features, negative_features = features(right), features(wrong)
    name_features = features([(name, 1.0) for name in sampled])
    # Cross-fitted: each fold's model is fitted without a fifth of the decisions and judges that fifth, so the cut is
    # chosen on decisions no model saw (in-sample ones would put it too high: on NCBI-disease test, 0.45-0.6 points
    # lost instead of the budget's 0.05). The model kept is the mean of the fold models.
    rng = np.random.default_rng(seed)
    right_fold, wrong_fold = rng.integers(0, folds, len(right)), rng.integers(0, folds, len(wrong))
    right_decisions, wrong_decisions = np.zeros(len(right)), np.zeros(len(wrong))
    weights, biases = [], []
    for fold in range(folds):
        positives = np.vstack([right_features[right_fold != fold], name_features])
        negatives_in = negative_features[wrong_fold != fold]
        fitted = LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000).fit(
            np.vstack([positives, negatives_in]), np.r_[np.ones(len(positives)), np.zeros(len(negatives_in))]
        )
        for judged, features_, held in (
            (right_decisions, right_features, right_fold == fold),
            (wrong_decisions, negative_features, wrong_fold == fold),
        ):
            if held.any():
                judged[held] = fitted.decision_function(features_[held])
        weights.append(fitted.coef_[0])
        biases.append(float(fitted.intercept_[0]))
    mentions = len(decisions.evaluation.golds)
    cut = budget_threshold(right_decisions.tolist(), wrong_decisions.tolist(), mentions, max_loss)
    model = TermModel(
        tuple(float(w) for w in np.mean(weights, axis=0)),
        float(np.mean(biases)),
        float(cut if cut is not None else 0.0),
        encoder.identity.fingerprint(),
    )
    wrong_scores = [score or 0.0 for _, score in wrong]
    caught = sum(1 for d, s in zip(wrong_decisions, wrong_scores, strict=True) if d < model.cut or s < floor)
    return model, (caught + decisions.refused) / decisions.negatives if decisions.negatives else 0.0
