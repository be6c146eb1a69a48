"""The full pipeline with the real MiniLM: exact → D-T → OD-T, nil threshold, several concepts, refusals."""

import warnings

import pytest

from medlink.errors import MedlinkError
from medlink.index import VectorIndex, build_index, mention_entries, ontology_entries
from medlink.linking import LinkerConfig, Stage
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from support import dense_linker


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003424", "Crohn Disease", [Name("Regional Enteritis", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D007052", "Ibuprofen", [Name("Motrin", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003920", "Diabetes Mellitus"),
        ]
    )


@pytest.fixture(scope="module")
def index(terminology, encoder, tmp_path_factory) -> VectorIndex:
    entries = ontology_entries(terminology) + mention_entries(
        [("sugar disease", ["MESH:D003920"]), ("BP high", ["MESH:D006973"])], terminology
    )
    folder = build_index(entries, encoder, tmp_path_factory.mktemp("dense") / "index", terminology.fingerprint())
    return VectorIndex.load(folder)


def test_pipeline_order_and_stages(terminology, index, encoder) -> None:
    linker = dense_linker(terminology, index, encoder)
    assert [s.name for s in linker.sieves] == ["exact", "D-T", "OD-T"]
    exact, annotated, typo = linker.link_many(["heart attack", "Sugar Disease", "heart attak in the elderly"])
    assert (exact.stage, exact.strategy, exact.concepts) == (Stage.EXACT, "O", ("MESH:D009203",))
    assert (annotated.stage, annotated.strategy, annotated.concepts) == (Stage.EXACT, "D", ("MESH:D003920",))
    assert typo.stage is Stage.DENSE and typo.concepts == ("MESH:D009203",)
    assert typo.strategy == "OD-T"
    assert 0 < typo.score < 1 and typo.matched_name == "Heart Attack"
    assert typo.candidates[0].concept_id == "MESH:D009203"
    assert "OD-T: best match 'Heart Attack' scores" in typo.reason


def test_first_dense_sieve_decides_only_when_confident(terminology, index, encoder) -> None:
    linker = dense_linker(terminology, index, encoder, sieves="exact,D-T@0.99,O-T")
    result = linker.link("high blood pressure, sustained")
    assert result.strategy == "O-T"  # not close enough to a training mention: passed on to the names
    lenient = dense_linker(terminology, index, encoder, sieves="exact,D-T@0.0,O-T")
    assert lenient.link("high blood pressure, sustained").strategy == "D-T"


def test_centroid_strategy(terminology, index, encoder) -> None:
    linker = dense_linker(terminology, index, encoder, sieves="O-C")
    assert linker.link("motrin 200 mg").concepts == ("MESH:D007052",)


def test_nil_threshold_turns_weak_matches_into_nil(terminology, index, encoder) -> None:
    linker = dense_linker(terminology, index, encoder, config=LinkerConfig(nil_threshold=0.9))
    result = linker.link("the weather was nice yesterday")
    assert result.stage is Stage.NIL and result.concepts == ()
    assert "below the nil threshold 0.900" in result.reason
    assert result.candidates  # the evidence is kept
    assert linker.link("heart attack").stage is Stage.EXACT  # exact matches are never nil


def test_several_concepts_within_a_margin(terminology, index, encoder) -> None:
    linker = dense_linker(terminology, index, encoder, config=LinkerConfig(several_within=1.0))
    result = linker.link("heart attack and high blood pressure")
    assert result.several and len(result.concepts) > 1 and not result.ambiguous


def test_dense_results_are_deterministic_and_batched(terminology, index, encoder) -> None:
    mentions = ["heart attak", "motrin tabs", "heart attak", "crohns dz"]
    first = dense_linker(terminology, index, encoder).link_many(mentions)
    second = dense_linker(terminology, index, encoder).link_many(mentions[::-1])[::-1]
    assert first == second
    assert first[0] == first[2]


