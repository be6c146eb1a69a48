"""Train rerankers on a lent GPU machine that has torch but neither FAISS nor medlink installed.

`medlink train candidate-reranker` does everything in one process; this script splits it at the points where the
machines differ (see medlink.training.reranker_fit):

1. ``mine`` (here, with the index): the retriever pools of the training mentions, pickled. One file per recipe:
   the corpus's own mentions, plus another corpus's mentions, plus terminology names as mentions.
2. ``train`` (on the GPU, ``PYTHONPATH=src``): trains each recipe, reports its held-out accuracies and writes the
   trained tensors (token embeddings frozen, so they need not travel) as fp16 safetensors of at most 15 MB each.
3. ``finish`` (here): puts the network together from the base model and the tensors, fits the fusion and exports
   the reranker folder, exactly as `medlink train candidate-reranker` would.

    python scripts/gpu_reranker.py mine --index IDX --mentions pubtator:TRAIN [--extra pubtator:OTHER] \\
        [--synonyms 20000] -o .dev/ncbi
    python3 scripts/gpu_reranker.py train .dev/ncbi/{base,extra}.pkl.gz --epochs 8,6 -o $OUT/ncbi   # on the GPU
    python scripts/gpu_reranker.py finish .dev/ncbi/RECIPE.pkl.gz --weights OUT/ncbi/best -o rr-ncbi-gpu
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from medlink.encoders.registry import DEFAULT_MODEL, resolve_model
from medlink.training.reranker_fit import (
    MinedExamples,
    RerankerFitConfig,
    finish_reranker,
    held_out_report,
    mine_examples,
    train_network,
)

if TYPE_CHECKING:
    import torch

CHUNK_BYTES = 15_000_000  # the device returns files of at most 16 MiB


def _pairs(specs: list[str], entity_type: str | None) -> list[tuple[str, tuple[str, ...]]]:
    from medlink.evaluation.corpus_formats import load_corpus

    return [pair for spec in specs for pair in load_corpus(spec, entity_type).labelled_pairs()]


def mine(args: argparse.Namespace) -> None:
    from medlink.index import VectorIndex
    from medlink.linking.pipeline import encoder_of, terminology_of

    index = VectorIndex.load(args.index)
    terminology, encoder = terminology_of(index), encoder_of(index)
    pairs, extra = _pairs(args.mentions, args.entity_type), _pairs(args.extra, args.entity_type)
    config = RerankerFitConfig(top_k=args.top_k)
    recipes = {"base": mine_examples(terminology, index, encoder, pairs, config)}
    if extra:
        recipes["extra"] = mine_examples(terminology, index, encoder, pairs, config, extra)
    if args.synonyms:
        recipes["synonyms"] = mine_examples(
            terminology, index, encoder, pairs, replace(config, synonyms=args.synonyms), extra
        )
    args.output.mkdir(parents=True, exist_ok=True)
    for name, mined in recipes.items():
        with gzip.open(args.output / f"{name}.pkl.gz", "wb") as out:
            pickle.dump(mined, out)
        print(f"{name}: {len(mined.train)} training, {len(mined.held)} held-out examples")


def _load(path: Path) -> MinedExamples:
    with gzip.open(path, "rb") as source:
        mined: MinedExamples = pickle.load(source)
    return mined


def train(args: argparse.Namespace) -> None:
    """Each recipe in turn; every report goes to reports.jsonl and the best recipe so far (held-out Acc@1 fused,
    then ranker alone) keeps its tensors in best/, so a run stopped at any point leaves its best reranker."""
    base = resolve_model(args.base or DEFAULT_MODEL)
    epochs = [int(e) for e in args.epochs.split(",")]
    epochs += epochs[-1:] * (len(args.mined) - len(epochs))
    args.output.mkdir(parents=True, exist_ok=True)
    started, best = time.monotonic(), (-1.0, -1.0)
    for path, count in zip(args.mined, epochs, strict=False):
        if time.monotonic() - started > args.budget:
            print(f"{path}: skipped, the time budget is spent")
            continue
        name = path.name.removesuffix(".pkl.gz")
        mined = _load(path)
        config = RerankerFitConfig(
            epochs=count, batch_size=args.batch_size, learning_rate=args.lr, freeze_embeddings=True, device="auto"
        )
        began = time.monotonic()
        work = args.work / f"{args.output.name}-{name}"  # checkpoints stay out of OUT; every run starts afresh
        shutil.rmtree(work, ignore_errors=True)
        network = train_network(base, mined, config, work, progress=False)
        report = held_out_report(network, base, mined, config)
        report = {
            "recipe": name,
            "seconds": round(time.monotonic() - began),
            "train_examples": len(mined.train),
            "epochs": count,
            "batch_size": args.batch_size,
            "lr": args.lr,
            **{k: v for k, v in report.items() if not k.endswith("by_weight")},
        }
        print(json.dumps(report), flush=True)
        with (args.output / "reports.jsonl").open("a") as out:
            out.write(json.dumps(report) + "\n")
        score = (float(report["held_out_acc@1_fused"]), float(report["held_out_acc@1_ranker_alone"]))
        if score > best:
            best = score
            _save_trained(network, report, args.output / "best")


def _save_trained(network: torch.nn.Module, report: dict[str, object], folder: Path) -> None:
    """The tensors that trained, fp16, in files of at most CHUNK_BYTES; the report in the first file's metadata."""
    import torch
    from safetensors.torch import save_file

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    frozen = {f"encoder.{n}" for n, p in network.encoder.named_parameters() if not p.requires_grad}
    chunks: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key, tensor in network.state_dict().items():
        if key in frozen:
            continue
        if chunks[-1] and size + tensor.numel() * 2 > CHUNK_BYTES:
            chunks.append({})
            size = 0
        chunks[-1][key] = tensor.detach().to("cpu", torch.float16).contiguous()
        size += tensor.numel() * 2
    for part, chunk in enumerate(chunks):
        save_file(
            chunk,
            str(folder / f"part{part}.safetensors"),
            metadata={"report": json.dumps(report)} if part == 0 else None,
        )


