"""A trial index: what the matcher needs of every trial, computed once.

``INDEX/manifest.json``          format and version, medlink version, the encoders' identities, the concept
                                 terminology's fingerprint, counts, checksum of every file
``INDEX/trials.parquet``         one row per trial: id, title, description, criteria, age and sex limits, the
                                 concepts of its conditions and interventions, and those named in its exclusions
``INDEX/D.npy``, ``I.npy``, ``E.npy``  per trial: its description (trial encoder), its inclusion and its exclusion
                                 criteria each as one text (patient encoder; a zero row when it has none)
``INDEX/I-criteria.npy``, ``E-criteria.npy``  per criterion (patient encoder), in trial order: what shows which
                                 criteria match a note
``INDEX/bm25/``                  BM25 over title, description and criteria

Vectors are float16 on disk (half the size; cosines move by < 1e-3) and memory-mapped when loaded. The folder is
written beside its target and renamed into place; it refuses to load when a file does not match its checksum, and
refuses to be searched with other encoders than it was built with.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlink.errors import MedlinkError
from medlink.folders import read_manifest_json, sha256_of, staged_folder, verify_checksums
from medlink.trials.matching.bm25 import Bm25
from medlink.trials.matching.encoders import TrialEncoders
from medlink.trials.matching.texts import criteria_text, description
from medlink.trials.records import TrialRecord
from medlink.version import __version__

INDEX_FORMAT = "medlink-trial-index"
INDEX_VERSION = 1
MANIFEST = "manifest.json"
TRIALS = "trials.parquet"
VIEWS = ("D", "I", "E")  # description, inclusion, exclusion
MAX_CRITERIA = 40  # per side: a few records list hundreds of lines; what matters is near the top


class TrialIndexError(MedlinkError):
    """A trial index that cannot be used: corrupt, incomplete, or built with other encoders."""


@dataclass(frozen=True)
class IndexedTrial:
    """One trial as the matcher reads it. ``concepts``: of its conditions and interventions;
    ``exclusion_concepts``: diseases named in its exclusion criteria."""

    nct_id: str
    title: str = ""
    description: str = ""
    inclusion: tuple[str, ...] = ()
    exclusion: tuple[str, ...] = ()
    minimum_age: float | None = None
    maximum_age: float | None = None
    sex: str = "all"
    concepts: tuple[str, ...] = ()
    exclusion_concepts: tuple[str, ...] = ()

    @classmethod
    def from_record(
        cls, record: TrialRecord, concepts: Sequence[str] = (), exclusion_concepts: Sequence[str] = ()
    ) -> IndexedTrial:
        return cls(
            record.nct_id,
            record.title,
            description(record),
            record.inclusion[:MAX_CRITERIA],
            record.exclusion[:MAX_CRITERIA],
            record.minimum_age,
            record.maximum_age,
            record.sex or "all",
            tuple(concepts),
            tuple(exclusion_concepts),
        )

    @property
    def text(self) -> str:
        """What BM25 reads."""
        return " ".join([self.description, *self.inclusion, *self.exclusion])


@dataclass
class TrialIndex:
    """Trials, their vectors per view and per criterion, and BM25 over their text."""

    trials: list[IndexedTrial]
    vectors: dict[str, np.ndarray]  # "D", "I", "E": (trials, dim); "I-criteria", "E-criteria": (criteria, dim)
    bm25: Bm25
    manifest: dict[str, Any] = field(default_factory=dict)
    _offsets: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _rows: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for side in ("I", "E"):
            lengths = [len(trial.inclusion if side == "I" else trial.exclusion) for trial in self.trials]
            self._offsets[side] = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        self._rows = {trial.nct_id: row for row, trial in enumerate(self.trials)}

    def __len__(self) -> int:
        return len(self.trials)

    def row(self, nct_id: str) -> int | None:
        return self._rows.get(nct_id)

    def rows(self, nct_ids: Sequence[str]) -> list[int]:
        """The rows of ``nct_ids``, in order; ids the index lacks are an error naming them."""
        missing = [i for i in nct_ids if i not in self._rows]
        if missing:
            raise MedlinkError(f"{len(missing)} trials are not in the index: {', '.join(missing[:5])}")
        return [self._rows[i] for i in nct_ids]

    def criteria_vectors(self, side: str, row: int) -> np.ndarray:
        """The vectors of one trial's inclusion (``side`` "I") or exclusion ("E") criteria, in order."""
        start, end = self._offsets[side][row], self._offsets[side][row + 1]
        return np.asarray(self.vectors[f"{side}-criteria"][start:end], dtype=np.float32)

    def check_encoders(self, encoders: TrialEncoders) -> None:
        built = self.manifest.get("fingerprints")
        if built is not None and built != encoders.fingerprints():
            raise TrialIndexError(
                f"this trial index was built with encoders {self.manifest.get('encoder_name')!r} "
                f"and cannot be searched with {encoders.name!r}: their vectors differ. Rebuild "
                f"it with `medlink trials index … --encoders {encoders.name}`"
            )

    # --- building -------------------------------------------------------------------------------------------

    @classmethod
    def build(cls, trials: Sequence[IndexedTrial], encoders: TrialEncoders, progress: bool = False) -> TrialIndex:
        if not trials:
            raise MedlinkError("no trial to index")
        ids = [trial.nct_id for trial in trials]
        if len(set(ids)) != len(ids):
            duplicated = sorted(i for i, count in Counter(ids).items() if count > 1)
            raise MedlinkError(f"trial ids appear more than once: {', '.join(duplicated[:5])}")
        vectors = {
            "D": encoders.encode_trials([t.description or t.title for t in trials], progress),
            "I": _encode_optional(encoders, [criteria_text(t.inclusion) for t in trials], progress),
            "E": _encode_optional(encoders, [criteria_text(t.exclusion) for t in trials], progress),
            "I-criteria": _encode_optional(encoders, [c for t in trials for c in t.inclusion], progress),
            "E-criteria": _encode_optional(encoders, [c for t in trials for c in t.exclusion], progress),
        }
        manifest = {
            "encoder_name": encoders.name,
            "encoders": _jsonable(encoders.identity()),
            "fingerprints": encoders.fingerprints(),
        }
        return cls(list(trials), vectors, Bm25.build([t.text for t in trials]), manifest)

    # --- saving and loading ---------------------------------------------------------------------------------

    def save(self, folder: Path | str, extra: dict[str, Any] | None = None) -> Path:
        """Write to a staging folder beside ``folder``, then rename it into place."""
        folder = Path(folder)
        with staged_folder(folder, MANIFEST, "a medlink trial index") as staging:
            _write_trials(self.trials, staging / TRIALS)
            for name, matrix in self.vectors.items():
                np.save(staging / f"{name}.npy", np.asarray(matrix, dtype=np.float16))
            self.bm25.save(staging / "bm25")
            files = {str(p.relative_to(staging)): sha256_of(p) for p in sorted(staging.rglob("*")) if p.is_file()}
            manifest = {
                "format": INDEX_FORMAT,
                "version": INDEX_VERSION,
                "medlink_version": __version__,
                **self.manifest,
                **(extra or {}),
                "trials": len(self.trials),
                "criteria": {side: int(self._offsets[side][-1]) for side in ("I", "E")},
                "files": files,
            }
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=2))
        self.manifest = manifest
        return folder

    @classmethod
    def load(cls, folder: Path | str, verify: bool = True) -> TrialIndex:
        folder = Path(folder)
        manifest = _read_manifest(folder)
        if verify:
            verify_checksums(folder, manifest["files"], TrialIndexError, "trial index")
        trials = _read_trials(folder / TRIALS)
        vectors = {
            name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ("D", "I", "E", "I-criteria", "E-criteria")
        }
        for name in VIEWS:
            if len(vectors[name]) != len(trials):
                raise TrialIndexError(
                    f"{folder / (name + '.npy')} has {len(vectors[name])} rows for "
                    f"{len(trials)} trials; rebuild the index"
                )
        return cls(trials, vectors, Bm25.load(folder / "bm25", len(trials)), manifest)


