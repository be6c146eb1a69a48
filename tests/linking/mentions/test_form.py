"""The form test (linking/mentions/form.py): a found name that disagrees with the mention in form is a look-alike."""

from __future__ import annotations

import pytest

from medlink.linking import LinkerConfig
from medlink.linking.decisions import judge_forms as form_tested
from medlink.linking.mentions.form import FEATURES, FormJudge, FormModel, Vocabulary, inn_affix, read_form, words
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.terminology import Concept, Name, NameKind, Terminology


def test_words_drop_function_words_and_case() -> None:
    assert words("Breast and Ovarian Cancer") == ["breast", "ovarian", "cancer"]


def test_inn_affixes_need_a_stem() -> None:
    assert inn_affix("quextatinib") == "tinib"
    assert inn_affix("telzumab") == "zumab"
    assert inn_affix("tide") is None and inn_affix("imatinib2") is None


def test_the_vocabulary_knows_inflected_words() -> None:
    known = Vocabulary(["deficit", "tumour", "lapatinib"])
    assert known.knows("deficits") and known.knows("tumours")
    assert not known.knows("quextatinib")


def test_a_new_drug_name_clashes_with_its_look_alike() -> None:
    reading = read_form("quextatinib", ["Lapatinib"], 0.70, Vocabulary(["lapatinib"]))
    assert reading.clashing == ("quextatinib",) and reading.novel == ("quextatinib",)
    assert reading.features[FEATURES.index("stem_clash")] == 1.0


def test_a_misspelling_and_a_short_form_are_not_new_words() -> None:
    vocabulary = Vocabulary(["myocardial", "infarct", "infarction", "carcinoma"])
    misspelled = read_form("myocardial infarctoin", ["Myocardial Infarct", "Myocardial Infarction"], 0.9, vocabulary)
    assert misspelled.unmatched == () and misspelled.novel == ()
    short = read_form("NSCLC", ["Carcinoma, Non-Small-Cell Lung"], 0.9, vocabulary)
    assert short.unmatched == ("nsclc",) and short.novel == ()


def test_a_crowd_of_close_candidates_is_read() -> None:
    reading = read_form("thoracic vertebrae", ["Cervical Vertebrae"], 0.80, Vocabulary([]), [0.79, 0.70])
    assert reading.features[FEATURES.index("margin")] == pytest.approx(0.01)
    assert reading.features[FEATURES.index("crowd")] == 1.0


def test_a_model_over_other_features_is_refused() -> None:
    model = FormModel(tuple(float(i) for i in range(len(FEATURES))), 0.5, -1.0)
    assert FormModel.from_dict(model.to_dict()) == model
    with pytest.raises(ValueError, match="calibrate it again"):
        FormModel.from_dict({"weights": [1.0, 2.0], "bias": 0.0, "cut": 0.0, "features": ["score", "novel"]})


def _judge() -> FormJudge:
    lapatinib = Concept("MESH:D1", "Lapatinib", (Name("Lapatinib", NameKind.PREFERRED),))
    weights = tuple(-10.0 if name == "stem_clash" else 0.0 for name in FEATURES)  # a stem clash decides
    return FormJudge(FormModel(weights, 1.0, 0.0), Terminology.from_concepts([lapatinib]))


def _dense(mention: str) -> LinkResult:
    return LinkResult(
        mention,
        ("MESH:D1",),
        Stage.DENSE,
        0.70,
        "Lapatinib",
        ("Lapatinib",),
        (Candidate("MESH:D1", "Lapatinib", 0.70),),
    )


def test_a_look_alike_becomes_nil_saying_why() -> None:
    results = {"quextatinib": _dense("quextatinib"), "lapatinibe": _dense("lapatinibe")}
    tested = form_tested(results, _judge(), LinkerConfig(nil_threshold=0.5))
    assert tested["quextatinib"].stage is Stage.NIL and not tested["quextatinib"].concepts
    assert "closest name 'Lapatinib' differs in its stem from 'quextatinib'" in tested["quextatinib"].reason
    assert tested["lapatinibe"] == results["lapatinibe"]  # a misspelling keeps its link


def test_the_form_test_follows_the_settings() -> None:
    results = {"quextatinib": _dense("quextatinib")}
    assert form_tested(results, _judge(), LinkerConfig(nil_threshold=0.5, form_test=False)) == results
    assert form_tested(results, _judge(), LinkerConfig(nil_threshold=0)) == results  # nil not declared
