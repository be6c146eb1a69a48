"""The concept-count head as the linker reads it: prediction, saving, loading, refusals."""

from pathlib import Path

import numpy as np
import pytest

from medlink.encoders.count_head import COUNT_HEAD_FILE, ConceptCountPredictor


def test_predicts_the_class_with_the_highest_score(tmp_path: Path) -> None:
    head = ConceptCountPredictor(np.array([[1.0, 0], [0, 1], [-1, -1]], np.float32), np.zeros(3, np.float32))
    vectors = np.array([[1.0, 0], [0, 1], [-1, -1]], np.float32)
    assert head.predict(vectors).tolist() == [1, 2, 3]
    again = ConceptCountPredictor.load(head.save(tmp_path).parent)
    assert again is not None and np.array_equal(again.predict(vectors), head.predict(vectors))
    with pytest.raises(ValueError, match="expects 2-dimensional vectors, got 3"):
        head.predict(np.zeros((1, 3), np.float32))


def test_a_folder_without_a_head_has_none_and_a_broken_one_is_refused(tmp_path: Path) -> None:
    assert ConceptCountPredictor.load(tmp_path) is None
    (tmp_path / COUNT_HEAD_FILE).write_text('{"weights": [[1, 2]], "bias": [0, 1]}')
    with pytest.raises(ValueError, match="not a count head"):
        ConceptCountPredictor.load(tmp_path)
