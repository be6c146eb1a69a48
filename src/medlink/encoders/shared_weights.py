"""Packaged models that share tensors with another packaged model, to keep the package small.

medlink's fast encoder is a 3-layer student distilled from the default model with the token embeddings frozen:
its embeddings (11.9M of its 17.4M parameters) are the default model's, bit for bit. The package stores only its
own tensors and a ``shared_weights.json`` naming the sibling folder and the tensors taken from it; on first use
the full weights are assembled once into the cache (a temporary folder, then a rename) and loaded from there.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from medlink.folders import staged_folder

SHARED_WEIGHTS_FILE = "shared_weights.json"
WEIGHTS_FILE = "model.safetensors"


def needs_assembly(folder: Path) -> bool:
    return (folder / SHARED_WEIGHTS_FILE).exists()


def assembled_model(folder: Path, cache: Path) -> Path:
    """A complete model folder for ``folder`` under ``cache``: its own files, with the shared tensors put back."""
    recipe = json.loads((folder / SHARED_WEIGHTS_FILE).read_text())
    donor = folder.parent / recipe["from"]
    stamp = hashlib.sha256()
    for weights in (folder / WEIGHTS_FILE, donor / WEIGHTS_FILE):
        stamp.update(f"{weights.stat().st_size}-{weights.stat().st_mtime_ns}".encode())
    target = cache / "models" / f"{folder.name}-{stamp.hexdigest()[:16]}"
    if (target / WEIGHTS_FILE).exists():
        return target
    from safetensors.torch import load_file, save_file

    own, theirs = load_file(folder / WEIGHTS_FILE), load_file(donor / WEIGHTS_FILE)
    missing = [name for name in recipe["tensors"] if name not in theirs]
    if missing:
        raise ValueError(f"{donor / WEIGHTS_FILE} lacks the shared tensors {missing[:3]} that {folder} needs")
    with staged_folder(target, WEIGHTS_FILE, "an assembled model") as staging:
        skipped = shutil.ignore_patterns(WEIGHTS_FILE, SHARED_WEIGHTS_FILE)
        shutil.copytree(folder, staging, dirs_exist_ok=True, ignore=skipped)
        save_file({**own, **{name: theirs[name] for name in recipe["tensors"]}}, staging / WEIGHTS_FILE,
                  metadata={"format": "pt"})  # fmt: skip
    return target
