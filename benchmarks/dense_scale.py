"""Benchmark: the dense linker over a UMLS-size release (issue 59). Prints one JSON record (and a Markdown row).

Builds the index with ``medlink index build`` (the distilled ``medlink-fast`` encoder, int8, the compressed kind,
as a user would: a killed or timed-out run is resumed by running this again, chunks and saved graph kept), then in
fresh processes measures what a data team meets: load time, ``medlink link`` on 2,000 unseen mentions (wall time
and peak RSS of the command itself), the linker's mentions/s once loaded, top-1 agreement of the index's search
with exact search over the vectors it stores (its 8-bit codes decoded, or for PQ codes the int8 rows it re-scores
from; every row scored), and the size on disk.

    python benchmarks/umls_scale.py --work DIR                    # writes and compiles DIR/compiled-4000000-12000000
    python benchmarks/dense_scale.py --compiled DIR/compiled-4000000-12000000 --index DIR/dense [--markdown]
    python benchmarks/dense_scale.py --compiled … --index DIR/dense --reference-only   # while the build runs

Agreement is also measured against exact search over the fp16 vectors the build encoded, which the finished index
no longer holds: ``--reference-only`` scores the build's encoded chunks present at the time (run it after encoding
and before the graph is done; each run adds the chunks not scored yet), and the report uses it when it covers all.

Targets at 12 M names (2 cores): peak RSS ≤ 4 GB, load ≤ 2 s, top-1 agreement ≥ 99 %, ≥ 100 mentions/s, ≤ 6 GB on
disk. The resident set counts the pages of the mapped index the searches touched (``RssFile``, shared page cache)
beside the process's own memory (``RssAnon``, reported as private). How fast it links when memory is short: run the
linker in a memory cgroup after evicting the index's pages (cgroup v1:
``mkdir /sys/fs/cgroup/memory/m4; echo 4G > /sys/fs/cgroup/memory/m4/memory.limit_in_bytes``, then the link command
from a shell that wrote its pid to ``m4/cgroup.procs``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from compressed_index import unseen_mentions
from umls_scale import child_peak

_LINK = """
import json, sys, time


