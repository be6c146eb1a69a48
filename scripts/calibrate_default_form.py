"""Calibrate the embedded default's form test (linking/mentions/form.py) and write it to
src/medlink/resources/default-form.json.

    python scripts/calibrate_default_form.py          # ~3 min on 2 cores; needs ../shared/data

The examples (medlink.evaluation.form_fit): the default's retrieval decisions (form test off, nil threshold on) on
BC5CDR train (Disease, Chemical) and NCBI-disease train, gold in MeSH, against the calibration half of three kinds of
simulated unknowns (medlink.evaluation.unknowns; benchmarks/unknown_terms.py measures on the other half):
supplementary records' names linked without the records, the names of 500 descriptors held out of the terminology and
its index, 1,000 invented drug-like names. The cut turns nil at most ``--budget`` of the corpora's distinct mentions
the default links right (issue 44 allows 0.3 points of Acc@1); the trade-off at other budgets is printed.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from medlink.encoders import load_encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.form_fit import FormExamples, fit_form_model
from medlink.evaluation.unknowns import (
    CALIBRATION,
    held_out_ids,
    held_out_linker,
    held_out_names,
    invented_names,
    supplementary_names,
)
from medlink.linking import Linker, LinkerConfig
from medlink.linking.defaults import descriptors_index
from medlink.linking.mentions.form import FEATURES
from medlink.linking.spec import DESCRIPTORS
from medlink.resources import DEFAULT_FORM, resource_path, supplementary_records_path
from medlink.terminology import load_default_terminology

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpora"
CORPORA = (
    ("pubtator:bc5cdr/CDR_TrainingSet.PubTator.txt", "Disease"),
    ("pubtator:bc5cdr/CDR_TrainingSet.PubTator.txt", "Chemical"),
    ("pubtator:ncbi-disease/NCBItrainset_corpus.txt", None),
)
OFF = LinkerConfig(form_test=False)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=0.003)
    parser.add_argument("--output", type=Path, default=resource_path(DEFAULT_FORM))
    args = parser.parse_args(argv)
    descriptors = load_default_terminology()
    union = Linker.load(config=OFF)
    examples = FormExamples()
    for spec, entity_type in CORPORA:
        kind, _, path = spec.partition(":")
        examples.add_corpus(union, load_corpus(f"{kind}:{SHARED / path}", entity_type))
    only_descriptors = Linker.load(embedded=DESCRIPTORS, config=OFF)
    records = supplementary_names(supplementary_records_path(), descriptors, CALIBRATION, 1_000)
    examples.add_unknowns("supplementary names", only_descriptors, records)
    held = held_out_ids(descriptors, CALIBRATION, 500)
    with tempfile.TemporaryDirectory() as work:
        reduced = held_out_linker(descriptors, held, descriptors_index(), Path(work), OFF)
        examples.add_unknowns("held-out descriptors", reduced, held_out_names(descriptors, held))
    examples.add_unknowns("invented names", union, invented_names(union.terminology, CALIBRATION, 1_000))
    fit = fit_form_model(examples, args.budget)
    print("\n".join(fit.lines()))
    for name, weight in zip(FEATURES, fit.model.weights, strict=True):  # on the features' own scales
        print(f"  {name:12s} {weight:+.3f}")
    record = {
        "model": fit.model.to_dict(),
        "encoder_fingerprint": load_encoder(DEFAULT_MODEL).identity.fingerprint(),
        "budget": args.budget,
        "examples": fit.examples,
        "corpus_mentions": examples.corpus_mentions,
        "look_alikes_caught": {kind: round(share, 4) for kind, share in fit.caught.items()},
        "command": "python scripts/calibrate_default_form.py",
    }
    args.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
