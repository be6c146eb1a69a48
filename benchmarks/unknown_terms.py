"""What the default linker answers for terms whose concept it lacks (issue 44): nil, a true ancestor, or a
look-alike that silently corrupts a drug list — with the form test off (before issue 44) and on.

    python benchmarks/unknown_terms.py            # ~5 min on 2 cores; prints the table as Markdown

Measured on the half of each kind that the form test was not calibrated on (medlink.evaluation.unknowns;
scripts/calibrate_default_form.py uses the other half):
1. **Supplementary names**: 1,000 MeSH supplementary records, their preferred names linked with the records left
   out (the descriptors-only default). Right: nil, or one of the record's mapped descriptors or their ancestors.
2. **Held-out descriptors**: 500 descriptors taken out of the terminology and its index (the index rebuilt from the
   default's own vectors, nothing encoded again, with the default's nil calibration and form test), then every name
   of each linked. Right: nil, or an ancestor of the held-out descriptor.
3. **Invented drug-like names**: stems and INN affixes of real drug names recombined into names that no
   descriptor or supplementary record has ("quextatinib"-like), linked with the default (all of MeSH). Right: nil.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from medlink.evaluation.unknowns import (
    ANCESTOR,
    LOOK_ALIKE,
    MEASUREMENT,
    NIL,
    UnknownSet,
    held_out_ids,
    held_out_linker,
    held_out_names,
    invented_names,
    supplementary_names,
)
from medlink.linking import Linker, LinkerConfig
from medlink.linking.defaults import descriptors_index
from medlink.linking.spec import DESCRIPTORS
from medlink.resources import supplementary_records_path
from medlink.terminology import load_default_terminology

SETTINGS = (("form test off", LinkerConfig(form_test=False)), ("form test on", LinkerConfig()))


def row(title: str, unknowns: UnknownSet, linker: Linker) -> str:
    counts = Counter(unknowns.outcomes(linker.link_many(list(unknowns.mentions))))
    total = sum(counts.values())
    cells = " | ".join(f"{100 * counts[o] / total:.1f} % ({counts[o]:,})" for o in (NIL, ANCESTOR, LOOK_ALIKE))
    return f"| {title} (n={total:,}) | {cells} |"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    descriptors = load_default_terminology()
    supplementary = supplementary_names(supplementary_records_path(), descriptors, MEASUREMENT, 1_000, args.seed)
    held = held_out_ids(descriptors, MEASUREMENT, 500, args.seed)
    held_names = held_out_names(descriptors, held)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, config in SETTINGS:
            default = Linker.load(config=config)
            invented = invented_names(default.terminology, MEASUREMENT, 1_000, args.seed)
            rows.append(
                row(
                    f"supplementary records' names, records left out, {name}",
                    supplementary,
                    Linker.load(embedded=DESCRIPTORS, config=config),
                )
            )
            reduced = held_out_linker(descriptors, held, descriptors_index(), Path(work) / name, config)
            rows.append(row(f"every name of 500 held-out descriptors, {name}", held_names, reduced))
            rows.append(row(f"invented drug-like names, default, {name}", invented, default))
    print("| set | nil | ancestor | look-alike |\n|---|---:|---:|---:|")
    print("\n".join(rows))
    print("\ninvented, e.g.:", ", ".join(invented.mentions[:: len(invented.mentions) // 8][:8]))


if __name__ == "__main__":
    main()
