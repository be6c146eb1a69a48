"""The exact-match Linker: self-explaining results, ambiguity, empty and nil mentions, deduplication."""

import pytest

from medlink.linking import Linker, LinkerConfig, Mention, Stage
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


@pytest.fixture
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003080", "Cold Temperature", [Name("Cold", NameKind.ENTRY_TERM)]),
            make_concept("MESH:D003139", "Common Cold", [Name("Cold", NameKind.EXACT)]),
            make_concept("MESH:D000001", "Cold", [Name("Coryza", NameKind.RELATED)]),
        ]
    )


def test_exact_match_explains_itself(terminology: Terminology) -> None:
    result = Linker(terminology).link("Infarction, Myocardial")
    assert result.concepts == ("MESH:D009203",)
    assert result.stage is Stage.EXACT
    assert result.score == 1.0
    assert result.matched_name == "Myocardial Infarction"
    assert result.preferred_names == ("Myocardial Infarction",)
    assert not result.ambiguous
    assert "preferred name 'Myocardial Infarction'" in result.reason


def test_shared_name_returns_every_concept_in_a_stable_order(terminology: Terminology) -> None:
    result = Linker(terminology).link("COLD")
    # preferred-name match first, then exact synonyms, then entry terms; ties by id
    assert result.concepts == ("MESH:D000001", "MESH:D003139", "MESH:D003080")
    assert result.ambiguous
    assert [c.concept_id for c in result.candidates] == list(result.concepts)
    assert "shared by 3 concepts" in result.reason


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "--"])
def test_empty_mentions_are_a_result_not_an_exception(terminology: Terminology, text: str) -> None:
    result = Linker(terminology).link(text)
    assert result.stage is Stage.EMPTY
    assert result.concepts == ()
    assert result.concept_id is None


def test_unknown_mention_is_nil_with_a_reason(terminology: Terminology) -> None:
    result = Linker(terminology).link("ibuprofen 600 mg tab")
    assert result.stage is Stage.NIL
    assert result.concepts == ()
    assert result.reason == "no concept found by: exact"


def test_link_many_keeps_order_and_original_text(terminology: Terminology) -> None:
    results = Linker(terminology).link_many(["heart attack", "Heart Attacks", "nothing", Mention("heart attack")])
    assert [r.mention for r in results] == ["heart attack", "Heart Attacks", "nothing", "heart attack"]
    assert [r.concept_id for r in results] == ["MESH:D009203", "MESH:D009203", None, "MESH:D009203"]


class RecordingSieve:
    """Decides nothing; records the keys it was asked about."""

    stage = Stage.EXACT
    name = "recording"

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def link_batch(self, items):
        self.calls.extend(key for _text, key in items)
        return [None] * len(items)


def test_repeated_keys_are_decided_once(terminology: Terminology) -> None:
    calls: list[str] = []
    linker = Linker(terminology, sieves=[RecordingSieve(calls)])
    linker.link_many(["heart attack", "Heart Attacks", "heart attack"])
    linker.link("HEART ATTACK")
    assert calls == ["heart attack"]
    uncached = Linker(terminology, sieves=[RecordingSieve(calls)], config=LinkerConfig(cache_size=0))
    uncached.link("a b")
    uncached.link("a b")
    assert calls == ["heart attack", "a b", "a b"]


