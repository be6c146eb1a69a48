"""Benchmark: the compressed index kind against exact search over the same vectors (issue 37).

Builds an exact index over a compiled terminology (or takes one you built), then a compressed index from the same
vectors (``--reuse``: nothing is encoded twice), and searches both with real mentions from the shared corpora that
are not names of the terminology (unseen mentions). Reports top-1 agreement with exact search, search speed,
end-to-end mentions/s (encoding included), the size on disk, and the resident memory of a fresh process that loads
the compressed index and searches it.

    python benchmarks/compressed_index.py --terminology MESH_DIR --work DIR [--encoder medlink --quantize int8]

Targets at 12 M names (2 cores): top-1 identical to exact search for ≥ 99 % of mentions, ≥ 300 unseen mentions/s,
≤ 4 GB RSS, ≤ 6 GB on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

_SEARCH = """
import json, sys, time
import numpy as np


def status_mb(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


from medlink.index import VectorIndex
queries = np.load(sys.argv[2])
started = time.perf_counter()
index = VectorIndex.load(sys.argv[1])
index.search(queries[:1], k=1)
loaded = time.perf_counter()
hits = index.search(queries, k=1)
searched = time.perf_counter()
print(json.dumps({"load_s": loaded - started, "search_s": searched - loaded, "queries": len(queries),
                  "top1": [h[0].entry.key if h else None for h in hits],
                  "rss_mb": status_mb("VmHWM"), "private_mb": status_mb("RssAnon"), "file_mb": status_mb("RssFile")}))
"""


def unseen_mentions(shared: Path, terminology, limit: int) -> list[str]:
    """Distinct corpus mentions whose normalized text is no name of the terminology, in corpus order."""
    from medlink.evaluation.corpus_formats import read_pubtator

    corpora = shared / "data/corpora"
    paths = [
        corpora / "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
        corpora / "ncbi-disease/NCBIdevelopset_corpus.txt",
        corpora / "bc5cdr/CDR_TrainingSet.PubTator.txt",
        corpora / "ncbi-disease/NCBItrainset_corpus.txt",
    ]
    seen: dict[str, str] = {}
    for path in paths:
        if not path.exists():
            continue
        for mention in read_pubtator(path).mentions:
            key = terminology.normalizer(mention.text)
            if key and key not in seen and not terminology.has_normalized(key):
                seen[key] = mention.text
    return list(seen.values())[:limit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--terminology", type=Path, required=True, help="a compiled terminology folder")
    parser.add_argument("--work", type=Path, required=True, help="indexes are built (or found) here")
    parser.add_argument("--encoder", default="medlink")
    parser.add_argument("--quantize", default="int8")
    parser.add_argument("--mentions", type=int, default=2000)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    args = parser.parse_args()
    import numpy as np

    from medlink.encoders import load_encoder
    from medlink.index import build_index, ontology_entries
    from medlink.terminology import load_terminology

    terminology = load_terminology(args.terminology)
    encoder = load_encoder(args.encoder, quantize=args.quantize)
    exact, compressed = args.work / "exact", args.work / "compressed"
    timings = {}
    entries = None
    for folder, kind, reuse in ((exact, "exact", ()), (compressed, "compressed", (exact,))):
        if not (folder / "manifest.json").exists():
            entries = entries or ontology_entries(terminology)
            started = time.perf_counter()
            build_index(entries, encoder, folder, terminology.fingerprint(), kind=kind, reuse=reuse, progress=True)
            timings[kind] = round(time.perf_counter() - started, 1)
    mentions = unseen_mentions(args.shared, terminology, args.mentions)
    started = time.perf_counter()
    queries = encoder.encode(mentions)
    encode_s = time.perf_counter() - started
    np.save(args.work / "queries.npy", queries)
    runs = {}
    for name, folder in (("exact", exact), ("compressed", compressed)):
        out = subprocess.run(
            [sys.executable, "-c", _SEARCH, str(folder), str(args.work / "queries.npy")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs[name] = json.loads(out)
    agree = sum(a == b for a, b in zip(runs["exact"]["top1"], runs["compressed"]["top1"], strict=True))
    size = {
        name: sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        for name, folder in (("exact", exact), ("compressed", compressed))
    }
    search_s = runs["compressed"]["search_s"]
    record = {
        "names": terminology.name_count,
        "mentions": len(mentions),
        "top1_agreement": round(agree / len(mentions), 4),
        "compressed_search_per_s": round(len(mentions) / search_s),
        "exact_search_per_s": round(len(mentions) / runs["exact"]["search_s"]),
        "end_to_end_per_s": round(len(mentions) / (encode_s + search_s)),
        "encode_per_s": round(len(mentions) / encode_s),
        "compressed_mb_on_disk": round(size["compressed"]),
        "exact_mb_on_disk": round(size["exact"]),
        "compressed_rss_mb": round(runs["compressed"]["rss_mb"]),
        "compressed_private_mb": round(runs["compressed"]["private_mb"]),
        "exact_rss_mb": round(runs["exact"]["rss_mb"]),
        "build_s": timings,
        "encoder": f"{args.encoder} {args.quantize}",
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
