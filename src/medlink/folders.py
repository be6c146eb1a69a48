"""Folders medlink writes: the cache they live in, replacing one in a single step, building a cache entry once when
several processes want it at the same time, and the checksums their manifests keep.

Everything is written to a staging folder beside the target first; the target is then swapped out by renames, so
a crash leaves either the old folder or the new one, never half of each. A folder that is not medlink output
(no manifest) is never overwritten.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError


def cache_root() -> Path:
    """Where exported encoders and default indexes are kept: ``$MEDLINK_CACHE`` or ``~/.cache/medlink``."""
    return Path(os.environ.get("MEDLINK_CACHE") or Path.home() / ".cache" / "medlink")


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


@contextmanager
def staged_folder(target: Path, manifest: str, what: str) -> Iterator[Path]:
    """A fresh folder beside ``target`` to write into; when the block ends it replaces ``target``
    (:func:`replace_folder`), and when the block fails it is removed, leaving ``target`` as it was.

    The folder gets the permissions the umask allows (``mkdtemp`` makes it 0700, which would keep a Spark job
    running as another user from reading an index), and staging folders that killed processes left beside
    ``target`` are removed first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-{os.getpid()}-", dir=target.parent))
    staging.chmod(0o777 & ~process_umask())
    try:
        yield staging
        replace_folder(staging, target, manifest, what)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


STALE_AFTER_SECONDS = 3600  # a staging folder untouched this long, whose process is gone, is a SIGKILL's leftover


