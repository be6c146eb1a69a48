"""From source files to one :class:`Terminology`: ``medlink terminology compile`` in Python."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError
from medlink.folders import sha256_of
from medlink.terminology.builder import TerminologyBuilder
from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.readers import READERS, accepted_options, detect_format, read_source
from medlink.terminology.terminology import SourceInfo, Terminology


@dataclass(frozen=True)
class SourceSpec:
    """A source file and its format; written ``FORMAT:PATH`` on the command line, or just ``PATH``."""

    path: Path
    format: str

    @classmethod
    def parse(cls, text: str, default_format: str | None = None) -> SourceSpec:
        prefix, sep, rest = text.partition(":")
        if sep and prefix in READERS:
            return cls(Path(rest), prefix)
        path = Path(text)
        if not path.exists():
            raise MedlinkError(f"{path}: file not found")
        return cls(path, default_format or detect_format(path))


def _checksum(path: Path) -> tuple[str, int]:
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    if len(files) == 1:
        return sha256_of(files[0]), files[0].stat().st_size
    import hashlib

    digest = hashlib.sha256("".join(f"{p.name}:{sha256_of(p)}\n" for p in files).encode())
    return digest.hexdigest(), sum(p.stat().st_size for p in files)


def _source_info(spec: SourceSpec) -> SourceInfo:
    sha256, size = _checksum(spec.path) if spec.path.exists() else ("", 0)
    return SourceInfo(
        path=spec.path.name, format=spec.format, sha256=sha256, size=size, concepts=0, release=release_of(spec.path)
    )


_RELEASE = re.compile(r"(?<!\d)((?:19|20)\d\d(?:A[AB])?)(?!\d)")


def release_of(path: Path) -> str:
    """The release a source's name states: a year ("desc2026.xml", "icd10cm_tabular_2026.xml") or a UMLS release
    ("2025AA/META"), from the file's name or its folder's; "" when neither states one."""
    for name in (path.name, path.parent.name):
        found = _RELEASE.search(name.upper())
        if found:
            return found.group(1)
    return ""


def compile_terminology(sources: Iterable[SourceSpec], report: ReadReport | None = None, **options: Any) -> Terminology:
    """Read every source and merge them. ``options`` go to the readers that take them (``namespace``…).

    Sources that hold no concept at all are an error, not an empty terminology that later commands would accept."""
    builder = TerminologyBuilder(report or ReadReport())
    specs = list(sources)
    infos = [_source_info(spec) for spec in specs]
    if [spec.format for spec in specs] == ["umls"]:
        # A UMLS release alone is read into columns: millions of rows never become Python records.
        from medlink.terminology.readers.umls_columns import read_umls_columns

        options = accepted_options(read_umls_columns, options)
        terminology = read_umls_columns(specs[0].path, builder.report, info=infos[0], **options)
    else:
        for spec, info in zip(specs, infos, strict=True):
            builder.add_source(read_source(spec.path, spec.format, builder.report, **options), info)
        terminology = builder.build()
    if not len(terminology):
        read = ", ".join(f"{spec.path} (as {spec.format})" for spec in specs) or "no source"
        skipped = "; ".join(line.strip() for line in builder.report.lines()[:3])
        raise MedlinkError(
            f"no concept found in {read}{': ' + skipped if skipped else ''}. Check the format "
            f"(`medlink terminology formats`; give it as FORMAT:PATH) or the file"
        )
    return terminology
