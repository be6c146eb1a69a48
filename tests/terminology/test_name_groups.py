"""The name groups a dense index is built from answer what an exact lookup answers, name by name."""

from __future__ import annotations

from medlink.terminology import Terminology
from medlink.terminology.name_groups import name_groups
from medlink.terminology.records import Name, NameKind, make_concept


def test_each_group_is_the_lookup_of_its_name_in_first_seen_order() -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept(
                "MESH:D2", "Heart Attack", [Name("MI", NameKind.ABBREVIATION), Name("heart attack!", NameKind.EXACT)]
            ),
            make_concept(
                "MESH:D1",
                "Myocardial Infarction",
                [Name("Heart attack", NameKind.ENTRY_TERM), Name("MI", NameKind.EXACT)],
            ),
            make_concept(
                "MESH:D3",
                "Mitral Insufficiency",
                [Name("MI", NameKind.ABBREVIATION), Name("mi", NameKind.ABBREVIATION)],
            ),
            make_concept("MESH:D4", "Attack, Heart", [Name("!!", NameKind.ENTRY_TERM)]),  # normalizes to nothing
        ]
    )
    groups = list(name_groups(terminology))
    assert [key for key, _, _ in groups] == terminology.normalized_names()
    for key, text, concepts in groups:
        matches = terminology.lookup_normalized(key)
        assert (text, concepts) == (matches[0].name, tuple(match.concept_id for match in matches))
    heart = next(group for group in groups if group[0] == terminology.normalizer("heart attack"))
    assert heart[2][0] == "MESH:D2"  # a preferred name outranks an entry term of another concept
    mi = next(group for group in groups if group[0] == terminology.normalizer("MI"))
    assert mi[2] == ("MESH:D1", "MESH:D2", "MESH:D3")  # an exact synonym first, then abbreviations by id
