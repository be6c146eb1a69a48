"""Learn the corpus lexicon that ships with the span tagger (``medlink-span-tagger``'s
``model/corpus-lexicon.json.gz``) from the public corpora in ``../shared/data/corpora/``: BC5CDR train + dev
(Disease, Chemical) and NCBI-disease train + dev (Disease); NCBI-disease test is left out, to be scored on. Spans
are found over the embedded default's terminology, as ``medlink annotate`` finds them; then the checksums of the
tagger's folder are recorded again.

    python scripts/build_corpus_lexicon.py
    python scripts/build_corpus_lexicon.py --output /tmp/corpus-lexicon.json.gz --folds 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from medlink.linking import Linker
from medlink.linking.annotation.corpus_lexicon import FILE_NAME
from medlink.models.checksums import record_checksums
from medlink.training.corpus_lexicon import DEFAULT_FOLDS, learn_corpus_lexicon, public_sources

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "data" / "corpora"
TAGGER_FOLDER = ROOT / "packages" / "medlink-span-tagger" / "src" / "medlink_span_tagger" / "model"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", type=Path, default=TAGGER_FOLDER / FILE_NAME)
    parser.add_argument("--folds", type=int, default=DEFAULT_FOLDS)
    args = parser.parse_args()
    started = time.perf_counter()
    terminology = Linker.load().terminology  # the default linker's: what annotate finds spans over
    lexicon = learn_corpus_lexicon(public_sources(CORPORA), terminology, args.folds)
    lexicon.save(args.output)
    print(
        f"{args.output}: {len(lexicon.forms):,} forms, {len(lexicon.seldom_marked):,} verdicts on names, "
        f"{len(lexicon.documents):,} documents ({', '.join(lexicon.sources)}); {time.perf_counter() - started:.0f} s"
    )
    if args.output.parent == TAGGER_FOLDER:
        print(f"checksums: {record_checksums(TAGGER_FOLDER)}")


if __name__ == "__main__":
    main()
