"""How a terminology's names are written as a whole: the share in capitals and the words that end its longer names,
the same from concepts in memory and from a compiled store."""

from pathlib import Path

from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from medlink.terminology.store import load_terminology, save_terminology


def _terminology() -> Terminology:
    concepts = [make_concept("X:1", "Syndrome"), make_concept("X:2", "COPD", [Name("copd", NameKind.ENTRY_TERM)])]
    concepts += [make_concept(f"X:S{i}", f"Example {i} Syndrome") for i in range(6)]
    return Terminology.from_concepts(concepts)


def test_heads_and_capitals_are_counted_alike_in_memory_and_compiled(tmp_path: Path) -> None:
    in_memory = _terminology()
    compiled = load_terminology(save_terminology(in_memory, tmp_path / "compiled"))
    for terminology in (in_memory, compiled):
        statistics = terminology.name_statistics
        assert statistics.names == 9 and statistics.capitals_share == 1 / 9  # "COPD"
        assert statistics.multi_word == 6 and statistics.head_share("syndrome") == 1.0
        assert statistics.head_share("copd") == 0.0
        assert sorted(terminology.names_written("copd")) == ["COPD", "copd"]


def test_a_terminology_without_longer_names_has_no_heads() -> None:
    empty = Terminology.from_concepts([])
    assert empty.name_statistics.names == 0 and empty.name_statistics.capitals_share == 0.0
    single = Terminology.from_concepts([make_concept("X:1", "Gout")])
    assert single.name_statistics.multi_word == 0 and single.name_statistics.head_share("gout") == 0.0