def status_mb(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


started = time.perf_counter()
from medlink.linking import Linker
linker = Linker.load(sys.argv[1])
linker.link("heart attack")
loaded = time.perf_counter()
mentions = [line.rstrip("\\n") for line in open(sys.argv[2], encoding="utf-8")]
results = linker.link_many(mentions)
linked = time.perf_counter()
print(json.dumps({"load_s": loaded - started, "link_s": linked - loaded, "mentions": len(mentions),
                  "linked": sum(bool(r.concepts) for r in results), "rss_mb": status_mb("VmHWM"),
                  "private_mb": status_mb("RssAnon"), "mapped_file_mb": status_mb("RssFile")}))
"""

_AGREEMENT = """
import json, sys
import numpy as np
from medlink.index import VectorIndex

folder, source = sys.argv[1], "O"
queries = np.load(sys.argv[2])
index = VectorIndex.load(folder)
found = [hits[0].entry.key if hits else None for hits in index.search(queries, k=1)]
stored = index.faiss[source]  # the codes the index holds, decoded: 8-bit codes, or the int8 rows PQ is re-scored by
best = np.full(len(queries), -np.inf, dtype=np.float32)
rows = np.zeros(len(queries), dtype=np.int64)
step = 262_144
for start in range(0, stored.ntotal, step):  # exact search: every stored row scored, a block at a time
    block = stored.reconstruct_n(start, min(step, stored.ntotal - start))
    scores = queries @ block.T
    top = scores.argmax(axis=1)
    better = scores[np.arange(len(queries)), top] > best
    best[better], rows[better] = scores[np.arange(len(queries)), top][better], start + top[better]
exact = [entry.key for entry in index.entries[source].take(rows.tolist())]
print(json.dumps({"agree": sum(a == b for a, b in zip(found, exact)), "queries": len(queries), "found": found}))
"""


def score_chunks(workdir: Path, queries, into: Path) -> int:
    """The best row of each encoded chunk of the build in ``workdir`` for every query (exact search over the fp16
    vectors, a chunk at a time), kept in ``into``; returns how many chunks are scored so far."""
    import numpy as np

    chunk_size = json.loads((workdir / "plan.json").read_text())["chunk"]
    into.mkdir(exist_ok=True)
    for chunk in sorted((workdir / "chunks").glob("[0-9][0-9][0-9][0-9][0-9].npy")):
        if (into / chunk.name).exists():
            continue
        scores = queries @ np.load(chunk).astype(np.float32).T
        top = scores.argmax(axis=1)
        best = np.stack([int(chunk.stem) * chunk_size + top, scores[np.arange(len(queries)), top].view(np.int32)])
        np.save(into / chunk.name, best)  # row, and the score's bits (a float32 kept exactly in an int64 row)
    return len(list(into.glob("*.npy")))


def fp16_reference(into: Path, rows: int, chunk_size: int):
    """Each query's best row over all ``rows`` from the scored chunks, or ``None`` when some are not scored."""
    import numpy as np

    parts = sorted(into.glob("*.npy")) if into.exists() else []
    if len(parts) != -(-rows // chunk_size):
        return None
    stacked = np.stack([np.load(part) for part in parts])  # chunks × 2 × queries
    scores = stacked[:, 1, :].astype(np.int32).view(np.float32)
    return stacked[scores.argmax(axis=0), 0, np.arange(stacked.shape[2])]


def folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compiled", type=Path, required=True, help="a compiled terminology (umls_scale.py --work)")
    parser.add_argument("--index", type=Path, required=True, help="built here, or resumed, or taken when complete")
    parser.add_argument("--encoder", default="medlink-fast")
    parser.add_argument("--quantize", default="int8")
    parser.add_argument("--mentions", type=int, default=2000)
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--reference-only", action="store_true", help="score the encoded chunks present; no build")
    args = parser.parse_args()
    import numpy as np

    from medlink.encoders import load_encoder
    from medlink.index.build import DEFAULT_CHUNK, workdir_of
    from medlink.terminology import load_terminology

    terminology = load_terminology(args.compiled)
    work = args.index.with_name(args.index.name + "-bench")
    work.mkdir(exist_ok=True)
    if not (work / "queries.npy").exists():
        mentions = unseen_mentions(args.shared, terminology, args.mentions)
        (work / "mentions.txt").write_text("".join(f"{m}\n" for m in mentions), encoding="utf-8")
        np.save(work / "queries.npy", load_encoder(args.encoder, quantize=args.quantize).encode(mentions))
    queries = np.load(work / "queries.npy")
    if workdir_of(args.index).exists():
        scored = score_chunks(workdir_of(args.index), queries, work / "fp16-reference")
        print(f"fp16 reference: {scored:,} encoded chunks scored", file=sys.stderr)
    if args.reference_only:
        return 0
    build: dict[str, float] = {}
    if not (args.index / "manifest.json").exists():
        seconds, peak, _ = child_peak(
            [sys.executable, "-m", "medlink", "index", "build", "--terminology", str(args.compiled), "--encoder",
             args.encoder, "--quantize", args.quantize, "--kind", "compressed", "--output", str(args.index)]
        )  # fmt: skip
        build = {"build_s_this_run": round(seconds), "build_peak_mb": round(peak)}
    manifest = json.loads((args.index / "manifest.json").read_text())
    command_s, command_mb, _ = child_peak(
        [sys.executable, "-m", "medlink", "link", "--index", str(args.index), "--input", str(work / "mentions.txt"),
         "--output", str(work / "linked.jsonl"), "--no-progress"]
    )  # fmt: skip
    _, _, out = child_peak([sys.executable, "-c", _LINK, str(args.index), str(work / "mentions.txt")])
    linked = json.loads(out)
    _, _, out = child_peak([sys.executable, "-c", _AGREEMENT, str(args.index), str(work / "queries.npy")])
    agreement = json.loads(out)
    reference = fp16_reference(work / "fp16-reference", manifest["counts"]["O"], DEFAULT_CHUNK)
    if reference is not None:
        from medlink.index import VectorIndex

        exact = [entry.key for entry in VectorIndex.load(args.index).entries["O"].take(reference.tolist())]
        found = agreement["found"]
        agreement["fp16_agree"] = sum(a == b for a, b in zip(found, exact, strict=True)) / len(exact)
    record = {
        "names": manifest["counts"]["O"],
        "concepts": len(terminology),
        "encoder": f"{args.encoder} {args.quantize}",
        "kind": manifest["kinds"]["O"],
        "codes": manifest.get("compressed", {}).get("codes", "pq"),
        "mentions": len(queries),
        "load_s": round(linked["load_s"], 2),
        "mentions_per_s": round(linked["mentions"] / linked["link_s"]),
        "linker_rss_mb": round(linked["rss_mb"]),
        "linker_private_mb": round(linked["private_mb"]),  # its own memory; the rest is the mapped index's pages
        "linker_mapped_file_mb": round(linked["mapped_file_mb"]),
        "link_command_s": round(command_s, 1),
        "link_command_peak_mb": round(command_mb),
        "top1_agreement": round(agreement["agree"] / agreement["queries"], 4),
        "top1_agreement_fp16": round(agreement["fp16_agree"], 4) if "fp16_agree" in agreement else None,
        "index_mb_on_disk": round(folder_mb(args.index)),
        "encode_s": manifest.get("timing", {}).get("encode_seconds"),
        "index_total_s": manifest.get("timing", {}).get("total_seconds"),
        **build,
        "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d"),
    }
    if args.markdown:
        print("| names | load | mentions/s | `medlink link` peak RSS (private) | top-1 = exact | on disk |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(
            f"| {record['names']:,} | {record['load_s']} s | {record['mentions_per_s']} | "
            f"{record['link_command_peak_mb'] / 1024:.2f} GB ({record['linker_private_mb'] / 1024:.2f} GB) | "
            f"{record['top1_agreement']:.2%} | "
            f"{record['index_mb_on_disk'] / 1024:.2f} GB |"
        )
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
