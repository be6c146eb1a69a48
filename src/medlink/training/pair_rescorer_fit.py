"""Training the set ranker's pair rescorer (``linking/sets/pair_rescorer.py``): a cross-encoder over (mention,
candidate name) pairs, as ERNIE-Health reads CHIP-CDN (issue 42).

Everything comes from the ranker's out-of-fold candidates (``out-of-fold.jsonl``, written by
``medlink train set-ranker``): the candidates each training mention gets from models fitted without it, so they
are the hard negatives new mentions will meet, with honest probabilities beside them.

- The cross-encoder trains on the mentions of every fold but one (label 1 for a candidate that is one of the
  mention's concepts), with the reranker trainer's online hard negatives after the first epoch
  (:func:`~medlink.training.reranker_fit.train_network`), and is exported to ONNX.
- On the held-out fold, which it never saw, the exported model reads each mention's ``depth`` best candidates;
  the fusion (a logistic model, ``FUSION_FEATURES``) and the claiming threshold are fitted there.
- It is attached to the ranker only when it wins: fitted on one half of the held-out fold and scored on the other
  (both ways), the fused claims must beat the ranker's own out-of-fold claims in set F1.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.evaluation.corpus import Gold
from medlink.evaluation.scoring import Prediction, set_scores
from medlink.folders import staged_folder
from medlink.linking.rerank.pair_model import PairModel
from medlink.linking.sets.pair_rescorer import (
    RESCORER_CARD,
    RESCORER_FOLDER,
    RescorerCard,
    fused_probability,
    fusion_features,
    ranker_fingerprint,
)
from medlink.linking.sets.ranker_model import claimed_concepts
from medlink.linking.sets.set_ranker import OutOfFold, read_out_of_fold, read_ranker_model
from medlink.training.kar_network import KarNetwork
from medlink.training.reranker_config import RerankerFitConfig, RescorerFitConfig
from medlink.training.reranker_fit import MinedExamples, train_network
from medlink.training.reranker_fusion import RankingExample

THRESHOLDS = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))


@dataclass(frozen=True)
class RescorerOutcome:
    attached: bool
    card: RescorerCard


def fit_pair_rescorer(
    ranker_dir: Path,
    base_model: str,
    config: RescorerFitConfig | None = None,
    progress: bool = True,
    force: bool = False,
) -> RescorerOutcome:
    """Train, export, fit the fusion; attach ``ranker_dir/rescorer`` when it wins on the held-out fold (``force``:
    whatever the check says)."""
    config = config or RescorerFitConfig()
    started = time.monotonic()
    records = read_out_of_fold(ranker_dir)
    model, threshold = read_ranker_model(ranker_dir)
    held = [r for r in records if r.fold == config.held_out_fold]
    train = [r for r in records if r.fold != config.held_out_fold]
    if len(held) < 10 or len(train) < 10:
        raise ValueError(
            f"fold {config.held_out_fold} holds {len(held)} of {len(records)} training mentions: a "
            "rescorer needs at least 10 in it and 10 outside it"
        )
    network_config = RerankerFitConfig(
        top_k=config.depth,
        epochs=config.epochs,
        batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        keywords=False,
        held_out=0.0,
        max_length=config.max_length,
        quantize=config.quantize,
        seed=config.seed,
        device=config.device,
        freeze_embeddings=config.freeze_embeddings,
        mean_pooled=config.mean_pooled,
    )
    mined = MinedExamples([_example(r, 2 * config.depth) for r in train], [], None, "", "")
    output = ranker_dir / RESCORER_FOLDER
    work = ranker_dir / f".{RESCORER_FOLDER}.candidate"
    network = train_network(base_model, mined, network_config, output, progress)
    _export(network, base_model, network_config, work)
    logits = _held_out_logits(PairModel(work, config.max_length), held, config.depth)
    fusion, report = _fit_and_check(held, logits, threshold, config.depth)
    weights, bias, fused_threshold = fusion
    card = RescorerCard(
        config.depth,
        config.max_length,
        weights,
        bias,
        fused_threshold,
        ranker_fingerprint(model, threshold),
        str(base_model),
        {
            **report,
            "training_mentions": len(train),
            "held_out_mentions": len(held),
            "held_out_fold": config.held_out_fold,
            "config": asdict(config),
            "seconds": round(time.monotonic() - started),
        },
    )
    (work / RESCORER_CARD).write_text(json.dumps(card.to_json(), indent=1, ensure_ascii=False) + "\n")
    attached = force or report["cross_validated_set_f1_rescored"] > report["cross_validated_set_f1_ranker"]
    if attached:
        with staged_folder(output, RESCORER_CARD, "a rescorer") as staging:
            for path in work.iterdir():
                shutil.copy(path, staging / path.name)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(ranker_dir / f".{RESCORER_FOLDER}.training", ignore_errors=True)
    return RescorerOutcome(attached, card)


def _example(record: OutOfFold, pool: int) -> RankingExample:
    return RankingExample(record.mention.text, frozenset(record.mention.concepts()), record.candidates[:pool], False)


def _export(network: KarNetwork, base_model: str, config: RerankerFitConfig, folder: Path) -> None:
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    from medlink.linking.rerank.inputs import PairEncoder
    from medlink.training.kar_network import export_network

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    hf_tokenizer = AutoTokenizer.from_pretrained(str(base_model))
    pairs = PairEncoder(Tokenizer.from_str(hf_tokenizer.backend_tokenizer.to_str()), None, config.max_length)
    sample = {
        name: torch.from_numpy(value)
        for name, value in pairs.encode(["肺癌"] * 2, ["肺恶性肿瘤", "肺炎"]).feed().items()
    }
    export_network(network.to("cpu"), folder, sample, config.quantize, hf_tokenizer)


def _held_out_logits(model: PairModel, held: Sequence[OutOfFold], depth: int) -> list[np.ndarray]:
    mentions = [r.mention.text for r in held for _ in r.candidates[:depth]]
    names = [c.name for r in held for c in r.candidates[:depth]]
    flat = model.logits(mentions, names)
    return np.split(flat, np.cumsum([len(r.candidates[:depth]) for r in held])[:-1])


Fusion = tuple[tuple[float, ...], float, float]  # weights, bias, threshold


def _fit_and_check(
    held: Sequence[OutOfFold], logits: Sequence[np.ndarray], ranker_threshold: float, depth: int
) -> tuple[Fusion, dict[str, float]]:
    """The fusion fitted on all of ``held``, and the two-way check on its halves against the ranker's claims."""
    halves = [list(range(0, len(held), 2)), list(range(1, len(held), 2))]
    ranker_pairs, rescored_pairs = [], []
    for fit_half, score_half in (halves, halves[::-1]):
        fusion = _fit_fusion([held[i] for i in fit_half], [logits[i] for i in fit_half], depth)
        for i in score_half:
            gold = Gold.of(held[i].mention.parts)
            ranker_pairs.append((gold, Prediction(concepts=_ranker_claims(held[i], ranker_threshold))))
            rescored_pairs.append((gold, Prediction(concepts=_fused_claims(held[i], logits[i], fusion, depth))))
    ranker, rescored = set_scores(ranker_pairs), set_scores(rescored_pairs)
    report = {
        "cross_validated_set_f1_ranker": round(ranker.f1, 4),
        "cross_validated_set_f1_rescored": round(rescored.f1, 4),
        "cross_validated_set_precision_rescored": round(rescored.precision, 4),
        "cross_validated_set_recall_rescored": round(rescored.recall, 4),
        # whether the cross-encoder learned anything on its own: its best candidate against the ranker's
        "top1_ranker": _top1(held, [np.array([c.score for c in r.candidates[:depth]]) for r in held]),
        "top1_pair_model": _top1(held, logits),
    }
    return _fit_fusion(held, logits, depth), report


