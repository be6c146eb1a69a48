"""The rerank stage: keyword lexicons, KAR inputs, a reranker trained by medlink's own code on real MiniLM
weights, fusion in the linker, refusals and resuming."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from tokenizers import Tokenizer

from medlink.cli import main
from medlink.encoders.registry import resolve_model
from medlink.errors import MedlinkError
from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.linking import Linker, LinkerConfig, Stage
from medlink.linking.mentions.branches import branches_for
from medlink.linking.rerank.inputs import PairEncoder
from medlink.linking.rerank.keywords import KeywordLexicon, derive_lexicon
from medlink.linking.rerank.reranker import CARD_FILE, Reranker, RerankerCard
from medlink.linking.results import Candidate, LinkResult
from medlink.linking.spec import linker_spec
from medlink.terminology import Terminology, save_terminology
from medlink.terminology.records import Name, NameKind, make_concept
from medlink.training.kar_network import load_network
from medlink.training.reranker_fit import (
    RerankerFitConfig,
    _train,
    finish_reranker,
    fit_reranker,
    fit_zero_shot,
    mine_examples,
    ranking_examples,
    synonym_pairs,
    train_network,
)
from medlink.training.reranker_fusion import RankingExample, fit_fusion
from support import dense_linker

ENTRY = NameKind.ENTRY_TERM


def concepts() -> list:
    def c(cid: str, name: str, trees: tuple[str, ...], parents: tuple[str, ...] = (), *synonyms: str):
        return make_concept(
            f"MESH:{cid}",
            name,
            [Name(s, ENTRY) for s in synonyms],
            tree_numbers=trees,
            parents=tuple(f"MESH:{p}" for p in parents),
        )

    return [
        c("D007668", "Kidney", ("A05.810.453",), (), "Kidneys", "Renal"),
        c("D008099", "Liver", ("A03.620",), (), "Hepatic"),
        c("D003106", "Colon", ("A03.556.124.526",)),
        c("D001940", "Breast", ("A01.236",), (), "Mammary"),
        c("D009369", "Neoplasms", ("C04",), (), "Tumors", "Cancer"),
        c("D007680", "Kidney Neoplasms", ("C04.588.945",), ("D009369",), "Renal Tumors", "Cancer of Kidney"),
        c("D008113", "Liver Neoplasms", ("C04.588.274",), ("D009369",), "Hepatic Neoplasms", "Cancer of Liver"),
        c("D003110", "Colonic Neoplasms", ("C04.588.274.476",), ("D009369",), "Colon Cancer"),
        c("D001943", "Breast Neoplasms", ("C04.588.180",), ("D009369",), "Breast Tumors", "Breast Cancer"),
        c("D011127", "Polyps", ("C23.300",), (), "Polyp"),
        c("D003111", "Colonic Polyps", ("C06.405.469",), ("D011127",), "Polyps of the Colon"),
        c("D002292", "Carcinoma, Renal Cell", ("C04.557.470",), ("D009369",), "Renal Cell Carcinoma"),
    ]


TRAINING = [
    ("renal cancer", "D007680"),
    ("kidney tumour", "D007680"),
    ("tumor of the kidneys", "D007680"),
    ("hepatic cancer", "D008113"),
    ("liver tumour", "D008113"),
    ("tumor of the liver", "D008113"),
    ("colon tumour", "D003110"),
    ("cancer of the colon", "D003110"),
    ("colonic cancer", "D003110"),
    ("mammary tumour", "D001943"),
    ("breast carcinoma", "D001943"),
    ("tumor of the breast", "D001943"),
    ("colon polyp", "D003111"),
    ("colonic polyposis", "D003111"),
    ("renal cell cancer", "D002292"),
    ("kidney cell carcinoma", "D002292"),
]


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(concepts())


@pytest.fixture(scope="module")
def index(terminology: Terminology, encoder, tmp_path_factory) -> VectorIndex:
    folder = tmp_path_factory.mktemp("rerank") / "index"
    return VectorIndex.load(build_index(ontology_entries(terminology), encoder, folder, terminology.fingerprint()))


def pairs() -> list[tuple[str, list[str]]]:
    return [(text, [f"MESH:{cid}"]) for text, cid in TRAINING]


@pytest.fixture(scope="module")
def reranker_dir(terminology: Terminology, index: VectorIndex, encoder, tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("reranker") / "kar"
    config = RerankerFitConfig(top_k=5, epochs=2, held_out=0.35, quantize="none", head_learning_rate=1e-2)
    fit_reranker(terminology, index, encoder, resolve_model("minilm"), pairs(), output, config, progress=False)
    return output


def test_lexicon_from_the_anatomy_tree_and_class_heads(terminology: Terminology) -> None:
    lexicon = derive_lexicon(terminology, min_heads=1)
    assert {"kidney", "renal", "hepatic", "colon", "mammary"} <= lexicon.sites
    assert {"neoplasm", "polyp"} <= lexicon.types  # heads of concepts with children ("Neoplasms", "Polyps")
    assert "carcinoma" not in lexicon.types  # "Carcinoma, Renal Cell" has no children
    text = "renal tumors of the liver"
    kinds = [(text[start:end], kind) for start, end, kind in lexicon.kinds(text)]
    assert kinds == [("renal", "site"), ("tumors", "type"), ("liver", "site")]  # "Tumors" names "Neoplasms"
    saved = KeywordLexicon.from_json(json.loads(json.dumps(lexicon.to_json())), "memory")
    assert saved == lexicon
    with pytest.raises(MedlinkError, match="format"):
        KeywordLexicon.from_json({"format": "other"}, "kw.json")


def test_pair_inputs_mark_keywords_for_the_two_markers(terminology: Terminology) -> None:
    tokenizer = Tokenizer.from_file(str(Path(resolve_model("minilm")) / "tokenizer.json"))
    lexicon = derive_lexicon(terminology, min_heads=1)
    inputs = PairEncoder(tokenizer, lexicon).encode(["renal neoplasms"], ["polyps of the colon"])
    tokens = [tokenizer.id_to_token(int(i)) for i in inputs.input_ids[0]]
    assert tokens[:3] == ["[CLS]", "[unused0]", "[unused1]"]
    site_tokens = [tokens[i] for i in np.flatnonzero(inputs.keyword_mask[0, 0])]
    type_tokens = [tokens[i] for i in np.flatnonzero(inputs.keyword_mask[0, 1])]
    assert site_tokens == ["[unused0]", "renal", "colon"]
    assert type_tokens[0] == "[unused1]" and {"neo", "polyps"} & {t.strip("#") for t in type_tokens[1:]}
    assert "the" not in site_tokens + type_tokens and inputs.token_type_ids[0, 1:3].tolist() == [0, 0]
    plain = PairEncoder(tokenizer, None).encode(["renal neoplasms"], ["polyps of the colon"])
    assert plain.input_ids.shape[1] == inputs.input_ids.shape[1] - 2 and not plain.keyword_mask.any()


def test_the_keyword_mask_changes_what_the_ranker_reads(terminology: Terminology) -> None:
    tokenizer = Tokenizer.from_file(str(Path(resolve_model("minilm")) / "tokenizer.json"))
    inputs = PairEncoder(tokenizer, derive_lexicon(terminology, min_heads=1)).encode(["renal cancer"], ["liver cancer"])
    network = load_network(resolve_model("minilm"), keywords=True).eval()
    torch.nn.init.normal_(network.head.weight, std=0.1)
    feed = {k: torch.from_numpy(v) for k, v in inputs.feed().items()}
    with torch.no_grad():
        keyed = network(**feed)
        feed["keyword_mask"] = torch.ones_like(feed["keyword_mask"])
        unmasked = network(**feed)
    assert not torch.allclose(keyed, unmasked)


def test_training_writes_a_complete_reranker(reranker_dir: Path, terminology: Terminology, encoder) -> None:
    card = RerankerCard.read(reranker_dir)
    assert {p.name for p in reranker_dir.iterdir()} >= {CARD_FILE, "keywords.json", "model.onnx", "tokenizer.json"}
    assert card.keywords and card.top_k == 5 and 0 <= card.fusion_weight <= 1
    assert card.terminology == terminology.fingerprint() and card.retriever == encoder.identity.fingerprint()
    report = card.report
    assert report["training_mentions"] + report["held_out_mentions"] == len(TRAINING)
    # fp32 export: the ONNX model ranks the held-out mentions as the torch model did
    assert report["held_out_acc@1_exported"] == report["held_out_acc@1_fused"]
    assert not (reranker_dir.parent / ".kar.training").exists()


def test_the_linker_reranks_close_decisions(reranker_dir: Path, terminology: Terminology, index, encoder) -> None:
    card = RerankerCard.read(reranker_dir)
    every = Reranker(reranker_dir, replace(card, margin=2.0), KeywordLexicon.load(reranker_dir / "keywords.json"))
    linker = dense_linker(terminology, index, encoder, sieves="exact,O-T")
    linker.reranker = every
    result = linker.link("malignant growth in the kidney")
    assert result.stage is Stage.DENSE and "reranked" in result.reason
    fused = [c.rerank_score for c in result.candidates[: card.top_k]]
    assert all(s is not None for s in fused) and fused == sorted(fused, reverse=True)  # type: ignore[type-var]
    assert result.concepts == (result.candidates[0].concept_id,)
    assert result.score == result.candidates[0].score  # the retriever's cosine stays the score
    assert result.to_dict()["candidates"][0]["rerank_score"] == fused[0]
    off = linker.with_config(LinkerConfig(rerank=False)).link("malignant growth in the kidney")
    assert "reranked" not in off.reason and off.candidates[0].rerank_score is None
    assert "rerank_score" not in off.to_dict()["candidates"][0]
    assert linker.link("kidney neoplasms").stage is Stage.EXACT  # exact matches are never reranked


def test_a_reranker_for_another_index_is_refused(
    reranker_dir: Path, terminology: Terminology, encoder, tmp_path: Path
) -> None:
    with pytest.raises(MedlinkError, match="another terminology"):
        Reranker.load(reranker_dir, "0" * 16, encoder.identity.fingerprint())
    with pytest.raises(MedlinkError, match="another retriever encoder"):
        Reranker.load(reranker_dir, terminology.fingerprint(), "0" * 16)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / CARD_FILE).write_text('{"format": "medlink-reranker-1",\n "keywords": tru}', encoding="utf-8")
    with pytest.raises(MedlinkError, match=f"{CARD_FILE}: unreadable manifest .*line 2"):
        Reranker.load(broken, terminology.fingerprint(), encoder.identity.fingerprint())
    card = json.loads((reranker_dir / CARD_FILE).read_text())
    (broken / CARD_FILE).write_text(json.dumps(card))
    with pytest.raises(MedlinkError, match=r"model\.onnx is missing"):
        Reranker.load(broken, terminology.fingerprint(), encoder.identity.fingerprint())
    with pytest.raises(MedlinkError, match="not a reranker"):
        Reranker.load(tmp_path, terminology.fingerprint(), encoder.identity.fingerprint())
    with pytest.raises(MedlinkError, match="no retrieval decisions to rerank"):
        linker_spec(terminology=tmp_path, exact_only=True, reranker=reranker_dir)


def test_training_resumes_from_its_epoch_checkpoint(terminology: Terminology, index, encoder, tmp_path: Path) -> None:
    config = RerankerFitConfig(top_k=3, epochs=1, keywords=False)
    examples = ranking_examples(terminology, index, encoder, pairs()[:6], 6)
    tokenizer = Tokenizer.from_file(str(Path(resolve_model("minilm")) / "tokenizer.json"))
    network = load_network(resolve_model("minilm"), keywords=False)
    _train(network, PairEncoder(tokenizer, None), examples, config, tmp_path / "out", progress=False)
    trained = {k: v.clone() for k, v in network.state_dict().items()}
    assert (tmp_path / ".out.training" / "checkpoint.pt").exists()
    again = load_network(resolve_model("minilm"), keywords=False)  # a fresh process after an interruption
    _train(again, PairEncoder(tokenizer, None), examples, config, tmp_path / "out", progress=False)
    assert all(torch.equal(trained[k], v) for k, v in again.state_dict().items())  # restored, not retrained


def test_mined_examples_travel_and_train_with_frozen_embeddings(
    terminology: Terminology, index, encoder, tmp_path: Path
) -> None:
    """The staged path a GPU machine without FAISS uses (scripts/gpu_reranker.py): mine here, pickle, train there
    with the token table frozen, finish here."""
    config = RerankerFitConfig(top_k=4, epochs=1, held_out=0.35, quantize="none", freeze_embeddings=True)
    extra = [("renal cancer", ["MESH:D007680"]), ("cancer of the kidney", ["MESH:D007680"])]
    mined = pickle.loads(pickle.dumps(mine_examples(terminology, index, encoder, pairs(), config, extra)))
    held = {terminology.normalizer(e.mention) for e in mined.held}
    assert not held & {terminology.normalizer(e.mention) for e in mined.train}  # extra pairs never leak a held one
    assert any(e.mention == "cancer of the kidney" for e in mined.train)
    network = train_network(resolve_model("minilm"), mined, config, tmp_path / "rr")
    base = load_network(resolve_model("minilm"), keywords=True)
    assert torch.equal(network.encoder.get_input_embeddings().weight, base.encoder.get_input_embeddings().weight)
    assert not torch.equal(
        network.encoder.encoder.layer[0].attention.self.query.weight,
        base.encoder.encoder.layer[0].attention.self.query.weight,
    )
    card = finish_reranker(network, resolve_model("minilm"), mined, config, tmp_path / "rr")
    assert card.terminology == terminology.fingerprint() and (tmp_path / "rr" / "model.onnx").exists()


def test_the_ranker_gets_a_say_only_for_a_significant_held_out_gain() -> None:
    def examples(ranker_right: int, retriever_right: int) -> tuple[list[RankingExample], np.ndarray]:
        """Close two-candidate decisions: the ranker alone right on the first kind, the retriever on the second."""
        chosen, logits = [], []
        for n in range(ranker_right + retriever_right):
            pool = (Candidate("A", "a", 0.80), Candidate("B", "b", 0.79))
            chosen.append(RankingExample(f"m{n}", frozenset({"B" if n < ranker_right else "A"}), pool, False))
            logits += [-4.0, 4.0] if n < ranker_right else [4.0, -4.0]
        return chosen, np.array(logits, dtype=np.float32)

    config = RerankerFitConfig(top_k=2)
    weight, margin, report = fit_fusion(*examples(20, 2), config)  # 20 won, none lost: p < 0.001
    assert weight < 1.0 and margin > 0 and report["held_out_acc@1_fused"] > report["held_out_acc@1_retriever"]
    weight, margin, report = fit_fusion(*examples(4, 2), config)  # 4 won: p = 0.125, below notice
    assert (weight, margin) == (1.0, 0.0) and report["held_out_acc@1_fused"] == report["held_out_acc@1_retriever"]
    assert report["held_out_gain"] == {"only_fused_right": 4, "only_retriever_right": 0, "p_value": 0.125}


def test_too_few_mentions_is_an_error(terminology: Terminology, index, encoder, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 10"):
        fit_reranker(terminology, index, encoder, resolve_model("minilm"), pairs()[:4], tmp_path / "r")


def test_train_reranker_and_eval_from_the_command_line(terminology: Terminology, tmp_path: Path) -> None:
    runner = CliRunner()
    save_terminology(terminology, tmp_path / "terms")
    built = runner.invoke(
        main,
        [
            "index",
            "build",
            "--terminology",
            str(tmp_path / "terms"),
            "--encoder",
            "minilm",
            "-o",
            str(tmp_path / "index"),
        ],
    )
    assert built.exit_code == 0, built.output
    train = tmp_path / "train.tsv"
    train.write_text("".join(f"{text}\tMESH:{cid}\n" for text, cid in TRAINING), encoding="utf-8")
    fitted = runner.invoke(
        main,
        [
            "train-candidate-reranker",
            "--index",
            str(tmp_path / "index"),
            "--mentions",
            f"tsv:{train}",
            "--base",
            "minilm",
            "--epochs",
            "1",
            "--top-k",
            "4",
            "-o",
            str(tmp_path / "rr"),
        ],
    )
    assert fitted.exit_code == 0, fitted.output
    assert "held-out Acc@1" in fitted.output and "fusion weight" in fitted.output
    test = tmp_path / "test.tsv"
    test.write_text("tumour in the kidney\tMESH:D007680\ncolonic polyp\tMESH:D003111\n", encoding="utf-8")
    for extra in ([], ["--no-rerank"]):
        scored = runner.invoke(
            main,
            [
                "eval",
                "--index",
                str(tmp_path / "index"),
                "--reranker",
                str(tmp_path / "rr"),
                "--corpus",
                f"tsv:{test}",
                "--json",
                *extra,
            ],
        )
        assert scored.exit_code == 0, scored.output
        assert json.loads(scored.output.strip().splitlines()[-1])["n"] == 2
    linked = runner.invoke(
        main, ["link", "--index", str(tmp_path / "index"), "--entity-type", "Disease", "--format", "json", "kidney"]
    )
    assert linked.exit_code == 0, linked.output
    assert json.loads(linked.output)["concepts"][0] in {"MESH:D007680", "MESH:D002292"}


def test_branches_keep_decisions_in_scope(terminology: Terminology, index, encoder) -> None:
    """Text alone lets every branch compete; --branches / --entity-type keep only the wanted one."""
    linker = dense_linker(terminology, index, encoder, sieves="exact,O-T")
    assert linker.link("kidney").concepts == ("MESH:D007668",)  # the organ (tree A)
    diseases = linker.with_config(LinkerConfig(branches=branches_for("Disease")))
    found = diseases.link("kidney")  # the exact organ match is out of scope: dense search, best disease kept
    assert found.stage is Stage.DENSE and found.concepts[0] in {"MESH:D007680", "MESH:D002292"}
    assert "best candidate in branches C,F03" in found.reason
    anatomy = linker.with_config(LinkerConfig(branches=("A",)))
    assert terminology.concept(anatomy.link("renal tumour").concepts[0]).tree_numbers[0].startswith("A")
    with pytest.raises(MedlinkError, match="no branches known"):
        branches_for("weather")
    flat = Terminology.from_concepts([make_concept("T:1", "kidney")])
    with pytest.raises(MedlinkError, match="no tree numbers"):
        Linker(flat, config=LinkerConfig(branches=("C",))).link("kidney")


class _Retrieved:
    """A retrieval sieve's decision as the rerank stage leaves it: candidates with fused scores."""

    stage, name = Stage.DENSE, "OD-T"

    def link_batch(self, items):
        fused = (0.97, 0.95, 0.93, 0.92, 0.40)
        candidates = tuple(
            Candidate(f"MESH:D00{i}", f"name {i}", 0.9 - i / 100, rerank_score=s) for i, s in enumerate(fused)
        )
        return [
            LinkResult(text, ("MESH:D000",), Stage.DENSE, 0.9, "name 0", candidates=candidates) for text, _ in items
        ]


