"""One door: a linker is a LinkerSpec of one of four kinds, made by Linker.load, and every one of them pickles."""

import pickle
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.index import build_index, ontology_entries
from medlink.linking import Linker, LinkerConfig, Stage
from medlink.linking.pipeline import DEFAULT_SIEVES
from medlink.linking.spec import (
    DESCRIPTORS,
    MESH,
    EmbeddedDefault,
    ExactMatch,
    OverIndex,
    SetRanked,
    TrainingMentions,
    described,
    linker_spec,
)
from medlink.terminology import Terminology, save_terminology
from medlink.terminology.records import Name, NameKind, make_concept

MENTIONS = TrainingMentions.of([("sugar disease", ["MESH:D003920"]), ("BP high", ["MESH:D006973"])])


def test_flat_options_make_one_kind_each() -> None:
    assert linker_spec() == EmbeddedDefault()
    assert linker_spec(embedded=DESCRIPTORS, ef_search=64) == EmbeddedDefault(DESCRIPTORS, ef_search=64)
    assert linker_spec(exact_only=True) == ExactMatch()
    assert linker_spec("t", exact_only=False, terminology="terms") == OverIndex(Path("t"), Path("terms"))
    assert linker_spec(terminology="terms", exact_only=True) == ExactMatch(Path("terms"))
    assert linker_spec(ranker="r") == SetRanked(Path("r"))
    assert linker_spec("idx").sieves == DEFAULT_SIEVES
    assert OverIndex("idx") == OverIndex(Path("idx"))  # paths given as text compare equal to paths
    assert linker_spec(mentions=MENTIONS).mentions == MENTIONS


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ranker": "r", "index": "i"}, "a ranker links on its own"),
        ({"ranker": "r", "mentions": MENTIONS}, "remembers the training mentions"),
        ({"exact_only": True, "reranker": "x"}, "no retrieval decisions to rerank"),
        ({"exact_only": True, "index": "i"}, "searches no index"),
        ({"exact_only": True, "sieves": "exact"}, "has one sieve"),
        ({"terminology": "t"}, "needs an index built from it"),
        ({"sieves": "exact,OD-T"}, "a sieve order needs an index"),
        ({"embedded": "chemicals"}, "embedded must be one of"),
    ],
)
def test_options_that_do_not_go_together_are_refused_saying_which(options, message) -> None:
    with pytest.raises(MedlinkError, match=message):
        linker_spec(**options)


def test_a_spec_is_given_alone() -> None:
    with pytest.raises(MedlinkError, match="give it alone"):
        Linker.load(ExactMatch(), sieves="exact")


def test_training_mentions_show_by_their_number_and_compare_by_value() -> None:
    assert repr(MENTIONS) == "TrainingMentions(2 mentions)"
    assert TrainingMentions.of([("sugar disease", ("MESH:D003920",)), ("BP high", ["MESH:D006973"])]) == MENTIONS
    assert not TrainingMentions()
    words = described(OverIndex("idx", mentions=MENTIONS))
    assert words == {
        "kind": "index",
        "index": "idx",
        "terminology": None,
        "sieves": DEFAULT_SIEVES,
        "ef_search": None,
        "reranker": None,
        "mentions": "2",
    }


@pytest.fixture(scope="module")
def saved(encoder, tmp_path_factory) -> tuple[Path, Path]:
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003920", "Diabetes Mellitus"),
        ]
    )
    root = tmp_path_factory.mktemp("spec")
    save_terminology(terminology, root / "terms")
    origin = {"encoder": "minilm", "backend": "onnx", "terminology": str(root / "terms")}
    build_index(ontology_entries(terminology), encoder, root / "index", terminology.fingerprint(), origin=origin)
    return root / "index", root / "terms"


def test_every_kind_with_training_mentions_pickles_and_links_the_same(saved) -> None:
    index, terms = saved
    for spec in (ExactMatch(terms, mentions=MENTIONS), OverIndex(index, mentions=MENTIONS)):
        linker = Linker.load(spec, config=LinkerConfig(nil_threshold=0))
        copy = pickle.loads(pickle.dumps(linker))
        assert copy.spec == spec and copy.config == linker.config
        for linked in (linker, copy):
            sugar, attack = linked.link_many(["Sugar Disease", "heart attack"])
            assert (sugar.stage, sugar.strategy, sugar.concepts) == (Stage.EXACT, "D", ("MESH:D003920",))
            assert attack.concepts == ("MESH:D009203",)
    without = Linker.load(ExactMatch(terms))
    assert without.link("Sugar Disease").concepts == ()  # the mentions are what linked it


def test_settings_changed_later_keep_the_spec_and_its_calibration(saved) -> None:
    from medlink.index.update import update_manifest

    index, _ = saved
    update_manifest(index, nil_threshold=0.99)
    try:
        linker = Linker.load(OverIndex(index))
        assert linker.config.nil_threshold == 0.99
        other = linker.with_config(LinkerConfig(split_composites=False))
        assert other.spec == linker.spec and other.config.nil_threshold == 0.99
        assert pickle.loads(pickle.dumps(other)).config.nil_threshold == 0.99
    finally:
        update_manifest(index, nil_threshold=None)


def test_the_embedded_kinds_name_which_mesh() -> None:
    assert EmbeddedDefault().embedded == MESH and ExactMatch(embedded=DESCRIPTORS).embedded == DESCRIPTORS
    assert {kind.kind for kind in (EmbeddedDefault, ExactMatch, OverIndex, SetRanked)} == {
        "embedded default",
        "exact match",
        "index",
        "set ranker",
    }


def test_empty_texts_are_options_not_given_and_bad_values_are_refused_whatever_else_is_given() -> None:
    assert linker_spec("", terminology="", ranker="", reranker="", sieves="") == EmbeddedDefault()
    assert linker_spec(terminology="", exact_only=True) == ExactMatch()
    for options in ({"ranker": "r"}, {"index": "i"}):
        with pytest.raises(MedlinkError, match="embedded must be one of"):
            linker_spec(embedded="bogus", **options)


@pytest.mark.parametrize(
    "make",
    [
        lambda: OverIndex("idx", sieves=None),
        lambda: OverIndex("idx", sieves=" "),
        lambda: OverIndex(""),
        lambda: OverIndex("idx", mentions=[("MI", ("MESH:D009203",))]),
        lambda: ExactMatch(mentions=[("MI", ("MESH:D009203",))]),
    ],
)
def test_a_spec_made_directly_checks_itself(make) -> None:
    with pytest.raises(MedlinkError):
        make()


def test_an_unknown_option_is_named() -> None:
    with pytest.raises(TypeError, match="colour"):
        Linker.load(ExactMatch(), colour="red")
    with pytest.raises(TypeError, match="colour"):
        linker_spec(colour="red")
