"""Learn the crosswalk from BC5CDR's MeSH ids (2015) to the MeSH 2024 descriptors that took their place
(``src/medlink/resources/mesh-crosswalk/``, :mod:`medlink.evaluation.crosswalk`), from the training and development
annotations only (the test set is never read) and MeSH 2024's own term list
(``../shared/data/terminologies/mesh/mesh2024_descriptor_terms.tsv.gz``).

    python scripts/build_mesh_crosswalk.py
    python scripts/build_mesh_crosswalk.py --corpus pubtator:CDR_TrainingSet.PubTator.txt --output /tmp/xw.tsv
"""

from __future__ import annotations

import argparse
import csv
import gzip
from collections.abc import Iterator
from pathlib import Path

from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.crosswalk import learn_crosswalk
from medlink.linking import Linker

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BC5CDR = DATA / "corpora" / "bc5cdr"
TERMS = DATA / "terminologies" / "mesh" / "mesh2024_descriptor_terms.tsv.gz"
OUTPUT = ROOT / "src" / "medlink" / "resources" / "mesh-crosswalk" / "bc5cdr-mesh2015-to-mesh2024.tsv"


def mesh_terms(path: Path) -> Iterator[tuple[str, str]]:
    """(``MESH:`` descriptor id, term) of every row of NLM's MeSH term list, as published."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter="\t", quoting=csv.QUOTE_NONE):
            yield f"MESH:{row['DescriptorUI']}", row["TermName"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = [
        f"pubtator:{BC5CDR / name}" for name in ("CDR_TrainingSet.PubTator.txt", "CDR_DevelopmentSet.PubTator.txt")
    ]
    parser.add_argument(
        "--corpus", action="append", help="annotated corpora to learn from (default: BC5CDR train, dev)"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    specs = args.corpus or default
    terminology = Linker.load().terminology  # the default linker's: the ids it answers
    corpora = [load_corpus(spec) for spec in specs]
    crosswalk = learn_crosswalk(
        corpora, lambda i: terminology.resolve(i) is not None, mesh_terms(TERMS), terminology.normalizer
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    sources = ", ".join(Path(spec.partition(":")[2]).name for spec in specs)
    crosswalk.save(args.output, f"learned by scripts/build_mesh_crosswalk.py from {sources} and {TERMS.name}")
    print(f"{args.output}: {len(crosswalk.moves)} ids moved")


if __name__ == "__main__":
    main()
