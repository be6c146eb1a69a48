"""Where a Spark build's executors read the names to encode and put the encoded chunks.

By default the build's own work folder (local mode, or a mount every executor shares); or any filesystem pyarrow
reaches by URI — ``hdfs://``, ``s3://``, ``gs://``, ``abfs://``, ``file://`` — so that a cluster needs no shared
mount. Under the root:

``plan.json``        the build these shards belong to (names, encoder, chunk size); a store holding another
                     build's shards is refused, never mixed
``names.arrow``      the names, one record batch per chunk, so that a task reads its own batch and nothing more
``chunks/NNNNN.npy`` the encoded chunks (fp16), each written under a temporary name and moved into place: a file
                     there is whole, so a killed job resumes from the chunks it finds

The driver copies the chunks into its local work folder and assembles the index there (:mod:`.index_build`).
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError

PLAN, NAMES, CHUNKS = "plan.json", "names.arrow", "chunks"


class ShardStoreError(MedlinkError):
    """A shard store that cannot be used: unreachable, or holding another build's shards."""


@dataclass(frozen=True)
class ShardStore:
    """root: a local folder or a filesystem URI."""

    root: str

    def claim(self, plan: dict[str, Any]) -> None:
        """Make the store this build's: an empty one gets the plan, one with the same plan is resumed, one with
        another plan is refused (its shards would be mixed into this index)."""
        filesystem, root = self._resolved()
        path = f"{root}/{PLAN}"
        if _exists(filesystem, path):
            with filesystem.open_input_stream(path) as stream:
                held = json.loads(stream.read().decode("utf-8"))
            if held != plan:
                raise ShardStoreError(
                    f"{self.root} holds the shards of another index build (other names, encoder or "
                    "chunk size); give the build an empty --shards location, or delete "
                    f"{self.root} to start this one there"
                )
            return
        filesystem.create_dir(root, recursive=True)
        self._put(path, json.dumps(plan, indent=2).encode("utf-8"))

    def write_names(self, names: Sequence[str], chunk_size: int) -> None:
        """The names to encode, one record batch per chunk (kept when an earlier run wrote them)."""
        import pyarrow as pa

        filesystem, root = self._resolved()
        if _exists(filesystem, f"{root}/{NAMES}"):
            return
        table = pa.table({"text": pa.array(list(names), pa.large_string())})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=chunk_size)
        self._put(f"{root}/{NAMES}", sink.getvalue().to_pybytes())

    def names_of(self, number: int) -> list[str]:
        """The names of chunk ``number`` (an executor reads only that record batch)."""
        import pyarrow as pa

        filesystem, root = self._resolved()
        with filesystem.open_input_file(f"{root}/{NAMES}") as source:
            return pa.ipc.open_file(source).get_batch(number).column("text").to_pylist()

    def encoded(self) -> set[int]:
        """The chunks already encoded (one listing: cheaper than asking per chunk on an object store)."""
        from pyarrow import fs

        filesystem, root = self._resolved()
        found = filesystem.get_file_info(fs.FileSelector(f"{root}/{CHUNKS}", allow_not_found=True))
        names = (info.base_name for info in found if info.type == fs.FileType.File)
        return {int(name[:-4]) for name in names if name.endswith(".npy") and name[:-4].isdigit()}

    def has(self, number: int) -> bool:
        filesystem, root = self._resolved()
        return _exists(filesystem, self._chunk(root, number))

    def put_chunk(self, number: int, vectors: np.ndarray) -> None:
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(vectors, dtype=np.float16))
        filesystem, root = self._resolved()
        filesystem.create_dir(f"{root}/{CHUNKS}", recursive=True)
        self._put(self._chunk(root, number), buffer.getvalue())

    def fetch(self, number: int, destination: Path) -> None:
        """Copy chunk ``number`` to ``destination`` (nothing to do when it is already there: the local store)."""
        if destination.exists():
            return
        filesystem, root = self._resolved()
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_name(f"{destination.stem}.fetch.partial.npy")
        with filesystem.open_input_stream(self._chunk(root, number)) as stream:
            partial.write_bytes(stream.read())
        partial.replace(destination)

    def clear(self) -> None:
        """Remove what the build wrote (plan, names, chunks), once the index is in place."""
        filesystem, root = self._resolved()
        if _exists(filesystem, f"{root}/{CHUNKS}"):
            filesystem.delete_dir(f"{root}/{CHUNKS}")
        for name in (NAMES, PLAN):
            if _exists(filesystem, f"{root}/{name}"):
                filesystem.delete_file(f"{root}/{name}")

    def _resolved(self) -> tuple[Any, str]:
        from pyarrow import fs

        try:
            if "://" in self.root:
                filesystem, path = fs.FileSystem.from_uri(self.root)
                return filesystem, path.rstrip("/")
        except (OSError, ValueError, ImportError) as error:  # an unknown scheme, no Hadoop client, no credentials
            raise ShardStoreError(f"cannot reach the shard store {self.root}: {error}") from None
        return fs.LocalFileSystem(), str(Path(self.root).resolve())

    @staticmethod
    def _chunk(root: str, number: int) -> str:
        return f"{root}/{CHUNKS}/{number:05d}.npy"

    def _put(self, path: str, data: bytes) -> None:
        """Write under a temporary name, then move into place: a reader never sees half a file."""
        filesystem, _ = self._resolved()
        partial = f"{path}.{uuid.uuid4().hex}.partial"
        with filesystem.open_output_stream(partial) as stream:
            stream.write(data)
        filesystem.move(partial, path)


def _exists(filesystem: Any, path: str) -> bool:
    from pyarrow import fs

    return filesystem.get_file_info(path).type != fs.FileType.NotFound