def finish(args: argparse.Namespace) -> None:
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file

    from medlink.training.kar_network import load_network

    base = resolve_model(args.base or DEFAULT_MODEL)
    mined = _load(args.mined)
    with safe_open(str(args.weights / "part0.safetensors"), "pt") as first:
        report = json.loads(first.metadata()["report"])
    config = RerankerFitConfig(
        epochs=report["epochs"],
        batch_size=report["batch_size"],
        learning_rate=report["lr"],
        freeze_embeddings=True,
        device="cpu",
    )
    network = load_network(base, config.keywords)
    state = {}
    for part in sorted(args.weights.glob("part*.safetensors")):
        state.update({k: v.float() for k, v in load_file(str(part)).items()})
    missing, unexpected = network.load_state_dict(state, strict=False)
    if unexpected or any("embeddings" not in key for key in missing):
        raise SystemExit(f"weights do not fit the base model: missing {missing}, unexpected {unexpected}")
    card = finish_reranker(network.to(torch.float32), base, mined, config, args.output)
    print(json.dumps({k: v for k, v in card.report.items() if k.startswith("held_out_acc@1_") and "by_" not in k}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    m = verbs.add_parser("mine")
    m.add_argument("--index", type=Path, required=True)
    m.add_argument("--mentions", action="append", required=True)
    m.add_argument("--extra", action="append", default=[])
    m.add_argument("--entity-type", default=None)
    m.add_argument("--synonyms", type=int, default=0)
    m.add_argument("--top-k", type=int, default=10)
    m.add_argument("-o", "--output", type=Path, required=True)
    t = verbs.add_parser("train")
    t.add_argument("mined", type=Path, nargs="+")
    t.add_argument("--base", default=None)
    t.add_argument("--epochs", default="8", help="per recipe, comma-separated; the last repeats")
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=5e-5)
    t.add_argument("--budget", type=float, default=1e9, help="seconds after which no further recipe starts")
    t.add_argument("--work", type=Path, default=Path("/tmp/medlink-rerankers"))
    t.add_argument("-o", "--output", type=Path, required=True)
    f = verbs.add_parser("finish")
    f.add_argument("mined", type=Path)
    f.add_argument("--weights", type=Path, required=True)
    f.add_argument("--base", default=None)
    f.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    {"mine": mine, "train": train, "finish": finish}[args.verb](args)


if __name__ == "__main__":
    main()
