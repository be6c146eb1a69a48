"""Benchmark: dense linking speed, memory and candidate recall (issue 3 targets). Prints a Markdown report.

    python benchmarks/dense_linking.py --index MESH_INDEX --recall-index MEDIC_INDEX [--shared ../shared]

MESH_INDEX: an index over MeSH descriptors + supplementary concepts (`medlink terminology compile` both TSVs, then
`medlink index build`); MEDIC_INDEX: an index over MEDIC with the NCBI-disease training mentions
(`medlink index build --terminology medic --train pubtator:NCBItrainset_corpus.txt`).

Targets: index encoding ≥ 650 names/s; 10k unique unseen mentions against ~400k+ names ≥ 600 mentions/s end to
end and ≥ 90 % of the encoder's own speed; a stream with 80 % exact matches or repeats ≥ 20,000 mentions/s; the
saved MeSH index loads in < 2 s with < 1.5 GB RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

_LOAD = """
import json, sys, time


def peak_mb():
    # VmHWM belongs to this address space; ru_maxrss would carry over the parent's peak through fork and exec
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


started = time.perf_counter()
from medlink.index import VectorIndex
index = VectorIndex.load(sys.argv[1])
loaded = time.perf_counter()
index_mb = peak_mb()
from medlink.linking import Linker
linker = Linker.load(sys.argv[1])
linker.link("heart attack")
ready = time.perf_counter()
print(json.dumps({"index_s": loaded - started, "linker_ready_s": ready - started,
                  "index_rss_mb": index_mb, "rss_mb": peak_mb()}))
