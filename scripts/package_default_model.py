"""Copy a model that `medlink train` or `medlink distill` wrote into medlink's package, with fp16 weights.

    python scripts/package_default_model.py build/contrastive-model/model                  # the default encoder
    python scripts/package_default_model.py build/distilled/model -o src/medlink/resources/fast-model \
        --share-with default-model                                                          # the fast encoder
    python scripts/package_default_model.py build/zh/model -o packages/medlink-zh/src/medlink_zh/model \
        --share-with e5-small                                                               # the Chinese encoder

fp16 halves the weights (45 MB instead of 91 MB); the encoders compute in fp32 whatever the file stores.
``--share-with`` leaves out the tensors (and tokenizer) identical to those of a sibling packaged model (a student
distilled with frozen embeddings shares them with its teacher) or of ``e5-small`` (what the Chinese encoder was
fine-tuned from, frozen embeddings and first layer): medlink.encoders.shared_weights puts them back on first use.
A model packaged whole (the default encoder) also gets its ONNX graph (``model.onnx``, weights read from
``model.safetensors``: medlink.encoders.onnx_over_safetensors) and ``encoder.json``, so its first use exports
nothing; ``--graph-only FOLDER`` writes just those for a folder packaged already.
The model card (MODEL_CARD.md in the target folder) is written by hand, with the measured accuracy; the folder's
``checksums.json`` (what ``medlink models verify`` checks) is written last, over everything else.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "medlink" / "resources" / "default-model"
KEEP = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "medlink_training.json",
    "count_head.json",
    "1_Pooling/config.json",
    "MODEL_CARD.md",
)
SHARED_WEIGHTS_FILE = "shared_weights.json"  # as medlink.encoders.shared_weights reads it
SHAREABLE_FILES = ("tokenizer.json",)  # left out when the donor has the same file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="a folder written by `medlink train`")
    parser.add_argument("-o", "--output", type=Path, default=TARGET)
    parser.add_argument("--share-with", help="sibling packaged model whose identical tensors are left out")
    parser.add_argument(
        "--graph-only",
        action="store_true",
        help="MODEL is a packaged folder: write its ONNX graph and encoder.json, record checksums",
    )
    args = parser.parse_args()
    if args.graph_only:
        from medlink.models.checksums import record_checksums

        ship_graph(args.model)
        record_checksums(args.model)
        print(f"wrote the ONNX graph of {args.model}")
        return
    from safetensors.torch import load_file, save_file

    from medlink.encoders.shared_weights import donor_folder
    from medlink.models.checksums import record_checksums

    staging = Path(tempfile.mkdtemp(prefix=f".{args.output.name}.", dir=args.output.parent))
    try:
        for name in KEEP:
            source = args.model / name
            if not source.exists() and (args.output / name).exists():
                source = args.output / name  # e.g. the model card, kept across re-packaging
            if source.exists():
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, staging / name)
        weights = {k: v.half().contiguous() for k, v in load_file(args.model / "model.safetensors").items()}
        if args.share_with:
            folder = donor_folder(args.share_with, args.output)
            donor = {k: v.half() for k, v in load_file(folder / "model.safetensors").items()}
            shared = sorted(k for k, v in weights.items() if k in donor and donor[k].equal(v))
            weights = {k: v for k, v in weights.items() if k not in shared}
            files = [
                name
                for name in SHAREABLE_FILES
                if (staging / name).exists() and (staging / name).read_bytes() == (folder / name).read_bytes()
            ]
            for name in files:
                (staging / name).unlink()
            recipe = {"from": args.share_with, "tensors": shared, **({"files": files} if files else {})}
            (staging / SHARED_WEIGHTS_FILE).write_text(json.dumps(recipe, indent=2))
            print(f"{len(shared)} tensors and {files} shared with {args.share_with}: {', '.join(shared)}")
        save_file(weights, staging / "model.safetensors", metadata={"format": "pt"})
        if not args.share_with:  # a student's file lacks the shared tensors: it is exported on first use
            ship_graph(staging)
        staging.chmod(0o755)  # mkdtemp makes it private; a package's data is readable by all
        record_checksums(staging)
        for path in staging.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        if args.output.exists():
            shutil.rmtree(args.output)
        staging.rename(args.output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    print(f"packaged {args.model} into {args.output}")


def ship_graph(folder: Path) -> None:
    """``folder/model.onnx`` reading its weights from ``folder/model.safetensors``, and the ``encoder.json`` that
    makes medlink run it as an exported encoder (identity as a fresh export of the folder states it)."""
    from medlink.encoders.onnx import export_onnx
    from medlink.encoders.onnx_over_safetensors import graph_over_safetensors

    for name in ("model.onnx", "encoder.json"):  # the export is made from the weights alone
        (folder / name).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        exported = export_onnx(folder, Path(temporary) / "export")
        replaced = graph_over_safetensors(exported / "model.onnx", folder / "model.safetensors", folder / "model.onnx")
        identity = {**json.loads((exported / "encoder.json").read_text()), "model": "medlink"}
    (folder / "encoder.json").write_text(json.dumps(identity, indent=2) + "\n")
    print(f"{folder / 'model.onnx'}: {replaced} weights read from model.safetensors")


if __name__ == "__main__":
    main()
