"""A compressed build killed while filling its graph goes on from the graph it saved, and only from one saved for
the same rows and parameters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medlink.index import compressed
from medlink.index.compressed import CompressedParameters, write_compressed

ROWS, DIMENSION, KILLED_AT = 3_000, 32, 1_800


class Killed(RuntimeError):
    pass


class DiesAfter:
    """The vectors of a build that is killed when it reads past ``row`` (as a memory map is read, in chunks)."""

    def __init__(self, vectors: np.ndarray, row: int) -> None:
        self.vectors, self.row, self.shape = vectors, row, vectors.shape

    def __len__(self) -> int:
        return len(self.vectors)

    def __getitem__(self, selection):
        if isinstance(selection, slice) and selection.start >= self.row:
            raise Killed
        return self.vectors[selection]


def stored_codes(index) -> np.ndarray:
    import faiss

    return faiss.vector_to_array(faiss.downcast_index(index.storage).codes)


@pytest.fixture
def vectors() -> np.ndarray:
    rows = np.random.default_rng(7).normal(size=(ROWS, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch) -> None:
    monkeypatch.setattr(compressed, "_ADD_CHUNK", 600)
    monkeypatch.setattr(compressed, "CHECKPOINT_SECONDS", 0.0)  # save after every chunk


@pytest.mark.parametrize("codes", ["sq8", "pq"])
def test_a_killed_graph_build_resumes_from_its_checkpoint(codes, vectors, tmp_path, monkeypatch) -> None:
    import faiss

    parameters = CompressedParameters(codes=codes, links=8, ef_construction=40, training=ROWS)
    checkpoint = tmp_path / "O.graph.faiss"
    with pytest.raises(Killed):
        write_compressed(DiesAfter(vectors, KILLED_AT), tmp_path, "O", parameters, checkpoint=checkpoint)
    card = json.loads(checkpoint.with_suffix(".json").read_text())
    assert card["added"] == KILLED_AT and card["rows"] == ROWS
    saved = faiss.read_index(str(checkpoint))

    def not_again(*_):
        raise AssertionError("the graph was trained and filled again")

    monkeypatch.setattr(compressed, "_trained_graph", not_again)
    index = write_compressed(vectors, tmp_path, "O", parameters, checkpoint=checkpoint)
    assert index.ntotal == ROWS
    width = len(stored_codes(saved)) // KILLED_AT
    assert np.array_equal(stored_codes(index)[: KILLED_AT * width], stored_codes(saved))
    if codes == "pq":
        int8 = np.load(tmp_path / "O.int8.npy")
        assert int8.shape == (ROWS, DIMENSION) and np.count_nonzero(int8[-1])  # every row written, the last too
    index.hnsw.efSearch = 64
    _, found = index.search(vectors[::97], 1)
    assert np.mean(found[:, 0] == np.arange(ROWS)[::97]) >= 0.9  # the graph reaches rows from both runs


def test_a_checkpoint_of_other_parameters_or_rows_is_not_taken(vectors, tmp_path) -> None:
    checkpoint = tmp_path / "O.graph.faiss"
    with pytest.raises(Killed):
        write_compressed(
            DiesAfter(vectors, KILLED_AT), tmp_path, "O", CompressedParameters(links=8, training=ROWS), checkpoint
        )
    other = write_compressed(vectors, tmp_path, "O", CompressedParameters(links=12, training=ROWS), checkpoint)
    assert not (tmp_path / "O.int8.npy").exists()
    assert other.ntotal == ROWS and other.hnsw.nb_neighbors(1) == 12  # built afresh with its own links
    fewer = np.ascontiguousarray(vectors[::-1][: ROWS - 600])  # other rows, as many as the graph saved holds
    again = write_compressed(fewer, tmp_path, "O", CompressedParameters(links=12, training=ROWS), checkpoint)
    again.hnsw.efSearch = 64
    _, found = again.search(fewer[:50], 1)
    assert np.mean(found[:, 0] == np.arange(50)) >= 0.9  # built from these rows, not the saved graph of others


def test_a_damaged_checkpoint_or_one_of_other_vectors_is_built_afresh_and_stray_saves_go(vectors, tmp_path) -> None:
    parameters = CompressedParameters(links=8, training=ROWS)
    checkpoint = tmp_path / "O.graph.faiss"
    with pytest.raises(Killed):
        write_compressed(DiesAfter(vectors, KILLED_AT), tmp_path, "O", parameters, checkpoint)
    stray = tmp_path / "O.graph.faiss.999999.partial"
    stray.write_bytes(b"left by a save that was killed")
    shuffled = np.ascontiguousarray(vectors[::-1])  # the same shape and parameters, other vectors
    with pytest.raises(Killed):
        write_compressed(DiesAfter(shuffled, KILLED_AT), tmp_path, "O", parameters, checkpoint)
    assert not stray.exists()
    index = write_compressed(vectors, tmp_path, "O", parameters, checkpoint)
    index.hnsw.efSearch = 64
    _, found = index.search(vectors[:50], 1)
    assert np.mean(found[:, 0] == np.arange(50)) >= 0.9  # not the graph of the shuffled rows
    checkpoint.write_bytes(checkpoint.read_bytes()[:100])  # a save cut short under a valid card
    again = write_compressed(vectors, tmp_path, "O", parameters, checkpoint)
    assert again.ntotal == ROWS


def test_a_search_setting_changed_between_runs_keeps_the_saved_graph(vectors, tmp_path, monkeypatch) -> None:
    checkpoint = tmp_path / "O.graph.faiss"
    with pytest.raises(Killed):
        write_compressed(
            DiesAfter(vectors, KILLED_AT), tmp_path, "O", CompressedParameters(links=8, training=ROWS), checkpoint
        )

    def not_again(*_):
        raise AssertionError("the graph was trained and filled again")

    monkeypatch.setattr(compressed, "_trained_graph", not_again)
    changed = CompressedParameters(links=8, training=ROWS, ef_search=99, rescore=3)
    assert write_compressed(vectors, tmp_path, "O", changed, checkpoint).ntotal == ROWS