"""


def timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def cold_link_seconds(linker, mentions: list[str]) -> float:
    """Seconds to link ``mentions`` with the linker's result cache and its sieves' vector cache emptied first."""
    linker.clear_cache()
    linker.sieves[1].encoder.clear()
    return timed(linker.link_many, mentions)[1]


def unseen_mentions(terminology, corpora: list[Path], count: int, seed: int = 0) -> list[str]:
    """Real corpus mentions that match no name exactly, topped up with misspelt names, all distinct."""
    from medlink.evaluation.corpus_formats import read_pubtator

    rng = random.Random(seed)
    texts = {m.text for path in corpora if path.exists() for m in read_pubtator(path)}
    chosen = sorted(t for t in texts if not terminology.has_normalized(terminology.normalizer(t)))
    rng.shuffle(chosen)
    chosen = chosen[:count]
    names = terminology.concepts["preferred_name"]
    seen = set(chosen)
    while len(chosen) < count:
        name = names[rng.randrange(len(names))]
        if len(name) < 8:
            continue
        cut = rng.randrange(1, len(name) - 1)
        typo = name[:cut] + name[cut + 1 :]
        if typo not in seen and not terminology.has_normalized(terminology.normalizer(typo)):
            seen.add(typo)
            chosen.append(typo)
    return chosen


def benchmark_mentions(terminology, shared: Path, count: int = 10_000) -> list[str]:
    """The unseen mentions every speed measurement links: NCBI-disease and BC5CDR mentions, then misspelt names."""
    corpora = shared / "data/corpora"
    return unseen_mentions(
        terminology,
        [
            corpora / "ncbi-disease/NCBItrainset_corpus.txt",
            corpora / "ncbi-disease/NCBIdevelopset_corpus.txt",
            corpora / "ncbi-disease/NCBItestset_corpus.txt",
            corpora / "bc5cdr/CDR_TrainingSet.PubTator.txt",
            corpora / "bc5cdr/CDR_DevelopmentSet.PubTator.txt",
        ],
        count,
    )


def realistic_stream(terminology, mentions: list[str], size: int = 100_000, seed: int = 2) -> list[str]:
    """A stream where 80 % of mentions are exact names (40 %) or repeats of earlier ones (40 %); the other 20 % cycle
    through ``mentions`` made new to the linker ("… (unspecified)"), so each must be encoded once."""
    rng = random.Random(seed)
    exact_names = rng.sample(terminology.concepts["preferred_name"], 20_000)
    fresh = [f"{m} (unspecified)" for m in mentions]
    stream: list[str] = []
    for i in range(size):
        roll = rng.random()
        if roll < 0.2:
            stream.append(fresh[i % len(fresh)])
        elif roll < 0.6:
            stream.append(exact_names[rng.randrange(len(exact_names))])
        else:
            stream.append(stream[rng.randrange(len(stream))] if stream else exact_names[0])
    return stream


def speed_section(index_dir: Path, shared: Path, lines: list[str], report: dict) -> None:
    from medlink.encoders import load_encoder
    from medlink.index import faiss_backend
    from medlink.linking import Linker

    linker = Linker.load(index_dir, sieves="exact,OD-T")
    terminology, index = linker.terminology, linker.sieves[1].index
    encoder = linker.sieves[1].encoder.encoder
    rng = random.Random(1)
    names = [e.text for e in rng.sample(index.entries["O"], 5000)]
    encoder.encode(names[:200])
    fp32_vectors, fp32_s = timed(encoder.encode, names)
    int8 = load_encoder(index.manifest.origin.encoder or "minilm", quantize="int8")
    int8.encode(names[:200])
    int8_vectors, int8_s = timed(int8.encode, names)
    cosine = (fp32_vectors * int8_vectors).sum(axis=1)
    nearest = {}
    for label, vectors in (("fp32", fp32_vectors), ("int8", int8_vectors)):
        similarity = vectors[:1000] @ vectors.T
        np.fill_diagonal(similarity[:, :1000], -np.inf)
        nearest[label] = similarity.argmax(axis=1)
    torch_encoder = load_encoder(index.manifest.origin.encoder or "minilm", backend="torch")
    torch_encoder.encode(names[:200])
    _, torch_s = timed(torch_encoder.encode, names[:2000])
    report["encode_names_per_s"] = {
        "onnx_fp32": len(names) / fp32_s,
        "onnx_int8": len(names) / int8_s,
        "torch_fp32": 2000 / torch_s,
    }
    report["int8_drift"] = {
        "cosine_mean": float(cosine.mean()),
        "cosine_min": float(cosine.min()),
        "nearest_name_agreement": float(np.mean(nearest["fp32"] == nearest["int8"])),
    }

    mentions = benchmark_mentions(terminology, shared)
    _, link_s = timed(linker.link_many, mentions)
    vectors, encode_s = timed(encoder.encode, mentions)
    hnsw = index.faiss["O"]
    (_hnsw_scores, hnsw_rows), hnsw_s = timed(faiss_backend.search, hnsw, vectors, 10)
    stored = hnsw.reconstruct_n(0, hnsw.ntotal)
    flat = faiss_backend.build_faiss(stored, "exact", faiss_backend.HnswParameters())
    (_flat_scores, flat_rows), flat_s = timed(faiss_backend.search, flat, vectors, 10)
    top1_agree = float(np.mean(hnsw_rows[:, 0] == flat_rows[:, 0]))
    recall10 = float(np.mean([flat_rows[i, 0] in hnsw_rows[i] for i in range(len(mentions))]))
    sweep = {}
    for ef_search in (16, 32, 64, 128, 256):
        hnsw.hnsw.efSearch = ef_search
        (_scores, rows), seconds = timed(faiss_backend.search, hnsw, vectors, 10)
        sweep[ef_search] = {
            "queries_per_s": len(mentions) / seconds,
            "top1_agreement": float(np.mean(rows[:, 0] == flat_rows[:, 0])),
        }
    hnsw.hnsw.efSearch = index.manifest.hnsw.ef_search
    report["ef_search"] = sweep
    report["unseen"] = {
        "mentions": len(mentions),
        "names": hnsw.ntotal,
        "index_kind": index.manifest.kinds["O"],
        "link_per_s": len(mentions) / link_s,
        "encoder_only_per_s": len(mentions) / encode_s,
        "share_of_encoder_speed": encode_s / link_s,
        "hnsw_search_per_s": len(mentions) / hnsw_s,
        "brute_force_search_per_s": len(mentions) / flat_s,
        "hnsw_speedup": flat_s / hnsw_s,
        "hnsw_top1_agreement": top1_agree,
        "hnsw_recall_of_exact_top1_at_10": recall10,
        "brute_force_link_per_s": len(mentions) / (encode_s + flat_s),
    }

    stream = realistic_stream(terminology, mentions)
    stream_linker = Linker.load(index_dir, sieves="exact,OD-T")
    _, stream_s = timed(stream_linker.link_many, stream)
    report["stream"] = {"mentions": len(stream), "distinct": len(set(stream)), "per_s": len(stream) / stream_s}

    loads = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _LOAD, str(index_dir)], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(3)
    ]
    report["load"] = {
        "index_s": sorted(r["index_s"] for r in loads)[1],
        "linker_ready_s": sorted(r["linker_ready_s"] for r in loads)[1],
        "index_rss_mb": max(r["index_rss_mb"] for r in loads),
        "rss_mb": max(r["rss_mb"] for r in loads),
    }

    u, s, ld = report["unseen"], report["stream"], report["load"]
    enc = report["encode_names_per_s"]
    lines += [
        f"## Speed and memory ({u['names']:,} names, {u['index_kind']} index)",
        "",
        "| measure | result | target |",
        "|---|---:|---:|",
        f"| encoding names, PyTorch fp32 | {enc['torch_fp32']:,.0f} names/s | |",
        f"| encoding names, ONNX fp32 | {enc['onnx_fp32']:,.0f} names/s | ≥ 650 |",
        f"| encoding names, ONNX int8 | {enc['onnx_int8']:,.0f} names/s | ≥ 650 |",
        f"| int8 vs fp32: cosine mean / min; same nearest name | {report['int8_drift']['cosine_mean']:.4f} / "
        f"{report['int8_drift']['cosine_min']:.4f}; {report['int8_drift']['nearest_name_agreement']:.1%} | |",
        f"| 10k unseen mentions, end to end (exact → OD-T) | {u['link_per_s']:,.0f} mentions/s | ≥ 600 |",
        f"| the encoder alone on the same mentions | {u['encoder_only_per_s']:,.0f} mentions/s | |",
        f"| end to end as a share of the encoder's speed | {u['share_of_encoder_speed']:.0%} | ≥ 90 % |",
        f"| search only: HNSW | {u['hnsw_search_per_s']:,.0f} queries/s | |",
        f"| search only: brute force over all names | {u['brute_force_search_per_s']:,.0f} queries/s | |",
        f"| HNSW speed-up over brute force | {u['hnsw_speedup']:.1f}× | |",
        f"| end to end with brute force instead | {u['brute_force_link_per_s']:,.0f} mentions/s | |",
        f"| HNSW top-1 = brute-force top-1 | {u['hnsw_top1_agreement']:.1%} | |",
        f"| brute-force top-1 within HNSW top-10 | {u['hnsw_recall_of_exact_top1_at_10']:.1%} | |",
        f"| stream, 80 % exact or repeated ({s['mentions']:,} mentions, {s['distinct']:,} distinct) "
        f"| {s['per_s']:,.0f} mentions/s | ≥ 20,000 |",
        f"| load the index (median of 3 fresh processes) | {ld['index_s']:.2f} s | < 2 s |",
        f"| peak RSS after loading the index | {ld['index_rss_mb']:,.0f} MB | < 1,500 MB |",
        f"| load index + terminology + encoder, first link | {ld['linker_ready_s']:.2f} s | |",
        f"| peak RSS of that whole linker | {ld['rss_mb']:,.0f} MB | |",
        "",
        "HNSW efSearch (M = 32, efConstruction = 200) against brute force, same 10k queries:",
        "",
        "| efSearch | queries/s | top-1 = brute-force top-1 |",
        "|---:|---:|---:|",
        *(f"| {ef} | {v['queries_per_s']:,.0f} | {v['top1_agreement']:.1%} |" for ef, v in report["ef_search"].items()),
        "",
    ]


def recall_section(index_dir: Path, shared: Path, lines: list[str], report: dict) -> None:
    from medlink.evaluation.corpus_formats import read_pubtator
    from medlink.evaluation.runner import resolve_gold
    from medlink.evaluation.scoring import recall_at_k
    from medlink.linking import Linker
    from medlink.linking.pipeline import parse_sieves

    corpus = read_pubtator(shared / "data/corpora/ncbi-disease/NCBIdevelopset_corpus.txt")
    linker = Linker.load(index_dir)
    terminology, index = linker.terminology, linker.sieves[1].index
    encoder = linker.sieves[1].encoder
    golds = [resolve_gold(m.gold, terminology) for m in corpus]
    texts = [m.text for m in corpus]
    exact = parse_sieves("exact", terminology, index, encoder)[0]
    stages = {
        "exact (names and training mentions)": [
            list(r.concepts) if r else [] for r in exact.link_batch([(t, terminology.normalizer(t)) for t in texts])
        ]
    }
    for spec, label in (
        ("O-T", "dense O-T (names)"),
        ("D-T", "dense D-T (training mentions)"),
        ("OD-T", "dense OD-T (both)"),
        ("OD-C", "dense OD-C (concept centroids)"),
        ("sparse", "sparse char n-gram TF-IDF"),
        ("hybrid=0.8", "hybrid OD-T + sparse (0.8)"),
    ):
        sieve = parse_sieves(spec, terminology, index, encoder, top_k=50)[0]
        if hasattr(sieve, "candidates"):
            found = sieve.candidates(texts)
        else:
            found = [list(r.candidates) if r else [] for r in sieve.link_batch([(t, "") for t in texts])]
        stages[label] = [[c.concept_id for c in candidates] for candidates in found]
    report["recall"] = {}
    lines += [
        f"## Candidate recall per stage, NCBI-disease dev ({len(corpus)} mentions; single-concept golds)",
        "",
        "| stage | recall@1 | recall@10 | recall@50 |",
        "|---|---:|---:|---:|",
    ]
    for label, rankings in stages.items():
        recall = recall_at_k(golds, rankings, (1, 10, 50))
        report["recall"][label] = recall
        lines.append(f"| {label} | {recall[1]:.3f} | {recall[10]:.3f} | {recall[50]:.3f} |")
    lines.append("")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, help="index over MeSH descriptors + supplementary concepts")
    parser.add_argument("--recall-index", type=Path, help="index over MEDIC with NCBI training mentions")
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()
    import platform

    lines = [
        f"Run {time.strftime('%Y-%m-%d')} on {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, 2 CPU cores.",
        "",
    ]
    report: dict = {}
    if args.index:
        speed_section(args.index, args.shared, lines, report)
    if args.recall_index:
        recall_section(args.recall_index, args.shared, lines, report)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