def test_huge_mention_is_nil_by_default_and_truncated_with_a_warning_without_the_limit(
    terminology, index, encoder
) -> None:
    refused = dense_linker(terminology, index, encoder).link("ibuprofen " * 10_000)
    assert refused.stage is Stage.NIL and "more than the limit of 1,000" in refused.reason
    linker = dense_linker(terminology, index, encoder, config=LinkerConfig(max_mention_chars=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = linker.link("ibuprofen " * 10_000)
    assert result.mention == "ibuprofen " * 10_000  # the original is kept
    assert result.concepts == ("MESH:D007052",)
    assert any("truncated" in str(w.message) for w in caught)


def test_index_from_another_terminology_is_refused(index, encoder) -> None:
    other = Terminology.from_concepts([make_concept("MESH:D1", "something else")])
    with pytest.raises(MedlinkError, match="not from the loaded terminology"):
        dense_linker(other, index, encoder)


def test_dense_sieve_without_an_index_is_explained(terminology) -> None:
    from medlink.linking.pipeline import parse_sieves

    with pytest.raises(MedlinkError, match="needs a vector index"):
        parse_sieves("exact,OD-T", terminology, None, None)
    with pytest.raises(MedlinkError, match="bad sieve 'XY-T'"):
        parse_sieves("XY-T", terminology, None, None)


def test_sparse_and_hybrid_sieves(terminology, index, encoder) -> None:
    from medlink.linking.results import Candidate
    from medlink.linking.sieves.sparse import fuse_candidates

    sparse = dense_linker(terminology, index, encoder, sieves="sparse").link("hypertensoin")
    assert (sparse.stage, sparse.concepts) == (Stage.SPARSE, ("MESH:D006973",))
    hybrid = dense_linker(terminology, index, encoder, sieves="hybrid=0.5").link("hypertensoin")
    assert (hybrid.stage, hybrid.concepts, hybrid.strategy) == (Stage.HYBRID, ("MESH:D006973",), "hybrid-OD-T=0.5")
    rrf = dense_linker(terminology, index, encoder, sieves="rrf").link("motrin tabs")
    assert rrf.concepts == ("MESH:D007052",) and rrf.strategy == "hybrid-OD-T-rrf"
    dense = [Candidate("A", "a", 0.9), Candidate("B", "b", 0.8)]
    sparse_only = [Candidate("B", "b", 0.9), Candidate("C", "c", 0.5)]
    assert [(c.concept_id, round(c.score, 3)) for c in fuse_candidates(dense, sparse_only, 0.5)] == [
        ("B", 0.85),
        ("A", 0.45),
        ("C", 0.25),
    ]
    assert [c.concept_id for c in fuse_candidates(dense, sparse_only, None)] == ["B", "A", "C"]  # B ranks 2nd and 1st


def test_training_mentions_join_a_copy_of_the_index(terminology, encoder, tmp_path) -> None:
    from medlink.index import MENTIONS
    from medlink.linking import Linker
    from medlink.linking.pipeline import with_training_mentions
    from medlink.terminology import save_terminology

    save_terminology(terminology, tmp_path / "terms")
    origin = {"encoder": "minilm", "backend": "onnx", "terminology": str(tmp_path / "terms")}
    names = build_index(
        ontology_entries(terminology), encoder, tmp_path / "names", terminology.fingerprint(), origin=origin
    )
    pairs = [("sugar disease", ["MESH:D003920"]), ("BP high", ["MESH:D006973"]), ("unknown", ["MESH:D000000"])]
    both = with_training_mentions(names, pairs)
    assert both != names and VectorIndex.load(both).count(MENTIONS) == 2  # the unknown concept is skipped
    assert VectorIndex.load(names).count(MENTIONS) == 0  # the original is left as it was
    written = (both / "manifest.json").stat().st_mtime_ns
    assert with_training_mentions(names, pairs) == both and (both / "manifest.json").stat().st_mtime_ns == written
    assert with_training_mentions(both, pairs) == both  # an index with mentions is used as it is
    result = Linker.load(both).link("Sugar Disease")
    assert (result.stage, result.strategy, result.concepts) == (Stage.EXACT, "D", ("MESH:D003920",))
