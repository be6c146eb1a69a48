"""Number agreement: a retrieved name stating another number than the mention gives way to one that agrees."""

import pytest

from medlink.index import build_index, ontology_entries
from medlink.index.vector_index import VectorIndex
from medlink.linking import LinkerConfig, Stage
from medlink.linking.mentions.numbers import agree_on_numbers, numbers_in
from medlink.linking.results import Candidate, LinkResult
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from support import dense_linker


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("X:SCA11", "Spinocerebellar Ataxia 11", [Name("SCA11", NameKind.EXACT)]),
            make_concept("X:SCA1", "Spinocerebellar Ataxia Type I", [Name("olivopontocerebellar atrophy I")]),
            make_concept("X:C3D", "Complement Component 3 Deficiency"),
            make_concept("X:C2D", "Complement Component 2 Deficiency"),
            make_concept("X:FU", "Fluorouracil"),
            make_concept("X:FC", "5-Fluorocytosine"),
        ]
    )


def test_numbers_come_from_digits_roman_numerals_and_ordinals(terminology) -> None:
    normalize = terminology.normalizer
    assert numbers_in(normalize("SCA1")) == {"1"}
    assert numbers_in(normalize("Spinocerebellar ataxia type I")) == {"1"}
    assert numbers_in(normalize("deficiency of the second component of complement")) == {"2"}
    assert numbers_in(normalize("15-F(2t)-isoprostane")) == {"15", "2"}
    assert numbers_in(normalize("factor 007")) == {"7"}
    assert numbers_in(normalize("ataxia")) == frozenset()


def _result(*candidates: tuple[str, str, float]) -> LinkResult:
    found = tuple(Candidate(cid, name, score) for cid, name, score in candidates)
    return LinkResult(
        "m",
        (found[0].concept_id,),
        Stage.DENSE,
        found[0].score,
        found[0].name,
        ("?",),
        found,
        reason="OD-T: best match",
    )


def test_a_close_candidate_with_the_same_numbers_wins(terminology) -> None:
    key = terminology.normalizer("deficiency of the second component of complement")
    result = _result(
        ("X:C3D", "Complement Component 3 Deficiency", 0.91), ("X:C2D", "Complement Component 2 Deficiency", 0.88)
    )
    agreed = agree_on_numbers(result, key, terminology, margin=0.05)
    assert agreed.concepts == ("X:C2D",) and agreed.score == 0.88
    assert agreed.matched_name == "Complement Component 2 Deficiency"
    assert agreed.preferred_names == ("Complement Component 2 Deficiency",)
    assert [c.concept_id for c in agreed.candidates] == ["X:C2D", "X:C3D"]
    assert "states 3, the mention 2" in agreed.reason
    assert agree_on_numbers(result, key, terminology, margin=0.02) == result  # too far behind


def test_names_without_numbers_never_conflict(terminology) -> None:
    result = _result(("X:FU", "Fluorouracil", 0.93), ("X:FC", "5-Fluorocytosine", 0.92))
    assert agree_on_numbers(result, terminology.normalizer("5-fluorouracil"), terminology, margin=0.5) == result
    plain = _result(("X:C3D", "Complement Component 3 Deficiency", 0.9), ("X:C2D", "x 2", 0.89))
    assert agree_on_numbers(plain, terminology.normalizer("complement deficiency"), terminology, 0.5) == plain


def test_the_linker_applies_it_to_dense_decisions(terminology, encoder, tmp_path) -> None:
    folder = build_index(ontology_entries(terminology), encoder, tmp_path / "index", terminology.fingerprint())
    index = VectorIndex.load(folder)
    plain = dense_linker(terminology, index, encoder, config=LinkerConfig(number_margin=None)).link("SCA1")
    assert plain.concepts == ("X:SCA11",)  # what the encoder alone prefers
    agreed = dense_linker(terminology, index, encoder, config=LinkerConfig(number_margin=1.0)).link("SCA1")
    assert agreed.stage is Stage.DENSE and agreed.concepts == ("X:SCA1",)
    assert "'SCA11' states 11, the mention 1" in agreed.reason
