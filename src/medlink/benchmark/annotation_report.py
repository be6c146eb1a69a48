"""The benchmark report's end-to-end annotation part: a JSON record per annotator and corpus, and a Markdown table
of document- and mention-level precision, recall and F1, with documents per second, start-up and peak memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlink.benchmark.annotation_runs import AnnotationCell
from medlink.evaluation.significance import paired_bootstrap_f1


def annotation_json(cells: Sequence[AnnotationCell]) -> list[dict[str, Any]]:
    return [
        {
            "dataset": cell.dataset,
            "system": cell.system,
            "documents": cell.documents,
            **(cell.result.to_dict() if cell.result is not None else {}),
            "seconds": cell.seconds,
            "startup_seconds": cell.startup_seconds,
            "peak_rss_mb": cell.peak_rss_mb,
            "build_seconds": cell.build_seconds,
            "unavailable": cell.unavailable,
            "version": cell.version,
        }
        for cell in cells
    ]


def annotation_comparisons(cells: Sequence[AnnotationCell]) -> list[dict[str, Any]]:
    """Each of medlink's rows against each peer's row of the same kind (names alone; or given the training
    mentions; its default, whose corpus lexicon public training documents taught, against both) on the same
    corpus: the difference in document-level F1 and its 95 % interval, from a paired bootstrap over documents
    (2,000 resamples)."""
    compared = []
    for a in cells:
        for b in cells:
            if not a.ours or b.ours or a.dataset != b.dataset or (a.trained != b.trained and not a.shipped):
                continue
            pair = {"dataset": a.dataset, "a": a.system, "b": b.system}
            if a.result is None or b.result is None:
                compared.append({**pair, "unavailable": True})
                continue
            result = paired_bootstrap_f1(a.per_document, b.per_document)
            compared.append({**pair, "difference": result.difference, "low": result.low, "high": result.high})
    return compared


def comparison_lines(comparisons: list[dict[str, Any]]) -> list[str]:
    if not comparisons:
        return []
    lines = [
        "Document-level F1, medlink's rows against each peer's row of the same kind (names alone; or with the "
        "training mentions; medlink's default, whose corpus lexicon public training documents taught, against both): "
        "difference and 95 % interval from a paired bootstrap over documents (2,000 resamples).",
        "",
        "| corpus | A | B | A − B (doc F1) | 95 % interval |",
        "|---|---|---|---:|---:|",
    ]
    behind = []
    for row in comparisons:
        if row.get("unavailable"):
            continue
        lines.append(
            f"| {row['dataset']} | {row['a']} | {row['b']} | {row['difference']:+.3f} | "
            f"[{row['low']:+.3f}, {row['high']:+.3f}] |"
        )
        if row["low"] <= 0:
            ahead = row["high"] < 0
            said = f"{row['b']} is ahead of {row['a']}" if ahead else f"{row['a']} is not ahead of {row['b']}"
            behind.append(f"- On {row['dataset']}, {said} (the interval {'is below' if ahead else 'holds'} 0).")
    return [*lines, "", *behind, *([""] if behind else [])]


def annotation_lines(rows: list[dict[str, Any]], comparisons: list[dict[str, Any]] | None = None) -> list[str]:
    if not rows:
        return []
    lines = [
        "## Annotating documents end to end",
        "",
        "Every system finds and links the mentions of whole documents, given the same terminology; scored by one "
        "scorer: document level (document, concept), as BioCreative V CDR scored diseases, and mention level (exact "
        "span and concept). Documents per second exclude start-up; start-up is loading the system (its own "
        "database or model built beforehand, once, in a process of its own); memory is the peak of the process "
        "that annotated.",
        "",
        "| corpus | system | doc P | doc R | doc F1 | mention P | mention R | mention F1 | documents/s | start-up | "
        "peak memory |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    best: dict[str, float] = {}
    for row in rows:
        if not row.get("unavailable"):
            best[row["dataset"]] = max(best.get(row["dataset"], 0.0), row["document"]["f1"])
    for row in rows:
        if row.get("unavailable"):
            lines.append(f"| {row['dataset']} | {row['system']} |" + " — |" * 9)
            continue
        d, m = row["document"], row["mention"]
        f1 = f"**{d['f1']:.3f}**" if d["f1"] == best[row["dataset"]] else f"{d['f1']:.3f}"
        speed = row["documents"] / max(row["seconds"], 1e-3)
        lines.append(
            f"| {row['dataset']} | {row['system']} | {d['precision']:.3f} | {d['recall']:.3f} | {f1} | "
            f"{m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | {speed:,.0f} | "
            f"{row['startup_seconds']:.1f} s | {row['peak_rss_mb']:,.0f} MB |"
        )
    lines.append("")
    built = [row for row in rows if row.get("build_seconds")]
    if built:
        lines += [
            "Built once before the run (what a user's first run adds): "
            + "; ".join(f"{row['system']} on {row['dataset']} {row['build_seconds']:,.0f} s" for row in built)
            + ".",
            "",
        ]
    missing = [row for row in rows if row.get("unavailable")]
    if missing:
        lines += [f"- **{row['system']}** on {row['dataset']}: {row['unavailable']}" for row in missing]
        lines.append("")
    return lines + comparison_lines(comparisons or [])
