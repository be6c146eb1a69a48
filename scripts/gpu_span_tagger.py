"""Train the distilled span tagger on a lent GPU machine that has torch and transformers but not medlink's
packages (the base model, the corpora): `medlink train tagger --teacher-layers 6 --layers 2` split at the points
where the machines differ.

1. ``pack`` (here): the annotated documents of every corpus, pickled, and the base model in fp16 (45 MB), into a
   folder that travels with the working tree (name it in the device call's ``carry``).
2. ``train`` (on the GPU, ``PYTHONPATH=src``): a teacher with all the base's layers, then the tagger learning its
   soft tags beside the annotations (medlink.training.span_tagger_fit), written as fp16 tensors in files of at
   most 15 MB (what the device returns), with the recipe in the first file's metadata. Both start from the packed
   base, whose weights were rounded to fp16 to travel (`medlink train tagger` starts from fp32).
3. ``finish`` (here): the tagger network from the base model and the tensors, exported as `medlink train tagger`
   exports it (ONNX, int8).

What the device needs beyond torch and transformers: ``rapidfuzz`` (``medlink.linking``, which the training module
imports, needs it), carried as a wheel as the device's README says. And the working tree must travel: a checkout
whose packaged models are tracked (``packages/``, ~380 MB) is over a device call's 64 MiB, so run it from a clone
without them, or on any GPU machine where medlink is installed.

The same recipe runs on a CPU without this script (about 2 minutes per epoch and layer for 1,100 abstracts on 2
cores, so some 5 hours for all four training splits): `medlink train tagger --corpus … --layers 2
--teacher-layers 6 --epochs 8 --learning-rate 2e-4 -o tagger/`.

    python scripts/gpu_span_tagger.py pack \\
        --corpus pubtator:../shared/data/corpora/bc5cdr/CDR_TrainingSet.PubTator.txt \\
        --corpus pubtator:../shared/data/corpora/bc5cdr/CDR_DevelopmentSet.PubTator.txt \\
        --corpus pubtator:../shared/data/corpora/ncbi-disease/NCBItrainset_corpus.txt \\
        --corpus pubtator:../shared/data/corpora/ncbi-disease/NCBIdevelopset_corpus.txt -o .dev/tagger
    PYTHONPATH=src python3 scripts/gpu_span_tagger.py train .dev/tagger -o $OUT/tagger     # on the GPU (not timed yet)
    python scripts/gpu_span_tagger.py finish .dev/tagger --weights OUT/tagger -o span-tagger/
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import shutil
from dataclasses import asdict, replace
from pathlib import Path

from medlink.training.span_tagger_fit import TaggerTrainingConfig

CHUNK_BYTES = 15_000_000  # the device returns files of at most 16 MiB
RECIPE = TaggerTrainingConfig(epochs=8, learning_rate=2e-4, layers=2, teacher_layers=6, device="auto")


def pack(args: argparse.Namespace) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from medlink.encoders.registry import resolve_model
    from medlink.evaluation.corpus_formats import load_corpus
    from medlink.training.span_tagger_fit import tagged_documents

    args.output.mkdir(parents=True, exist_ok=True)
    documents = [document for spec in args.corpus for document in tagged_documents(load_corpus(spec))]
    names = [Path(spec.partition(":")[2]).name for spec in args.corpus]
    with gzip.open(args.output / "documents.pkl.gz", "wb") as out:
        pickle.dump({"documents": documents, "trained_on": names, "base": args.base}, out)
    base = resolve_model(args.base)
    AutoModel.from_pretrained(base, dtype=torch.float16).save_pretrained(args.output / "base")
    AutoTokenizer.from_pretrained(base).save_pretrained(args.output / "base")
    print(f"{len(documents):,} documents from {', '.join(names)} and the base model in {args.output}")


def train(args: argparse.Namespace) -> None:
    import torch
    from safetensors.torch import save_file

    from medlink.training.span_tagger_fit import fit_span_tagger

    with gzip.open(args.packed / "documents.pkl.gz", "rb") as file:
        packed = pickle.load(file)
    documents = packed["documents"]
    config = replace(RECIPE, epochs=args.epochs, layers=args.layers, teacher_layers=args.teacher_layers)
    model, _, labels = fit_span_tagger(documents, str(args.packed / "base"), config, report=print)
    if args.output.exists() and any(not path.name.startswith("part") for path in args.output.iterdir()):
        raise SystemExit(f"{args.output} holds other files than tensors of an earlier run: give an empty folder")
    shutil.rmtree(args.output, ignore_errors=True)
    args.output.mkdir(parents=True)
    chunks: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for key, tensor in model.state_dict().items():
        half = tensor.detach().to("cpu", torch.float16).contiguous()
        rows = max(1, CHUNK_BYTES // max(1, half[0].numel() * 2)) if half.dim() else 1
        pieces = {key: half} if half.numel() * 2 <= CHUNK_BYTES else dict(_split(key, half, rows))
        for name, piece in pieces.items():
            if chunks[-1] and size + piece.numel() * 2 > CHUNK_BYTES:
                chunks.append({})
                size = 0
            chunks[-1][name] = piece
            size += piece.numel() * 2
    recipe = json.dumps({"config": asdict(config), "labels": labels, "base": packed["base"]})
    for part, chunk in enumerate(chunks):
        save_file(
            chunk, str(args.output / f"part{part}.safetensors"), metadata={"recipe": recipe} if not part else None
        )
    print(f"{len(chunks)} files of tensors in {args.output}")


def _split(key: str, tensor, rows: int):
    """A tensor too large for one file, as pieces of ``rows`` rows named ``key#0``, ``key#1``, …"""
    for number, first in enumerate(range(0, tensor.shape[0], rows)):
        yield f"{key}#{number}", tensor[first : first + rows].clone()


