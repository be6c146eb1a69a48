"""Annotation rows are compared as linking rows are: medlink's against each peer's of the same kind, document F1
with a paired bootstrap interval over documents, and the report says where medlink is not ahead."""

import pytest

from medlink.benchmark.annotation_report import annotation_comparisons, comparison_lines
from medlink.benchmark.annotation_runs import AnnotationCell
from medlink.evaluation.end_to_end import PRF, EndToEnd
from medlink.evaluation.significance import paired_bootstrap_f1


def test_f1_bootstrap_over_documents() -> None:
    better = [(3, 3, 3)] * 40  # right, found, gold of each document
    worse = [(1, 3, 3)] * 40
    same = paired_bootstrap_f1(worse, worse)
    assert same.difference == same.low == same.high == 0.0
    ahead = paired_bootstrap_f1(better, worse)
    assert ahead.difference == pytest.approx(1.0 - 1 / 3)
    assert ahead.low > 0
    mixed = paired_bootstrap_f1([(3, 3, 3), (0, 3, 3)] * 20, [(0, 3, 3), (3, 3, 3)] * 20)
    assert mixed.low < 0 < mixed.high
    with pytest.raises(ValueError, match="same"):
        paired_bootstrap_f1(better, worse[:-1])


def _cell(
    system: str, counts: list[tuple[int, int, int]], ours: bool, trained: bool, shipped: bool = False
) -> AnnotationCell:
    right, found, gold = (sum(c[i] for c in counts) for i in range(3))
    prf = PRF(0.0, 0.0, 2 * right / (found + gold), found, gold, right)
    return AnnotationCell(
        "corpus",
        system,
        len(counts),
        EndToEnd(len(counts), prf, prf),
        1.0,
        ours=ours,
        trained=trained,
        shipped=shipped,
        per_document=tuple(counts),
    )


def test_medlink_rows_meet_the_peer_rows_of_their_kind_and_the_report_says_who_is_ahead() -> None:
    cells = [
        _cell("medlink names", [(3, 3, 3)] * 30, ours=True, trained=False),
        _cell("medlink trained", [(1, 3, 3)] * 30, ours=True, trained=True),
        _cell("peer names", [(2, 3, 3)] * 30, ours=False, trained=False),
        _cell("peer trained", [(3, 3, 3)] * 30, ours=False, trained=True),
        _cell("medlink default", [(2, 3, 3)] * 30, ours=True, trained=False, shipped=True),
        AnnotationCell("corpus", "peer gone", 30, None, unavailable="not installed"),
    ]
    pairs = {(row["a"], row["b"]): row for row in annotation_comparisons(cells)}
    assert set(pairs) == {
        ("medlink names", "peer names"),
        ("medlink trained", "peer trained"),
        ("medlink names", "peer gone"),
        ("medlink default", "peer names"),  # its corpus lexicon was taught by public training documents:
        ("medlink default", "peer trained"),  # compared with both kinds
        ("medlink default", "peer gone"),
    }
    assert pairs[("medlink names", "peer names")]["low"] > 0
    assert pairs[("medlink names", "peer gone")] == {
        "dataset": "corpus",
        "a": "medlink names",
        "b": "peer gone",
        "unavailable": True,
    }
    text = "\n".join(comparison_lines(list(pairs.values())))
    assert "peer trained is ahead of medlink trained" in text
    assert "medlink names is not ahead" not in text and "peer gone" not in text
    assert "medlink default is not ahead of peer names" in text  # the same F1 on every document
    assert "peer trained is ahead of medlink default" in text
