"""Calibrate the nil threshold of medlink's default index and write src/medlink/resources/default-nil.json.

    .venv/bin/python scripts/calibrate_default_nil.py [--data ../shared/data]

Development data only: the training splits of NCBI-disease and BC5CDR (Disease and Chemical), each mention kept
when its gold ids are MeSH descriptors of the embedded terminology, plus the calibration half of medlink's
non-medical negatives. Strategy ``budget`` (at most 0.05 % of these mentions lost), taken by a term model over the
mention's vector and best score, with the max-tp threshold as its floor (``evaluation/nil_calibration.py``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from medlink.encoders import load_encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.evaluation.calibration import DEFAULT_MAX_LOSS
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.nil_calibration import calibrate_with_negatives, in_terminology
from medlink.linking import Linker, LinkerConfig
from medlink.linking.defaults import descriptors_index
from medlink.resources import DEFAULT_NIL, resource_path

TRAINING = (
    "pubtator:{data}/corpora/ncbi-disease/NCBItrainset_corpus.txt",
    "pubtator:{data}/corpora/bc5cdr/CDR_TrainingSet.PubTator.txt",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--max-loss", type=float, default=DEFAULT_MAX_LOSS)
    args = parser.parse_args()
    linker = Linker.load(config=LinkerConfig(nil_threshold=0))  # the default pipeline, no threshold yet
    mentions = []
    for spec in TRAINING:
        mentions += in_terminology(load_corpus(spec.format(data=args.data.resolve())), linker).mentions
    corpus = Corpus("NCBI-disease train + BC5CDR train (gold in MeSH descriptors)", tuple(mentions))
    result = calibrate_with_negatives(linker, corpus, args.max_loss, encoder=load_encoder(DEFAULT_MODEL))
    index = json.loads((descriptors_index() / "manifest.json").read_text())
    shipped = {
        **asdict(result),
        "max_loss": args.max_loss,
        "corpus": corpus.name,
        "mentions": len(corpus),
        "encoder_fingerprint": index["encoder_fingerprint"],
        "terminology": index["terminology"],
        "command": "python scripts/calibrate_default_nil.py",
    }
    path = resource_path(DEFAULT_NIL)
    path.write_text(json.dumps(shipped, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in shipped.items() if k != "term_model"}, indent=2))


if __name__ == "__main__":
    main()
