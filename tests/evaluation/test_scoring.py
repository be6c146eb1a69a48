"""The strict scorer on hand-made cases, one per rule: alternatives, composites, sets, nil, lenient mode."""

import pytest

from medlink.evaluation.corpus import Gold, parse_pubtator_ids
from medlink.evaluation.scoring import Prediction, is_correct, rank_of_gold, recall_at_k, score


def gold(field: str) -> Gold:
    return parse_pubtator_ids(field, "MESH")


def pred(*ranked: str, claims: int = 1, parts=()) -> Prediction:
    return Prediction(concepts=tuple(ranked[:claims]), ranked=tuple(ranked), parts=tuple(parts))


NIL = Prediction()


def test_pubtator_id_conventions() -> None:
    assert gold("D1").parts == (("MESH:D1",),)
    assert gold("D1+D2").parts == (("MESH:D1", "MESH:D2"),)
    assert gold("D1|D2").parts == (("MESH:D1",), ("MESH:D2",))
    assert gold("OMIM:123|D2+D3").parts == (("OMIM:123",), ("MESH:D2", "MESH:D3"))
    assert gold("-1").is_nil and gold("").is_nil
    assert str(gold("D1+D2|D3")) == "MESH:D1+MESH:D2|MESH:D3"


def test_single_concept_at_k() -> None:
    g = gold("D1")
    assert is_correct(g, pred("MESH:D1", "MESH:D9"), k=1)
    assert not is_correct(g, pred("MESH:D9", "MESH:D1"), k=1)
    assert is_correct(g, pred("MESH:D9", "MESH:D1"), k=2)
    assert rank_of_gold(g, pred("MESH:D9", "MESH:D8", "MESH:D1")) == 3


def test_alternatives_either_id_is_right() -> None:
    g = gold("D1+D2")
    assert is_correct(g, pred("MESH:D2"))
    assert is_correct(g, pred("MESH:D1"))
    assert not is_correct(g, pred("MESH:D3"))


def test_claiming_several_concepts_for_a_single_gold_is_wrong_in_strict_mode() -> None:
    two_claims = pred("MESH:D1", "MESH:D2", claims=2)
    assert not is_correct(gold("D1"), two_claims)
    assert is_correct(gold("D1"), two_claims, mode="lenient")


def test_composite_needs_every_part_in_any_order() -> None:
    g = gold("D1|D2")
    assert is_correct(g, Prediction(parts=(pred("MESH:D2"), pred("MESH:D1"))))
    assert not is_correct(g, Prediction(parts=(pred("MESH:D1"), pred("MESH:D3"))))
    assert not is_correct(g, Prediction(parts=(pred("MESH:D1"), pred("MESH:D1"))))  # one part used twice
    assert not is_correct(g, pred("MESH:D1"))  # only one concept predicted for two parts
    assert is_correct(g, pred("MESH:D1", "MESH:D2", claims=2))  # not split, but claims both
    assert is_correct(g, pred("MESH:D1"), mode="lenient")  # SapBERT's rule: any overlap counts


def test_composite_parts_at_k() -> None:
    g = gold("D1|D2")
    prediction = Prediction(parts=(pred("MESH:D9", "MESH:D1"), pred("MESH:D2")))
    assert not is_correct(g, prediction, k=1)
    assert is_correct(g, prediction, k=2)


def test_composite_with_alternatives_in_a_part() -> None:
    g = gold("D1+D5|D2")
    assert is_correct(g, Prediction(parts=(pred("MESH:D5"), pred("MESH:D2"))))


def test_several_concepts_need_the_exact_set() -> None:
    g = Gold.of([["CODE:C56", "CODE:C56.x"], ["CODE:M8010/3"]])  # CHIP-CDN: each name may have several codes
    assert is_correct(g, pred("CODE:C56.x", "CODE:M8010/3", claims=2))
    assert not is_correct(g, pred("CODE:C56", claims=1))
    assert not is_correct(g, pred("CODE:C56", "CODE:M8010/3", "CODE:X", claims=3))


