"""Nil calibration with the real MiniLM on a hand-made development set."""

import pytest

from medlink.evaluation.calibration import calibrate
from medlink.evaluation.corpus import Corpus, Gold, GoldMention
from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.linking import Stage
from medlink.terminology import Terminology
from medlink.terminology.records import Name, make_concept
from support import dense_linker


@pytest.fixture(scope="module")
def linker(encoder, tmp_path_factory):
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack")]),
            make_concept("MESH:D007052", "Ibuprofen", [Name("Motrin")]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure")]),
        ]
    )
    folder = build_index(
        ontology_entries(terminology), encoder, tmp_path_factory.mktemp("cal") / "i", terminology.fingerprint()
    )
    return dense_linker(terminology, VectorIndex.load(folder), encoder)


def mention(text: str, concept: str | None) -> GoldMention:
    return GoldMention(text, Gold.of([[concept]] if concept else []))


def test_three_strategies_and_their_order(linker) -> None:
    dev = Corpus(
        "dev",
        (
            mention("myocardial infarct in the elderly", "MESH:D009203"),
            mention("motrin tablets", "MESH:D007052"),
            mention("blood pressure too high", "MESH:D006973"),
            mention("the weather was lovely", None),
            mention("placebo tablet twice daily", None),
            mention("heart attack", "MESH:D009203"),
        ),
    )
    result = calibrate(linker, dev, "auto")
    low, high = result.thresholds["max-tp"], result.thresholds["min-fp"]
    assert low is not None and high is not None and result.thresholds["weighted"] is not None
    assert result.true_positives == 3 and result.false_positives == 2  # the exact match is not a dense decision
    share = 3 / 5
    assert result.thresholds["weighted"] == pytest.approx(share * high + (1 - share) * low)
    assert result.strategy in ("min-fp", "max-tp", "weighted")
    assert result.accuracy[result.strategy] == max(result.accuracy[s] for s in ("min-fp", "max-tp", "weighted"))
    assert set(result.accuracy) == {"min-fp", "max-tp", "weighted", "budget", "none"}


def test_without_nil_cases_only_max_tp_is_defined(linker) -> None:
    result = calibrate(linker, Corpus("dev", (mention("motrin tablets", "MESH:D007052"),)), "auto")
    assert result.thresholds["min-fp"] is None and result.thresholds["weighted"] is None
    assert result.strategy == "max-tp"
    assert calibrate(linker, Corpus("dev", (mention("motrin tablets", "MESH:D007052"),))).threshold == pytest.approx(
        result.thresholds["max-tp"]
    )  # budget on one mention may lose none


def test_stored_threshold_is_used_by_the_linker(linker) -> None:
    from dataclasses import replace

    strict = type(linker)(linker.terminology, linker.sieves, replace(linker.config, nil_threshold=0.99))
    assert strict.link("the weather was lovely").stage is Stage.NIL