class _SaysThreeOrMore:
    most = 3

    def predict_counts(self, texts):
        return [3] * len(texts)


def test_the_theta_rule_claims_confident_candidates_past_three() -> None:
    concepts_ = [make_concept(f"MESH:D00{i}", f"name {i}") for i in range(5)]
    linker = Linker(
        Terminology.from_concepts(concepts_),
        [_Retrieved()],
        LinkerConfig(several_above=0.9),
        counter=_SaysThreeOrMore(),
    )
    result = linker.link("four things at once")
    assert result.concepts == ("MESH:D000", "MESH:D001", "MESH:D002", "MESH:D003") and result.several
    assert "1 more with a fused score above 0.9" in result.reason
    strict = linker.with_config(LinkerConfig(several_above=0.99)).link("four things at once")
    assert strict.concepts == ("MESH:D000", "MESH:D001", "MESH:D002")


def test_synonym_examples_answer_a_name_with_its_concept_s_other_names(
    terminology: Terminology, index, encoder
) -> None:
    chosen = synonym_pairs(terminology, 4, seed=1)
    assert len(chosen) == 4 and all(len(terminology.concept(ids[0]).names) > 1 for _, ids in chosen)
    assert all(text in {n.text for n in terminology.concept(ids[0]).names} for text, ids in chosen)
    examples = ranking_examples(terminology, index, encoder, [("Renal Tumors", ["MESH:D007680"])], 5)
    assert all(terminology.normalizer(c.name) != terminology.normalizer("Renal Tumors") for c in examples[0].pool)
    assert "MESH:D007680" in {c.concept_id for c in examples[0].pool}  # found by its other names


def test_a_zero_shot_cross_encoder_gets_only_its_fusion_fitted(
    terminology: Terminology, index, encoder, tmp_path: Path
) -> None:
    from medlink.trials.matching.trial_reranker import msmarco_folder

    card = fit_zero_shot(terminology, index, encoder, msmarco_folder(), pairs(), tmp_path / "msmarco", top_k=4)
    assert not card.keywords and card.report["zero_shot"] and 0 <= card.fusion_weight <= 1
    loaded = Reranker.load(tmp_path / "msmarco", terminology.fingerprint(), encoder.identity.fingerprint())
    logits = loaded.logits(["kidney tumour", "kidney tumour"], ["Kidney Neoplasms", "Polyps of the Colon"])
    assert logits[0] > logits[1]  # ms-marco reads relevance without any training here
