"""What the default linker answers for terms whose concept it lacks (issue 44): nil, a true ancestor, or a
look-alike that silently corrupts a drug list.

    python benchmarks/unknown_terms.py            # ~3 min on 2 cores; prints the three tables as Markdown

1. **Supplementary names**: 1,000 MeSH supplementary records (seed 0), their preferred names linked with the
   descriptors-only default. Right: nil, or one of the record's mapped descriptors or their ancestors.
2. **Held-out descriptors**: 500 descriptors (seed 0) taken out of the terminology and its index (the index rebuilt
   from the default's own vectors, nothing encoded again, with the default's nil calibration), then every name of
   each linked. Right: nil, or an ancestor of the held-out descriptor.
3. **Invented drug-like names**: stems and INN affixes of real drug names recombined (seed 0) into names that no
   descriptor or supplementary record has ("quextatinib"-like). Right: nil.
"""

from __future__ import annotations

import argparse
import gzip
import random
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from medlink.encoders import load_encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.index import build_index, ontology_entries
from medlink.index.build import update_manifest
from medlink.index.vector_index import read_index_manifest
from medlink.linking import Linker, LinkResult
from medlink.linking.defaults import default_drug_terminology_path, default_index
from medlink.linking.recipe import LinkerRecipe
from medlink.resources import supplementary_records_path
from medlink.terminology import Terminology, load_default_terminology, load_terminology
from medlink.terminology.store import save_terminology

# INN stems (WHO's "Use of stems in the selection of INNs"), longest first so "-zumab" wins over "-mab".
AFFIXES = ("ciclib", "gliptin", "glutide", "tinib", "zumab", "ximab", "parin", "prazole", "sartan", "statin",
           "tide", "mab", "olol", "pril", "vir", "cillin", "mycin", "oxacin", "dipine", "setron", "lukast")  # fmt: skip


def outcome(result: LinkResult, right: set[str]) -> str:
    if not result.concepts:
        return "nil"
    return "ancestor" if set(result.concepts) <= right else "look-alike"


def supplementary_names(linker: Linker, terms: Terminology, rng: random.Random, n: int) -> Counter:
    with gzip.open(supplementary_records_path(), "rt", encoding="utf-8") as lines:
        rows = [line.rstrip("\n").split("\t") for line in lines]
    sample = rng.sample([row for row in rows if len(row) >= 4], n)
    counts: Counter = Counter()
    for row, result in zip(sample, linker.link_many([row[1] for row in sample]), strict=True):
        mapped = {f"MESH:{descriptor.strip('*')}" for descriptor in row[3].split("|") if descriptor}
        right = set(mapped).union(*(terms.ancestors(m) for m in mapped if m in terms))
        counts[outcome(result, right)] += 1
    return counts


def held_out_descriptors(terms: Terminology, rng: random.Random, n: int, work: Path) -> Counter:
    held = set(rng.sample(terms.ids, n))
    reduced = Terminology.from_concepts([c for c in terms if c.id not in held], normalizer=terms.normalizer)
    save_terminology(reduced, work / "terms")
    base = default_index(progress=False)
    build_index(ontology_entries(reduced), load_encoder(DEFAULT_MODEL), work / "index", reduced.fingerprint(),
                reuse=[base], origin={"encoder": DEFAULT_MODEL, "backend": "onnx"})  # fmt: skip
    calibration = read_index_manifest(base)
    update_manifest(work / "index", nil_threshold=calibration.get("nil_threshold"),
                    term_model=calibration.get("term_model"))  # fmt: skip
    linker = Linker.from_recipe(LinkerRecipe(index_dir=work / "index", terminology_dir=work / "terms"))
    mentions, rights = [], []
    for concept_id in sorted(held):
        right = set(terms.ancestors(concept_id))
        for name in dict.fromkeys(name.text for name in terms.names_of(concept_id)):
            mentions.append(name)
            rights.append(right)
    return Counter(outcome(result, right) for result, right in zip(linker.link_many(mentions), rights, strict=True))


def invented_names(union: Terminology, rng: random.Random, n: int) -> list[str]:
    """Real drug names split into stem + INN affix, recombined where no concept has the result."""
    by_affix: dict[str, set[str]] = {affix: set() for affix in AFFIXES}
    for text in union.names["text"]:
        word = text.lower()
        if word.isalpha():
            affix = next((a for a in AFFIXES if word.endswith(a) and len(word) > len(a) + 2), None)
            if affix is not None:
                by_affix[affix].add(word[: -len(affix)])
    stems = sorted(set().union(*by_affix.values()))
    invented: set[str] = set()
    while len(invented) < n:
        name = rng.choice(stems) + rng.choice(AFFIXES)
        if not union.lookup(name):
            invented.add(name)
    return sorted(invented)


def table(title: str, counts: Counter) -> str:
    total = sum(counts.values())
    cells = " | ".join(f"{100 * counts[o] / total:.1f} % ({counts[o]:,})" for o in ("nil", "ancestor", "look-alike"))
    return f"| {title} (n={total:,}) | {cells} |"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    terms, default = load_default_terminology(), Linker.from_recipe(LinkerRecipe())
    union = load_terminology(default_drug_terminology_path())
    rows = [table("supplementary names, descriptors-only default", supplementary_names(
        default, terms, random.Random(args.seed), 1_000))]  # fmt: skip
    with tempfile.TemporaryDirectory() as work:
        rows.append(table("names of 500 held-out descriptors", held_out_descriptors(
            terms, random.Random(args.seed), 500, Path(work))))  # fmt: skip
    invented = invented_names(union, random.Random(args.seed), 1_000)
    drugs = Linker.from_recipe(LinkerRecipe(embedded="drugs"))
    for name, linker in (("descriptors-only default", default), ("drug default", drugs)):
        rows.append(table(f"invented drug-like names, {name}", Counter(
            outcome(result, set()) for result in linker.link_many(invented))))  # fmt: skip
    print("| set | nil | ancestor | look-alike |\n|---|---:|---:|---:|")
    print("\n".join(rows))
    print("\ninvented, e.g.:", ", ".join(invented[:: len(invented) // 8][:8]))


if __name__ == "__main__":
    main()