def test_nil_is_a_label() -> None:
    assert is_correct(gold("-1"), NIL)
    assert not is_correct(gold("-1"), pred("MESH:D1"))
    assert not is_correct(gold("D1"), NIL)
    assert not is_correct(gold("-1"), pred("MESH:D1"), mode="lenient")


def test_score_aggregates_accuracy_mrr_and_nil() -> None:
    golds = [gold("D1"), gold("D2"), gold("D3|D4"), gold("-1"), gold("-1")]
    predictions = [
        pred("MESH:D1", "MESH:D9"),  # right at 1
        pred("MESH:D9", "MESH:D2"),  # right at 2
        Prediction(parts=(pred("MESH:D3"), pred("MESH:D4"))),  # composite right
        NIL,  # true nil
        pred("MESH:D7"),  # missed nil
    ]
    scores = score(golds, predictions, ks=(1, 2))
    assert scores.n == 5
    assert scores.accuracy == {1: 3 / 5, 2: 4 / 5}
    assert scores.mrr == pytest.approx((1 + 0.5 + 1 + 1 + 0) / 5)
    assert (scores.nil.gold_nil, scores.nil.predicted_nil, scores.nil.true_nil) == (2, 1, 1)
    assert scores.nil.precision == 1.0 and scores.nil.recall == 0.5
    assert scores.correct_at_1 == (True, False, True, True, False)
    data = scores.as_dict()
    assert data["acc@1"] == 0.6 and data["acc@2"] == 0.8


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        score([gold("D1"), gold("D2")], [NIL])


def test_recall_at_k_of_a_candidate_stage() -> None:
    golds = [gold("D1"), gold("D2"), gold("D3|D4"), gold("-1")]
    rankings = [["MESH:D1"], ["MESH:D5", "MESH:D2"], [], []]
    assert recall_at_k(golds, rankings, (1, 2)) == {1: 0.5, 2: 1.0}  # composites and nil are not counted


def test_set_scores_count_each_gold_part_once() -> None:
    from medlink.evaluation.scoring import set_matches

    golds = [Gold.of([["A"], ["B"]]), Gold.of([["C", "C2"]]), Gold.of([]), Gold.of([["D"]])]
    predictions = [
        Prediction(concepts=("A", "X")),  # one of two parts, one wrong id
        Prediction(concepts=("C2", "C")),  # alternatives of one part: the second answers nothing new
        Prediction(),  # a nil mention, predicted nil: nothing on either side
        Prediction(concepts=("D",)),
    ]
    assert [set_matches(g, p) for g, p in zip(golds, predictions, strict=True)] == [1, 1, 0, 1]
    sets = score(golds, predictions).sets
    assert (sets.true_positives, sets.predicted, sets.gold) == (3, 5, 4)
    assert sets.precision == pytest.approx(0.6) and sets.recall == pytest.approx(0.75)
    assert sets.f1 == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert score(golds, predictions).as_dict()["set_f1"] == pytest.approx(sets.f1)


def test_implication_scores_split_single_and_several_concept_mentions() -> None:
    golds = [Gold.of([["A"], ["B"]]), Gold.of([["C"]]), Gold.of([["D"]]), Gold.of([]), Gold.of([["E"], ["F"], ["G"]])]
    predictions = [
        Prediction(concepts=("A", "B")),  # both parts, count right
        Prediction(concepts=("C", "X")),  # right at rank 1 but claims two: count wrong
        Prediction(concepts=("Y",)),  # wrong, count right
        Prediction(concepts=("Z",)),  # nil gold: left out of the count
        Prediction(concepts=("E", "F", "G", "H")),  # 3+ and 3+: count right
    ]
    implication = score(golds, predictions).implication
    assert (implication.single.true_positives, implication.single.predicted, implication.single.gold) == (1, 3, 2)
    assert (implication.several.true_positives, implication.several.predicted, implication.several.gold) == (5, 6, 5)
    assert implication.count_accuracy == pytest.approx(3 / 4)
    assert implication.single_accuracy == pytest.approx(0.0)  # "C, X" is not exactly "C" in strict mode
    as_dict = score(golds, predictions).as_dict()
    assert as_dict["count_accuracy"] == pytest.approx(0.75)
    assert as_dict["set_f1_several"] == pytest.approx(implication.several.f1)
