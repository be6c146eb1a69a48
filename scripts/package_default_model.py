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
KEEP = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json",
        "medlink_training.json", "count_head.json", "1_Pooling/config.json", "MODEL_CARD.md")  # fmt: skip
SHARED_WEIGHTS_FILE = "shared_weights.json"  # as medlink.encoders.shared_weights reads it
SHAREABLE_FILES = ("tokenizer.json",)  # left out when the donor has the same file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="a folder written by `medlink train`")
    parser.add_argument("-o", "--output", type=Path, default=TARGET)
    parser.add_argument("--share-with", help="sibling packaged model whose identical tensors are left out")
    args = parser.parse_args()
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
            files = [name for name in SHAREABLE_FILES
                     if (staging / name).exists() and (staging / name).read_bytes() == (folder / name).read_bytes()]
            for name in files:
                (staging / name).unlink()
            recipe = {"from": args.share_with, "tensors": shared, **({"files": files} if files else {})}
            (staging / SHARED_WEIGHTS_FILE).write_text(json.dumps(recipe, indent=2))
            print(f"{len(shared)} tensors and {files} shared with {args.share_with}: {', '.join(shared)}")
        save_file(weights, staging / "model.safetensors", metadata={"format": "pt"})
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


if __name__ == "__main__":
    main()
