"""Record the checksums of every model folder medlink packages (``checksums.json``, what ``medlink models verify``
checks). Run after changing a model's files by hand (a model card, a tokenizer); scripts/package_default_model.py
records them itself.

    python scripts/record_model_checksums.py            # every own model that is installed (core and packages/)
    python scripts/record_model_checksums.py medlink-zh
"""

from __future__ import annotations

import argparse

from medlink.models.catalog import OWN, PLUGIN, model_entries, model_entry, model_location
from medlink.models.checksums import record_checksums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="models to record (default: medlink's own, where installed)")
    args = parser.parse_args()
    entries = [model_entry(name) for name in args.names] or [
        entry for entry in model_entries() if entry.kind in (OWN, PLUGIN) and entry.distribution.startswith("medlink")
    ]
    for entry in entries:
        folder = model_location(entry)
        if folder is None:
            print(f"{entry.name}: not installed, skipped")
            continue
        print(f"{entry.name}: {record_checksums(folder)}")


if __name__ == "__main__":
    main()
