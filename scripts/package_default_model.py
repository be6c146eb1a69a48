"""Copy a model that `medlink train` wrote into medlink's package as the default encoder, with fp16 weights.

    python scripts/package_default_model.py build/contrastive-model/model

fp16 halves the weights (45 MB instead of 91 MB); the encoders compute in fp32 whatever the file stores. The
model card (src/medlink/resources/default-model/MODEL_CARD.md) is written by hand, with the measured accuracy.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "medlink" / "resources" / "default-model"
KEEP = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json",
        "medlink_training.json", "count_head.json", "1_Pooling/config.json", "MODEL_CARD.md")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", type=Path, help="a folder written by `medlink train`")
    parser.add_argument("-o", "--output", type=Path, default=TARGET)
    args = parser.parse_args()
    from safetensors.torch import load_file, save_file

    staging = Path(tempfile.mkdtemp(prefix=".default-model.", dir=args.output.parent))
    try:
        for name in KEEP:
            source = args.model / name
            if not source.exists() and (args.output / name).exists():
                source = args.output / name  # e.g. the model card, kept across re-packaging
            if source.exists():
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, staging / name)
        weights = load_file(args.model / "model.safetensors")
        save_file({k: v.half().contiguous() for k, v in weights.items()}, staging / "model.safetensors",
                  metadata={"format": "pt"})  # fmt: skip
        staging.chmod(0o755)  # mkdtemp makes it private; a package's data is readable by all
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