def _encode_optional(encoders: TrialEncoders, texts: list[str], progress: bool) -> np.ndarray:
    """Patient-encoder vectors, a zero row for an empty text (a trial with no exclusion section)."""
    matrix = np.zeros((len(texts), encoders.dimension), dtype=np.float32)
    present = [i for i, text in enumerate(texts) if text.strip()]
    if present:
        matrix[present] = encoders.encode_patients([texts[i] for i in present], progress)
    return matrix


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _write_trials(trials: Iterable[IndexedTrial], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [asdict(trial) for trial in trials]
    columns = {name: [row[name] for row in rows] for name in IndexedTrial.__dataclass_fields__}
    for name in ("inclusion", "exclusion", "concepts", "exclusion_concepts"):
        columns[name] = pa.array([list(v) for v in columns[name]], pa.list_(pa.string()))
    for name in ("minimum_age", "maximum_age"):
        columns[name] = pa.array(columns[name], pa.float64())
    pq.write_table(pa.table(columns), path, compression="zstd")


def _read_trials(path: Path) -> list[IndexedTrial]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read()  # not read_table, which imports pandas (+0.4 s, +50 MB)
    names = list(IndexedTrial.__dataclass_fields__)
    missing = [name for name in names if name not in table.column_names]
    if missing:
        raise TrialIndexError(f"{path} lacks the columns {', '.join(missing)}; rebuild the index")
    listed = {"inclusion", "exclusion", "concepts", "exclusion_concepts"}
    columns = [table.column(name).to_pylist() for name in names]
    trials = []
    for row in zip(*columns, strict=True):
        values: dict[str, Any] = {name: tuple(v) if name in listed else v for name, v in zip(names, row, strict=True)}
        trials.append(IndexedTrial(**values))
    return trials


def _read_manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    missing = f"{folder} is not a medlink trial index (no {MANIFEST}); build one with `medlink trials index`"
    manifest = read_manifest_json(path, TrialIndexError, missing)
    if manifest.get("format") != INDEX_FORMAT:
        raise TrialIndexError(f"{path}: not a medlink trial index manifest (a concept index? those link terms)")
    if manifest.get("version") != INDEX_VERSION:
        raise TrialIndexError(
            f"{folder} is trial index format version {manifest.get('version')}; this medlink "
            f"({__version__}) reads version {INDEX_VERSION}. Rebuild it with "
            "`medlink trials index`"
        )
    return manifest
