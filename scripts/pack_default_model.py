"""Pack a trained model folder as medlink's default encoder: fp16 safetensors (half the size; medlink loads it
as float32), tokenizer, sentence-transformers modules, and the training record, into
``src/medlink/resources/default-model`` (the model card, README.md there, is kept).

    python scripts/pack_default_model.py build/default-model/model
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from medlink.resources import default_model_path

KEEP = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "modules.json", "sentence_bert_config.json", "medlink_training.json")  # fmt: skip


def main(source: Path) -> int:
    import torch
    from safetensors.torch import load_file, save_file

    target = default_model_path()
    staging = Path(tempfile.mkdtemp(prefix=".default-model.", dir=target.parent))
    for name in KEEP:
        if (source / name).exists():
            shutil.copy2(source / name, staging / name)
    shutil.copytree(source / "1_Pooling", staging / "1_Pooling")
    if (target / "README.md").exists():
        shutil.copy2(target / "README.md", staging / "README.md")
    weights = {
        name: tensor.to(torch.float16).contiguous() for name, tensor in load_file(source / "model.safetensors").items()
    }
    save_file(weights, staging / "model.safetensors", metadata={"format": "pt"})
    if target.exists():
        shutil.rmtree(target)
    staging.replace(target)
    size = (target / "model.safetensors").stat().st_size
    print(f"packed {len(weights)} tensors ({size / 1e6:.1f} MB) into {target}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
