"""Evaluation setups beyond the standard split.

- :func:`refine`: the refined test set of Tutubalina et al. (2020), used by DILBERT: drop every test mention whose
  normalized text occurs among the training mentions, then keep one mention per (normalized text, gold label).
- :func:`split_by_seen_concepts`: zero-shot (no gold concept seen in training) vs stratified (all seen) subsets.
- :func:`reduce_dictionary`: keep a random fraction of each concept's names (DILBERT §5.5.3: 0.95 → 0.20); the
  preferred name is kept when only one name survives, so no concept disappears.
- :func:`mean_over_folds`: k-fold averages (CADEC's five folds).
- :func:`select_subset`: one of the above by name, as ``medlink eval --subset`` and benchmark configs say it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from medlink.evaluation.corpus import Corpus
from medlink.terminology import Terminology
from medlink.terminology.records import Concept
from medlink.text import Normalizer


def refine(test: Corpus, train: Corpus, normalizer: Normalizer | None = None) -> Corpus:
    normalize = normalizer or Normalizer()
    seen = {normalize(mention.text) for mention in train}
    kept, keys = [], set()
    for mention in test:
        text = normalize(mention.text)
        key = (text, mention.gold)
        if text in seen or key in keys:
            continue
        keys.add(key)
        kept.append(mention)
    return Corpus(f"{test.name} (refined)", tuple(kept), test.notes)


def split_by_seen_concepts(test: Corpus, train: Corpus) -> tuple[Corpus, Corpus]:
    """``(zero_shot, stratified)``: mentions none of whose gold ids occur in training, and all of whose do.

    Nil mentions and mentions with some ids seen and some unseen belong to neither.
    """
    seen = train.gold_ids()
    unseen = tuple(m for m in test if m.gold.ids() and not (m.gold.ids() & seen))
    known = tuple(m for m in test if m.gold.ids() and m.gold.ids() <= seen)
    return Corpus(f"{test.name} (zero-shot)", unseen, test.notes), Corpus(
        f"{test.name} (stratified)", known, test.notes
    )


SUBSETS = ("all", "refined", "zero-shot", "stratified")


def select_subset(test: Corpus, train: Corpus | None, subset: str, normalizer: Normalizer | None = None) -> Corpus:
    """The test mentions a setup scores: all, refined, zero-shot or stratified (the last three need ``train``)."""
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {', '.join(SUBSETS)}, not {subset!r}")
    if subset == "all":
        return test
    if train is None:
        raise ValueError(f"the {subset} setup is measured against the training corpus: give --train")
    if subset == "refined":
        return refine(test, train, normalizer)
    zero_shot, stratified = split_by_seen_concepts(test, train)
    return zero_shot if subset == "zero-shot" else stratified


def reduce_dictionary(terminology: Terminology, fraction: float, seed: int = 0) -> Terminology:
    """A copy keeping ``fraction`` of each concept's names (at least one), chosen with a fixed seed."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    rng = random.Random(seed)
    reduced: list[Concept] = []
    for concept in terminology:
        names = list(concept.names)
        keep = max(1, round(len(names) * fraction))
        chosen = sorted(rng.sample(range(len(names)), keep))
        if 0 not in chosen:
            chosen = [0, *chosen[1:]]  # the preferred name leads every concept's names
        reduced.append(Concept(**{**vars(concept), "names": tuple(names[i] for i in chosen)}))
    return Terminology.from_concepts(reduced, sources=terminology.sources, normalizer=terminology.normalizer)


def mean_over_folds(fold_scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average every numeric metric over folds (e.g. the five CADEC folds)."""
    if not fold_scores:
        raise ValueError("no folds to average")
    keys = [key for key, value in fold_scores[0].items() if isinstance(value, int | float)]
    return {key: sum(float(scores[key]) for scores in fold_scores) / len(fold_scores) for key in keys}
