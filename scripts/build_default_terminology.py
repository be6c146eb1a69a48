"""Rebuild the embedded default terminology (MeSH descriptors) shipped in ``src/medlink/resources``.

Run from the repository root with ``../shared`` beside it:  python scripts/build_default_terminology.py
A test checks that the shipped copy matches the shared source file and the current normalizer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from medlink.resources import default_terminology_path
from medlink.terminology import ReadReport, SourceSpec, compile_terminology, save_terminology

SOURCE = Path(__file__).resolve().parents[1].parent / "shared/data/terminologies/mesh/mesh_descriptors.tsv.gz"


def main() -> int:
    if not SOURCE.exists():
        print(f"{SOURCE} not found: run from a checkout with ../shared beside it", file=sys.stderr)
        return 1
    report = ReadReport()
    terminology = compile_terminology([SourceSpec(SOURCE, "mesh-desc-tsv")], report)
    target = save_terminology(terminology, default_terminology_path(), compression="zstd")  # small to ship
    print(f"{len(terminology):,} concepts, {terminology.name_count:,} names -> {target}")
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