def _top1(held: Sequence[OutOfFold], scores: Sequence[np.ndarray]) -> float:
    """Share of mentions whose best-scored read candidate is one of their concepts."""
    right = sum(
        len(score) > 0 and r.candidates[int(np.argmax(score))].concept_id in r.mention.concepts()
        for r, score in zip(held, scores, strict=True)
    )
    return round(right / max(1, len(held)), 4)


def _fit_fusion(held: Sequence[OutOfFold], logits: Sequence[np.ndarray], depth: int) -> Fusion:
    from sklearn.linear_model import LogisticRegression

    rows, labels = [], []
    for record, pair in zip(held, logits, strict=True):
        read = record.candidates[:depth]
        rows.append(fusion_features(np.array([c.score for c in read]), pair))
        labels += [c.concept_id in record.mention.concepts() for c in read]
    fitted = LogisticRegression(C=1.0, max_iter=1000).fit(np.vstack(rows), np.array(labels))
    weights, bias = tuple(float(w) for w in fitted.coef_[0]), float(fitted.intercept_[0])
    best: tuple[float, float] | None = None
    golds = [Gold.of(r.mention.parts) for r in held]
    for threshold in THRESHOLDS:
        fusion = (weights, bias, threshold)
        claims = [
            Prediction(concepts=_fused_claims(r, pair, fusion, depth)) for r, pair in zip(held, logits, strict=True)
        ]
        f1 = set_scores(list(zip(golds, claims, strict=True))).f1
        if best is None or f1 > best[0]:
            best = (f1, threshold)
    assert best is not None
    return weights, bias, best[1]


def _ranker_claims(record: OutOfFold, threshold: float) -> tuple[str, ...]:
    return claimed_concepts([(c.concept_id, c.score) for c in record.candidates], threshold)


def _fused_claims(record: OutOfFold, pair: np.ndarray, fusion: Fusion, depth: int) -> tuple[str, ...]:
    weights, bias, threshold = fusion
    read = record.candidates[:depth]
    if not read:
        return ()
    fused = fused_probability(fusion_features(np.array([c.score for c in read]), pair), weights, bias)
    order = np.argsort(-fused, kind="stable")
    return claimed_concepts([(read[j].concept_id, float(fused[j])) for j in order], threshold)
