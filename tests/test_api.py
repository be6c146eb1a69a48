"""The Python API: ``medlink.link``, ``Linker.load``, pickling into process pools, threads, the results cache."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace

import pytest

import medlink
from medlink import Linker, Mention, Stage
from medlink.terminology import load_default_terminology

MENTIONS = [
    "heart attack",
    "Crohn's disease",
    "myocardial infarctoin",
    "type 2 diabetes",
    "breast and ovarian cancer",
    "",
    "no such disease at all qqq",
]


@pytest.fixture(scope="module")
def default() -> Linker:
    return Linker.load()  # the embedded default, exact → dense; its index is built once per test session


def _link_in_worker(linker: Linker, mentions: list[str]) -> list[dict]:
    return [result.to_dict() for result in linker.link_many(mentions)]


@pytest.mark.slow
def test_one_shot_link_and_top_level_names() -> None:
    assert medlink.link("heart attack").concept_id == "MESH:D009203"
    results = medlink.link(["heart attack", Mention("Crohn's disease")])
    assert [r.concept_id for r in results] == ["MESH:D009203", "MESH:D003424"]
    assert set(medlink.__all__) - {"__version__"} == set(medlink._EXPORTS)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        medlink.nothing  # noqa: B018


@pytest.mark.slow
def test_load_default_runs_exact_then_dense(default: Linker) -> None:
    exact, dense = default.link_many(["heart attack", "myocardial infarctoin"])
    assert exact.stage is Stage.EXACT and dense.stage is Stage.DENSE
    assert dense.concept_id == "MESH:D009203"
    assert dense.to_dict()["candidates"][0]["concept_id"] == "MESH:D009203"


def test_load_refuses_options_that_do_not_go_together(tmp_path) -> None:
    with pytest.raises(medlink.MedlinkError, match="exact-only linking searches no index"):
        Linker.load(tmp_path, exact_only=True)
    with pytest.raises(medlink.MedlinkError, match="needs an index"):
        Linker.load(terminology=tmp_path)


@pytest.mark.slow
def test_pickled_linker_rebuilds_lazily_and_links_the_same(default: Linker) -> None:
    strict = default.with_config(replace(default.config, nil_threshold=0.5))
    data = pickle.dumps(strict)
    assert len(data) < 2_000  # the recipe and settings, not the index
    copy = pickle.loads(data)
    assert "terminology" not in vars(copy)  # nothing heavy is loaded until the copy is used
    assert copy.config.nil_threshold == 0.5
    assert [r.to_dict() for r in copy.link_many(MENTIONS)] == [r.to_dict() for r in strict.link_many(MENTIONS)]
    assert "terminology" in vars(copy)
    with pytest.raises(AttributeError):
        default.config = strict.config  # type: ignore[misc]  # settings are fixed: with_config makes another linker


def test_a_linker_assembled_from_parts_says_why_it_cannot_pickle() -> None:
    with pytest.raises(TypeError, match=r"assembled from parts.*Linker\.load"):
        pickle.dumps(Linker(load_default_terminology()))


@pytest.mark.slow
def test_linker_in_a_spawned_process_pool(default: Linker) -> None:
    expected = _link_in_worker(default, MENTIONS)
    context = multiprocessing.get_context("spawn")  # the strictest start method: everything is pickled
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        outputs = list(pool.map(_link_in_worker, [default, default], [MENTIONS, MENTIONS[::-1]]))
    assert outputs[0] == expected
    assert outputs[1] == expected[::-1]


@pytest.mark.slow
def test_threads_share_one_linker(default: Linker) -> None:
    default.clear_cache()
    batches = [MENTIONS[i:] + MENTIONS[:i] for i in range(len(MENTIONS))] * 4
    with ThreadPoolExecutor(max_workers=8) as pool:
        outputs = list(pool.map(lambda batch: _link_in_worker(default, batch), batches))
    for batch, output in zip(batches, outputs, strict=True):
        assert output == _link_in_worker(default, batch)


@pytest.mark.slow
def test_repeats_are_served_from_the_cache_and_other_settings_are_another_linker(default: Linker) -> None:
    first = default.link("myocardial infarctoin")
    assert first.stage is Stage.DENSE
    assert default.link("myocardial infarctoin") is first  # a repeat is one lookup by its text
    strict = default.with_config(replace(default.config, nil_threshold=0.999))
    assert strict.link("myocardial infarctoin").stage is Stage.NIL  # decided under its own settings
    assert strict.sieves is default.sieves  # nothing reloaded
    assert default.link("myocardial infarctoin") is first


def test_mentions_with_a_document_are_not_cached_by_text() -> None:
    linker = Linker.load(exact_only=True)
    expanded = linker.link(Mention("CD", document="Crohn disease (CD) is a chronic illness."))
    assert expanded.concept_id == "MESH:D003424"
    assert linker.link(Mention("CD", document="Nothing defines it here.")).concept_id != "MESH:D003424"


@pytest.mark.slow
def test_branches_keep_the_default_linker_to_diseases(default: Linker) -> None:
    """Text alone lets every MeSH branch compete ("SRC" → a kinase, "Cryptococcus" → the fungus); with the disease
    branches the answer is a disease, or nil when none is among the candidates."""
    terminology = load_default_terminology()

    def in_diseases(concept_id: str) -> bool:
        return any(t.startswith(("C", "F03")) for t in terminology.concept(concept_id).tree_numbers)

    diseases = default.with_config(replace(default.config, branches=("C", "F03")))
    for text in ("SRC", "Cryptococcus"):
        assert not in_diseases(default.link(text).concepts[0])
        result = diseases.link(text)
        assert (result.concepts and in_diseases(result.concepts[0])) or (
            result.stage is Stage.NIL and "in branches C,F03" in result.reason
        ), result
    assert diseases.link("Cryptococcus").preferred_names == ("Cryptococcosis",)
