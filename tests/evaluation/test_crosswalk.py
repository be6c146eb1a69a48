"""The crosswalk between terminology releases: learned from annotated mentions and a newer release's terms (only
to descriptors created after the corpus), read back from its file or refused naming the line, and used by scoring
as a second figure beside the strict one."""

from __future__ import annotations

from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus, Gold, GoldMention
from medlink.evaluation.crosswalk import learn_crosswalk, read_crosswalk, shipped_crosswalk
from medlink.evaluation.runner import evaluate
from medlink.linking import Linker
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept


def _corpus(*mentions: tuple[str, str]) -> Corpus:
    return Corpus("test", tuple(GoldMention(text, Gold.of([[concept]])) for text, concept in mentions))


TERMS = [
    ("MESH:D000077152", "Olanzapine"),
    ("MESH:D000077152", "Zyprexa"),
    ("MESH:D000069348", "Quetiapine Fumarate"),
    ("MESH:D000069348", "Quetiapine"),
    ("MESH:D014150", "Antipsychotic Agents"),  # an old descriptor: annotators' variance, not a promotion
    ("MESH:D000077777", "QTP"),
    ("MESH:D000077778", "QTP"),  # a term of two new descriptors says nothing
]


def test_ids_move_to_the_new_descriptor_their_mentions_name() -> None:
    corpus = _corpus(
        ("olanzapine", "MESH:C076029"),
        ("Zyprexa", "MESH:C076029"),
        ("quetiapine", "MESH:C069541"),
        ("QTP", "MESH:C069541"),
        ("QTP", "MESH:C069541"),
        ("antipsychotic agents", "MESH:C999999"),
        ("olanzapine", "MESH:D003000"),  # the terminology knows this id: nothing to move
        ("nothing", "-1"),
    )
    known = {"MESH:D003000"}
    crosswalk = learn_crosswalk([corpus], known.__contains__, TERMS, str.casefold)
    assert dict(crosswalk.moves) == {"MESH:C076029": "MESH:D000077152"}  # quetiapine: 1 of 3 mentions only
    assert crosswalk.evidence["MESH:C076029"].startswith("2 of 2 mentions are terms of MESH:D000077152")
    assert crosswalk.gold(Gold.of([["MESH:C076029", "MESH:X"]])) == Gold.of([["MESH:D000077152", "MESH:X"]])
    assert crosswalk.moved_in(corpus) == 2


def test_the_file_round_trips_and_a_bad_line_is_refused_by_number(tmp_path: Path) -> None:
    crosswalk = learn_crosswalk([_corpus(("olanzapine", "MESH:C076029"))], lambda _: False, TERMS, str.casefold)
    path = tmp_path / "crosswalk.tsv"
    crosswalk.save(path, "a test")
    again = read_crosswalk(path)
    assert again.moves == crosswalk.moves and again.evidence == crosswalk.evidence
    path.write_text("# note\nold_id\tnew_id\tevidence\nMESH:C1\tMESH:D2\tx\nMESH:C1\n", encoding="utf-8")
    with pytest.raises(MedlinkError, match=r"crosswalk.tsv, line 4: expected old id, new id and evidence"):
        read_crosswalk(path)
    path.write_text("old\tnew\nMESH:C1\tMESH:D2\n", encoding="utf-8")
    with pytest.raises(MedlinkError, match=r"crosswalk.tsv, line 1: expected the header"):
        read_crosswalk(path)
    path.write_text("old_id\tnew_id\tevidence\nMESH:C1\tMESH:D2\tx\nMESH:C1\tMESH:D3\ty\n", encoding="utf-8")
    with pytest.raises(MedlinkError, match=r"line 3: MESH:C1 is moved twice"):
        read_crosswalk(path)


def test_the_shipped_crosswalk_moves_bc5cdr_promotions() -> None:
    shipped = shipped_crosswalk()
    assert shipped.moves["MESH:C076029"] == "MESH:D000077152"  # olanzapine
    assert all(new.startswith("MESH:D0000") for new in shipped.moves.values())


def test_evaluation_reports_the_strict_and_the_across_releases_figures_apart() -> None:
    terminology = Terminology.from_concepts(
        [make_concept("MESH:D000077152", "Olanzapine", [Name("Zyprexa", NameKind.ENTRY_TERM)])]
    )
    crosswalk = learn_crosswalk([_corpus(("olanzapine", "MESH:C076029"))], lambda _: False, TERMS, str.casefold)
    corpus = _corpus(("olanzapine", "MESH:C076029"), ("zyprexa", "MESH:D000077152"))
    evaluation = evaluate(Linker(terminology), corpus, ks=(1,), crosswalk=crosswalk)
    assert evaluation.scores.accuracy[1] == 0.5
    assert evaluation.across_releases is not None and evaluation.across_releases.accuracy[1] == 1.0
    assert evaluation.setup["crosswalk"] == {"name": "learned", "mentions_moved": 1}
    assert evaluate(Linker(terminology), corpus, ks=(1,)).across_releases is None
