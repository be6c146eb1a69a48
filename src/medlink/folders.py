"""Replacing a folder of medlink output (a compiled terminology, an index) in one step.

Everything is written to a staging folder beside the target first; the target is then swapped out by renames, so
a crash leaves either the old folder or the new one, never half of each. A folder that is not medlink output
(no manifest) is never overwritten.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from medlink.terminology.diagnostics import MedlinkError


def replace_folder(staging: Path, target: Path, manifest: str, what: str) -> None:
    """Move ``staging`` to ``target``; an existing ``target`` must hold ``manifest`` (it is ``what`` we wrote)."""
    if target.exists():
        if not (target / manifest).exists() and any(target.iterdir()):
            raise MedlinkError(f"{target} exists and is not {what}; refusing to overwrite it")
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, target)
