"""Write the data of the ``medlink-default-index`` distribution: the embedded default's index and compiled MeSH.

    python scripts/build_default_index_package.py      # about three minutes on 2 cores; run after changing the
                                                         # default encoder, the embedded MeSH or its calibration

It builds both exactly as a first use would (into a fresh cache, so nothing stale is copied), then copies them
into packages/medlink-default-index/src/medlink_default_index/data/ (a staging folder, then a rename) with their
checksums. tests/linking/test_prebuilt.py fails while the package is stale.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "packages" / "medlink-default-index" / "src" / "medlink_default_index" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, default=TARGET)
    parser.add_argument("--cache", type=Path, help="build in this cache folder (default: a fresh temporary one)")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="medlink-prebuilt-cache."))
    os.environ["MEDLINK_CACHE"] = str(cache)
    os.environ["MEDLINK_NO_PREBUILT"] = "1"  # build from the sources, never from an installed copy of the package
    from medlink.folders import staged_folder
    from medlink.index.vector_index import read_index_manifest
    from medlink.linking.defaults import default_drug_terminology_path, descriptors_index
    from medlink.linking.prebuilt import INDEXES, TERMINOLOGIES, prebuilt_index_name
    from medlink.models.checksums import record_checksums

    index = descriptors_index(progress=True)
    terminology = default_drug_terminology_path(progress=True)
    manifest = read_index_manifest(index)
    name = prebuilt_index_name(manifest.terminology, manifest.encoder_fingerprint)
    ignore = shutil.ignore_patterns(".*")  # lock files and staging folders of the cache
    with staged_folder(args.output, "checksums.json", "the prebuilt default's data") as staging:
        shutil.copytree(index, staging / INDEXES / name, ignore=ignore, copy_function=shutil.copyfile)
        shutil.copytree(
            terminology, staging / TERMINOLOGIES / terminology.name, ignore=ignore, copy_function=shutil.copyfile
        )
        record_checksums(staging)
    # pip builds a folder's wheel in place, and setuptools adds what an earlier build left in build/lib: another
    # release's data would ride along
    shutil.rmtree(args.output.parents[2] / "build", ignore_errors=True)
    sizes = sum(path.stat().st_size for path in args.output.rglob("*") if path.is_file())
    print(f"wrote {args.output} ({sizes / 1e6:.0f} MB) from {index} and {terminology}")


if __name__ == "__main__":
    main()
