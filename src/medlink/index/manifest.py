"""An index's ``manifest.json``, read once into typed fields and checked as it is read.

What the manifest holds: the format and its version, the medlink that wrote it, the encoder's identity and its
fingerprint, the terminology's fingerprint, the kind and parameters of each source's FAISS index, counts and timing,
where it was built from (``origin``: encoder name, backend, terminology folder), the checksum of every file, and what
calibration added later (a nil threshold, its calibration record, a term model, a form model; ``updated_from`` and
``rebound_from`` for an index serving a terminology other than the one it was encoded for). A manifest is data: a
field of the wrong type is refused naming the file and the field, never met later as an ``AttributeError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from medlink.encoders.base import EncoderIdentity
from medlink.errors import MedlinkError, shown
from medlink.index.compressed import PRODUCT, CompressedParameters
from medlink.index.faiss_backend import HnswParameters

MANIFEST = "manifest.json"


class IndexFileError(MedlinkError):
    """An index that cannot be used: corrupt, incomplete, or built with another encoder or terminology."""


@dataclass(frozen=True)
class IndexOrigin:
    """What an index was built from, as its build was told: the encoder's name (a catalog name, a model folder or a
    hub id), its backend, and the compiled terminology's folder (``None``: the embedded default)."""

    encoder: str | None = None
    backend: str = "onnx"
    terminology: str | None = None

    def as_json(self) -> dict[str, str]:
        return {item.name: value for item in fields(self) if (value := getattr(self, item.name)) is not None}


@dataclass(frozen=True)
class IndexManifest:
    """The typed fields of an index's manifest (see the module's text); ``written`` is the whole JSON object, for
    the fields other writers add."""

    path: Path
    encoder: EncoderIdentity
    encoder_fingerprint: str
    terminology: str
    files: Mapping[str, str]
    quick_checks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # large files: size and ends
    kinds: Mapping[str, str] = field(default_factory=dict)
    hnsw: HnswParameters = field(default_factory=HnswParameters)
    compressed: CompressedParameters = field(default_factory=CompressedParameters)
    counts: Mapping[str, int] = field(default_factory=dict)
    timing: Mapping[str, float] = field(default_factory=dict)
    origin: IndexOrigin = field(default_factory=IndexOrigin)
    nil_threshold: float | None = None
    calibration: Mapping[str, Any] | None = None
    term_model: Mapping[str, Any] | None = None
    form_model: Mapping[str, Any] | None = None
    updated_from: str | None = None
    rebound_from: str | None = None
    written: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def encoded_for(self) -> str:
        """The terminology the vectors were encoded for: the one an installed update or a rebinding replaced, else
        the index's own (what a reranker fitted over the vectors was fitted for)."""
        return self.updated_from or self.rebound_from or self.terminology

    @classmethod
    def of(cls, written: Mapping[str, Any], path: Path) -> IndexManifest:
        """The manifest ``written`` (read from ``path``), each field checked: an :class:`IndexFileError` names the
        file and the field."""
        read = _Reader(written, path)
        return cls(
            path=path,
            encoder=read.parameters("encoder", EncoderIdentity, required=True),
            encoder_fingerprint=read.text("encoder_fingerprint", required=True),
            terminology=read.text("terminology", required=True),
            files=read.mapping("files", str, required=True),
            quick_checks=read.mapping("quick_checks", dict),
            kinds=read.mapping("kinds", str),
            hnsw=read.parameters("hnsw", HnswParameters),
            compressed=_compressed(read.parameters("compressed", CompressedParameters), written),
            counts=read.mapping("counts", int),
            timing=read.mapping("timing", (int, float)),
            origin=read.parameters("origin", IndexOrigin),
            nil_threshold=read.number("nil_threshold"),
            calibration=read.mapping("calibration", object, empty=None),
            term_model=read.mapping("term_model", object, empty=None),
            form_model=read.mapping("form_model", object, empty=None),
            updated_from=read.text("updated_from"),
            rebound_from=read.text("rebound_from"),
            written=dict(written),
        )


def _compressed(parameters: CompressedParameters, written: Mapping[str, Any]) -> CompressedParameters:
    """A compressed index built before ``sq8`` codes existed names none: its graph is over PQ codes."""
    named = written.get("compressed")
    return replace(parameters, codes=PRODUCT) if isinstance(named, dict) and "codes" not in named else parameters


class _Reader:
    """Reads one field at a time, refusing a value of the wrong type with the file and field named."""

    def __init__(self, written: Mapping[str, Any], path: Path) -> None:
        self.written, self.path = written, path

    def _refuse(self, name: str, what: str) -> IndexFileError:
        value = shown(self.written.get(name), 60)
        return IndexFileError(f"{self.path}: {name!r} must be {what}, not {value}; rebuild the index")

    def _value(self, name: str, required: bool) -> Any:
        if name not in self.written or self.written[name] is None:
            if required:
                raise IndexFileError(f"{self.path}: the field {name!r} is missing; rebuild the index")
            return None
        return self.written[name]

    def text(self, name: str, required: bool = False) -> Any:
        value = self._value(name, required)
        if value is not None and not isinstance(value, str):
            raise self._refuse(name, "text")
        return value

    def number(self, name: str) -> float | None:
        value = self._value(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._refuse(name, "a number")
        return float(value)

    def mapping(self, name: str, kind: Any, required: bool = False, empty: Any = ...) -> Any:
        value = self._value(name, required)
        if value is None:
            return {} if empty is ... else empty
        if not isinstance(value, dict) or not all(
            isinstance(key, str) and isinstance(item, kind) and not (kind is int and isinstance(item, bool))
            for key, item in value.items()
        ):
            raise self._refuse(name, "a JSON object" if kind is object else f"a JSON object of {_named(kind)}")
        return value

    def parameters(self, name: str, kind: type, required: bool = False) -> Any:
        """A dataclass's fields as a JSON object: known keys only, each of its field's type (``int``, ``str``,
        ``float``, each perhaps ``| None``), the required ones present."""
        value = self._value(name, required)
        if value is None:
            return kind()
        types = {item.name: getattr(item.type, "__name__", str(item.type)) for item in fields(kind)}
        what = f"a JSON object of {', '.join(sorted(types))}"
        if not isinstance(value, dict) or not all(
            key in types and _of_type(item, types[key]) for key, item in value.items()
        ):
            raise self._refuse(name, what)
        try:
            return kind(**value)
        except (TypeError, ValueError):  # a required field missing, or a value the dataclass refuses
            raise self._refuse(name, what) from None


def _of_type(value: Any, annotation: str) -> bool:
    """Whether a JSON value fits a field annotated ``int``, ``float``, ``str`` or any of them ``| None``."""
    allowed = {part.strip() for part in annotation.split("|")}
    if value is None:
        return "None" in allowed
    if isinstance(value, bool):
        return "bool" in allowed
    if isinstance(value, int):
        return bool(allowed & {"int", "float"})
    if isinstance(value, float):
        return "float" in allowed
    return isinstance(value, str) and "str" in allowed


def _named(kind: Any) -> str:
    if isinstance(kind, tuple):
        return "numbers"
    return {str: "texts", int: "whole numbers"}.get(kind, "values")