def _joined(pieces: dict) -> dict:
    """The tensors :func:`_split` cut, whole again (and fp32)."""
    import torch

    parts: dict[str, list[tuple[int, object]]] = {}
    for name, tensor in pieces.items():
        key, _, number = name.partition("#")
        parts.setdefault(key, []).append((int(number or 0), tensor))
    return {key: torch.cat([t for _, t in sorted(found, key=lambda p: p[0])]).float() for key, found in parts.items()}


def finish(args: argparse.Namespace) -> None:
    from safetensors import safe_open
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from medlink.training.span_tagger_fit import export_tagger, tagger_card, tagger_network

    with safe_open(str(args.weights / "part0.safetensors"), "pt") as first:
        recipe = json.loads(first.metadata()["recipe"])
    with gzip.open(args.packed / "documents.pkl.gz", "rb") as packed:
        trained_on = pickle.load(packed)["trained_on"]
    config, labels = TaggerTrainingConfig(**recipe["config"]), tuple(recipe["labels"])
    base = args.packed / "base"  # the tokenizer and architecture the tensors were trained with
    model = tagger_network(base, labels, config.layers)
    pieces = {}
    for part in sorted(args.weights.glob("part*.safetensors")):
        pieces.update(load_file(str(part)))
    missing, unexpected = model.load_state_dict(_joined(pieces), strict=False)
    if missing or unexpected:
        raise SystemExit(f"the tensors do not fit the base model: missing {missing}, unexpected {unexpected}")
    card = tagger_card(labels, config, recipe["base"], trained_on)
    export_tagger(model.eval(), AutoTokenizer.from_pretrained(base), card, args.output, "int8")
    print(f"span tagger written to {args.output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("pack")
    p.add_argument("--corpus", action="append", required=True, metavar="FORMAT:PATH")
    p.add_argument("--base", default="minilm")
    p.add_argument("-o", "--output", type=Path, required=True)
    t = verbs.add_parser("train")
    t.add_argument("packed", type=Path)
    t.add_argument("-o", "--output", type=Path, required=True)
    t.add_argument("--epochs", type=int, default=RECIPE.epochs)
    t.add_argument("--layers", type=int, default=RECIPE.layers)
    t.add_argument("--teacher-layers", type=int, default=RECIPE.teacher_layers)
    f = verbs.add_parser("finish")
    f.add_argument("packed", type=Path)
    f.add_argument("--weights", type=Path, required=True)
    f.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    {"pack": pack, "train": train, "finish": finish}[args.verb](args)


if __name__ == "__main__":
    main()
