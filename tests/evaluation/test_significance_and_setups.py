"""McNemar and bootstrap against hand-computed values; the refined, zero-shot and reduced-dictionary setups."""

import pytest

from medlink.evaluation.corpus import Corpus, Gold, GoldMention
from medlink.evaluation.setups import mean_over_folds, reduce_dictionary, refine, split_by_seen_concepts
from medlink.evaluation.significance import mcnemar, paired_bootstrap, paired_randomization
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


def test_mcnemar_exact_for_few_disagreements() -> None:
    a = [True] * 1 + [False] * 6 + [True] * 10
    b = [False] * 1 + [True] * 6 + [True] * 10
    result = mcnemar(a, b)
    assert (result.only_a, result.only_b) == (1, 6)
    assert result.method == "exact binomial"
    assert result.p_value == pytest.approx(2 * (1 + 7) / 2**7)  # 0.125


def test_mcnemar_chi_square_for_many_disagreements() -> None:
    a = [True] * 30 + [False] * 10
    b = [False] * 30 + [True] * 10
    result = mcnemar(a, b)
    assert result.statistic == pytest.approx((20 - 1) ** 2 / 40)
    assert result.p_value == pytest.approx(0.002663, abs=1e-6)  # chi2.sf(9.025, 1)


def test_mcnemar_identical_systems() -> None:
    assert mcnemar([True, False], [True, False]).p_value == 1.0


def test_paired_bootstrap_interval() -> None:
    a = [True] * 80 + [False] * 20
    b = [True] * 70 + [False] * 30
    result = paired_bootstrap(a, b, samples=2000, seed=1)
    assert result.difference == pytest.approx(0.10)
    assert result.low < 0.10 < result.high
    assert result.low >= 0.0 and result.high <= 0.25
    same = paired_bootstrap(a, a, samples=200)
    assert (same.difference, same.low, same.high) == (0.0, 0.0, 0.0)
    assert paired_bootstrap(a, b, samples=500, seed=3) == paired_bootstrap(a, b, samples=500, seed=3)


def mention(text: str, *ids: str) -> GoldMention:
    return GoldMention(text, Gold.of([[i] for i in ids]))


def test_refined_test_set_drops_train_overlap_then_duplicates() -> None:
    train = Corpus("train", (mention("Heart attacks", "M:1"), mention("cancer", "M:2")))
    test = Corpus(
        "test",
        (
            mention("heart attack", "M:1"),  # normalized text seen in train: dropped
            mention("breast tumour", "M:3"),
            mention("Breast tumour", "M:3"),  # duplicate of the previous after normalization: dropped
            mention("breast tumour", "M:4"),  # same text, other gold: kept
        ),
    )
    refined = refine(test, train)
    assert [(m.text, str(m.gold)) for m in refined] == [("breast tumour", "M:3"), ("breast tumour", "M:4")]


def test_zero_shot_and_stratified_subsets() -> None:
    train = Corpus("train", (mention("a", "M:1"),))
    test = Corpus("test", (mention("x", "M:1"), mention("y", "M:2"), mention("z", "M:1", "M:2"), mention("n")))
    zero_shot, stratified = split_by_seen_concepts(test, train)
    assert [m.text for m in zero_shot] == ["y"]
    assert [m.text for m in stratified] == ["x"]


def test_reduced_dictionary_keeps_a_fraction_and_every_concept() -> None:
    synonyms = [Name(f"synonym {i}", NameKind.EXACT) for i in range(9)]
    terminology = Terminology.from_concepts([make_concept("T:1", "one", synonyms), make_concept("T:2", "two")])
    reduced = reduce_dictionary(terminology, 0.2, seed=7)
    assert len(reduced) == 2
    assert len(reduced.names_of("T:1")) == 2 and reduced.names_of("T:1")[0].text == "one"
    assert len(reduced.names_of("T:2")) == 1
    assert reduce_dictionary(terminology, 0.2, seed=7).names_of("T:1") == reduced.names_of("T:1")
    with pytest.raises(ValueError, match="fraction must be in"):
        reduce_dictionary(terminology, 0)


def test_mean_over_folds() -> None:
    assert mean_over_folds([{"acc@1": 0.5, "n": 10, "mode": "strict"}, {"acc@1": 0.7, "n": 20, "mode": "strict"}]) == {
        "acc@1": pytest.approx(0.6),
        "n": 15.0,
    }


def test_paired_randomization_on_per_query_scores() -> None:

    same = paired_randomization([0.5, 0.2, 0.9], [0.5, 0.2, 0.9], samples=999)
    assert same.difference == 0.0 and same.p_value == 1.0
    better = paired_randomization([0.9] * 20, [0.1] * 20, samples=999)
    assert better.difference == pytest.approx(0.8) and better.p_value < 0.01 and better.queries == 20
    mixed = paired_randomization([0.9, 0.1] * 10, [0.1, 0.9] * 10, samples=999)
    assert mixed.p_value > 0.5
    with pytest.raises(ValueError, match="same, non-empty"):
        paired_randomization([], [])