def test_non_text_is_rejected_with_a_message(terminology: Terminology) -> None:
    with pytest.raises(TypeError, match="a mention must be text or a Mention, got int: 42"):
        Linker(terminology).link(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a mention must be text"):
        Mention(None)  # type: ignore[arg-type]


def test_results_are_deterministic(terminology: Terminology) -> None:
    mentions = ["cold", "heart attack", "x"]
    assert Linker(terminology).link_many(mentions) == Linker(terminology).link_many(list(reversed(mentions)))[::-1]


def test_to_dict_has_the_documented_fields(terminology: Terminology) -> None:
    data = Linker(terminology).link("heart attack").to_dict()
    assert {"mention", "concepts", "score", "stage", "matched_name", "candidates", "reason"} <= set(data)
    assert data["stage"] == "exact" and data["concepts"] == ["MESH:D009203"]


def test_embedded_default_links_myocardial_infarction() -> None:
    linker = Linker.load(exact_only=True, embedded="descriptors")
    assert linker.link("myocardial infarction").concepts == ("MESH:D009203",)
    assert linker.link("heart attack").concepts == ("MESH:D009203",)
    assert len(linker.terminology) == 30_764


def test_the_embedded_default_knows_all_of_mesh_descriptors_first() -> None:
    linker = Linker.load(exact_only=True)  # descriptors + supplementary records, compiled into the cache once
    assert len(linker.terminology) > 300_000
    for drug, record in (("dostarlimab", "MESH:C000719628"), ("tirzepatide", "MESH:C000629749")):
        assert linker.link(drug).concepts == (record,)
    mpox = linker.link("mpox")  # the disease descriptor ("Mpox (monkeypox)"), then the chemical record "MPOX"
    assert mpox.concepts == ("MESH:D045908", "MESH:C051836") and "descriptor" in mpox.reason
    chemical = linker.with_config(LinkerConfig(branches=("D",))).link("mpox")
    assert chemical.concepts == ("MESH:C051836",) and chemical.matched_name == "MPOX"
    typed = linker.link(Mention("mpox", entity_type="Chemical"))  # the mention's own type chooses, the other stays
    assert typed.concepts == ("MESH:C051836", "MESH:D045908") and "the mention is a Chemical" in typed.reason
    assert linker.link(Mention("mpox", entity_type="Gene")).concepts[0] == "MESH:D045908"  # a type MeSH lacks


def test_a_stream_longer_than_the_cache(terminology: Terminology) -> None:
    linker = Linker(terminology, config=LinkerConfig(cache_size=2))
    linker.link_many(["cold", "heart attack"])  # fills the cache
    results = linker.link_many(["cold", "a", "b", "c", "heart attack", "cold"])  # deciding clears it midway
    assert [r.concept_id for r in results] == ["MESH:D000001", None, None, None, "MESH:D009203", "MESH:D000001"]


def test_a_name_written_as_the_mention_comes_first_whatever_was_linked_before() -> None:
    terminology = Terminology.from_concepts(
        [make_concept("MESH:C031637", "phenothiazine"), make_concept("MESH:D010640", "Phenothiazines")]
    )
    linker = Linker(terminology)
    plural, singular = linker.link_many(["phenothiazines", "Phenothiazine"])  # one normalized key, one cache entry
    assert plural.concepts == ("MESH:D010640", "MESH:C031637")
    assert plural.matched_name == "Phenothiazines"
    assert plural.preferred_names == ("Phenothiazines", "phenothiazine")
    assert singular.concepts == ("MESH:C031637", "MESH:D010640")
    assert linker.link("phenothiazines ").concepts == plural.concepts


def test_an_overlong_mention_is_nil_before_any_work_and_composites_have_few_parts(terminology) -> None:
    searched: list[str] = []
    hostile = "+".join(f"a{i}" for i in range(200_000))  # 1.5 MB: 200,000 composite parts if it were split
    result = Linker(terminology, sieves=[RecordingSieve(searched)]).link(hostile)
    assert result.stage is Stage.NIL and "more than the limit of 1,000" in result.reason and searched == []
    unlimited = Linker(terminology, config=LinkerConfig(max_mention_chars=0)).link("x" * 5_000)
    assert "limit" not in unlimited.reason
    nine = " + ".join(["heart attack"] * 9)
    assert Linker(terminology).link(nine).stage is not Stage.COMPOSITE  # over max_composite_parts (8)
    three = " + ".join(["heart attack"] * 3)
    assert Linker(terminology).link(three).stage is Stage.COMPOSITE