def remove_stale_staging(target: Path) -> None:
    """Remove the staging (``.NAME.staging-PID-…``) and replaced (``.NAME.old-PID``) folders beside ``target`` whose
    process is no longer running here and that have not changed for :data:`STALE_AFTER_SECONDS` (on a shared file
    system a process id may belong to another machine: the age keeps a live build of theirs safe)."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(?:staging-(\d+)-.*|old-(\d+))$")
    if not target.parent.is_dir():
        return
    for sibling in target.parent.iterdir():
        match = pattern.match(sibling.name)
        if match is None or not sibling.is_dir():
            continue
        pid = int(match.group(1) or match.group(2))
        try:
            age = time.time() - sibling.stat().st_mtime
        except OSError:
            continue
        if age > STALE_AFTER_SECONDS and not _running(pid):
            shutil.rmtree(sibling, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def process_umask() -> int:
    """The process's umask, read without changing it where Linux shows it (``os.umask`` sets it to read it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def building_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive lock (``.NAME.lock`` beside ``target``) while building ``target``.

    Server workers, spaCy's ``n_process`` and Spark workers may all ask for the same cached encoder export or
    default index at once; the first builds it, the others wait here and then find it built (check again inside
    the lock). The kernel releases the lock when its holder dies, so a killed build never blocks the next one.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(f".{target.name}.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cached_entry(folder: Path, current: Callable[[Path], bool], build: Callable[[Path], object]) -> Path:
    """``folder``, built by ``build(folder)`` unless ``current(folder)`` says it is there and usable.

    An entry another medlink version wrote (``current`` false) is rebuilt, not used; several processes asking at
    once build it once (:func:`building_lock`). ``build`` must write atomically (a staging folder, then a rename).
    """
    if not current(folder):
        with building_lock(folder):
            if not current(folder):  # another process may have built it while this one waited
                build(folder)
    return folder


def sha256_of(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest_json(path: Path, error: type[Exception], missing: str) -> dict[str, Any]:
    """The JSON object in a folder's manifest; ``error(missing)`` when there is none, ``error`` naming the file
    when it cannot be read."""
    if not path.exists():
        raise error(missing)
    if not path.is_file():  # a pipe or a device would never end reading
        raise error(f"{path}: not a regular file")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as problem:
        raise error(f"{path}: unreadable manifest ({problem})") from None
    if not isinstance(manifest, dict):
        raise error(f"{path}: unreadable manifest (not a JSON object)")
    return manifest


def contained_file(folder: Path, name: object, error: type[Exception], what: str) -> Path:
    """``folder / name`` when ``name`` (read from ``folder``'s manifest) names a place inside ``folder`` that is
    a regular file or nothing yet; else ``error``. A manifest is data: one listing ``/dev/zero``, ``../..`` or a
    link out of the folder must not make medlink read there (a checksum of ``/dev/zero`` never ends)."""
    path = folder / str(name)
    if (
        not isinstance(name, str)
        or not name
        or Path(name).is_absolute()
        or not path.resolve().is_relative_to(folder.resolve())
        or (path.exists() and not path.is_file())
    ):
        raise error(f"{folder}: its manifest lists {name!r}, which is not a file inside the {what}; rebuild it")
    return path


def refuse_links_out(folder: Path, source: Path, what: str) -> None:
    """Every entry of ``folder`` is a plain file or folder inside it, else an error naming ``source`` (the file that
    named the folder): a link in it to a file elsewhere (``vocab.txt -> ~/.aws/credentials``) would be read or copied
    along, and a pipe or device (``encoder.json -> /dev/zero``) would never end reading."""
    inside = folder.resolve()
    for path in folder.rglob("*"):
        if not path.resolve().is_relative_to(inside):
            raise MedlinkError(f"{source}: {path} links out of the {what}; copy the file in instead")
        if not (path.is_file() or path.is_dir()):
            raise MedlinkError(f"{source}: {path} in the {what} is not a regular file")


def verify_checksums(
    folder: Path,
    files: Mapping[str, str],
    error: type[Exception],
    what: str,
    quick: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Every file a manifest lists is there and unchanged, else ``error`` saying which and to rebuild ``what``.

    A file with a ``quick`` record (:func:`quick_record`) is checked by its size and the checksum of its ends rather
    than read whole: reading gigabytes of vectors at every load would cost more than the load itself."""
    quick = quick or {}
    for name, checksum in files.items():
        path = contained_file(folder, name, error, what)
        if not path.exists():
            raise error(f"{path} is missing: the {what} is incomplete; rebuild it")
        record = quick.get(name)
        if record is not None:
            check_file_record(path, record, False, error, what)
        elif sha256_of(path) != checksum:
            raise error(f"{path} does not match the checksum in its manifest; rebuild the {what}")


def check_file_record(path: Path, record: Mapping[str, Any], whole: bool, error: type[Exception], what: str) -> None:
    """``path`` against its manifest's record: its size, then the checksum of the whole file (``sha256``) or of its
    ends (``sampled_sha256``, :func:`quick_record`); else ``error`` saying which and to rebuild ``what``."""
    size, listed = path.stat().st_size, record.get("size")
    if size != listed:
        said = f"{listed:,}" if isinstance(listed, int) else repr(listed)
        raise error(
            f"{path} has {size:,} bytes where its manifest says {said} (a truncated or replaced file); rebuild the "
            f"{what}"
        )
    actual, expected = (
        (sha256_of(path), record.get("sha256")) if whole else (sampled_sha256(path), record.get("sampled_sha256"))
    )
    if actual != expected:
        raise error(f"{path} does not match the checksum in its manifest; rebuild the {what}")


QUICK_CHECK_BYTES = 1 << 20  # a quick check hashes this much at each end of a file


def sampled_sha256(path: Path) -> str:
    """The checksum of a file's first and last MiB: catches a truncated, replaced or overwritten-at-the-head file
    without reading gigabytes on every load."""
    digest = hashlib.sha256()
    size = path.stat().st_size
    with open(path, "rb") as handle:
        digest.update(handle.read(QUICK_CHECK_BYTES))
        if size > QUICK_CHECK_BYTES:
            handle.seek(max(QUICK_CHECK_BYTES, size - QUICK_CHECK_BYTES))
            digest.update(handle.read(QUICK_CHECK_BYTES))
    return digest.hexdigest()


def quick_record(path: Path) -> dict[str, Any]:
    """What :func:`verify_checksums` checks a file by when it is not read whole: its size and its ends' checksum."""
    return {"size": path.stat().st_size, "sampled_sha256": sampled_sha256(path)}
