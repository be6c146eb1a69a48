"""The terminology embedded in medlink: the MeSH descriptors shipped in ``medlink.resources``, or the newer release
a user installed with ``medlink terminology update`` (kept in medlink's cache, named by ``embedded/current.json``).

Loading reads the record of an installed update each time (one small file), so a process sees an update installed
after it started only for terminologies it has not loaded yet; each folder is loaded once per process.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.folders import cache_root
from medlink.resources import default_terminology_path, supplementary_records_path
from medlink.terminology.store import load_terminology
from medlink.terminology.terminology import Terminology

SHIPPED_SUPPLEMENTARY_FORMAT = "mesh-supp-tsv"
_RECORD = "current.json"


@dataclass(frozen=True)
class EmbeddedUpdate:
    """A newer MeSH release installed in place of the shipped one.

    descriptors: the compiled descriptors' folder; supplementary: the supplementary records' source file (``None``:
    the shipped records stay) and its reader format; release: the release's year as the user's files name it (or as
    given); replaces: the shipped terminology's fingerprint, whose calibration and reranker the update inherits."""

    descriptors: Path
    supplementary: Path | None
    supplementary_format: str
    release: str
    replaces: str
    installed: str
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["descriptors"] = str(self.descriptors)
        data["supplementary"] = str(self.supplementary) if self.supplementary else None
        data["sources"] = list(self.sources)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> EmbeddedUpdate:
        supplementary = data.get("supplementary")
        return cls(
            Path(data["descriptors"]),
            Path(supplementary) if supplementary else None,
            str(data.get("supplementary_format") or SHIPPED_SUPPLEMENTARY_FORMAT),
            str(data.get("release", "")),
            str(data["replaces"]),
            str(data.get("installed", "")),
            tuple(data.get("sources", ())),
        )


def updates_folder() -> Path:
    return cache_root() / "embedded"


def installed_update() -> EmbeddedUpdate | None:
    """The update ``medlink terminology update`` installed, if any (one whose folder is gone counts as none)."""
    path = updates_folder() / _RECORD
    try:
        update = EmbeddedUpdate.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise MedlinkError(
            f"{path}: unreadable record of the installed MeSH update ({error}); run `medlink "
            "terminology update --revert` to go back to the shipped release"
        ) from None
    return update if (update.descriptors / "manifest.json").is_file() else None


def record_update(update: EmbeddedUpdate | None) -> None:
    """Install ``update`` (written to a temporary file and renamed), or with ``None`` go back to the shipped MeSH."""
    path = updates_folder() / _RECORD
    if update is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(update.to_dict(), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def default_terminology_folder() -> Path:
    """The compiled descriptors the embedded default uses: an installed update's, else the shipped ones."""
    update = installed_update()
    return update.descriptors if update is not None else default_terminology_path()


def default_supplementary_source() -> tuple[Path, str]:
    """The supplementary records' source file the embedded default compiles, and its reader format."""
    update = installed_update()
    if update is not None and update.supplementary is not None:
        return update.supplementary, update.supplementary_format
    return supplementary_records_path(), SHIPPED_SUPPLEMENTARY_FORMAT


def load_shipped_terminology() -> Terminology:
    """The MeSH descriptors shipped with medlink, whatever update is installed (loaded once per process)."""
    return _load(default_terminology_path())


def load_default_terminology() -> Terminology:
    """The embedded MeSH descriptors (an installed update's, else the shipped ones); each folder loaded once per
    process (the default index's name, the default linker and the trial matcher's concept scanner all read it)."""
    return _load(default_terminology_folder())


@functools.cache
def _load(folder: Path) -> Terminology:
    return load_terminology(folder)
