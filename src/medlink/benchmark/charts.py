"""The benchmark report's plots: Acc@1 and mentions linked per second, per system per dataset, as grouped bars in
plain SVG (no plotting library). A system that could not run on a dataset has no bar there, only a dash."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

_COLOURS = ("#9e9e9e", "#c49a6c", "#6b8fc2", "#3b6fb6", "#1f4e99", "#0b2f66", "#7a5195", "#ef5675")


def to_svg(record: dict) -> str:
    """Acc@1 per system (bars) per dataset (groups), 0–100."""
    return _bar_chart(record, lambda r: 100 * r["acc@1"], "Acc@1 (%)", 100.0)


def mentions_per_second(row: dict) -> float:
    """A result row's mentions linked per second over all its folds (index building excluded)."""
    return row["n"] / max(sum(fold["seconds"] for fold in row["folds"]), 1e-3)


def speed_svg(record: dict) -> str:
    """Mentions linked per second (index building excluded) per system per dataset."""
    highest = max((mentions_per_second(r) for r in record["results"] if not r.get("unavailable")), default=1.0)
    step = 10 ** math.floor(math.log10(highest))
    return _bar_chart(record, mentions_per_second, "mentions linked per second", step * math.ceil(highest / step))


def _bar_chart(record: dict, value_of: Callable[[dict], float], axis: str, top_value: float) -> str:
    """Grouped bars: one group per dataset, one bar per system (plain SVG)."""
    results = record["results"]
    datasets = list(dict.fromkeys(r["dataset"] for r in results))
    systems = list(dict.fromkeys(r["system"] for r in results))
    cell = {(r["dataset"], r["system"]): None if r.get("unavailable") else value_of(r) for r in results}
    bar, gap, left, top, height = 14, 22, 60, 20, 240
    group = bar * len(systems) + gap
    width = left + group * len(datasets) + 20
    legend_top = top + height + 50
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{legend_top + 18 * len(systems)}" '
        'font-family="sans-serif" font-size="11">'
    ]
    for tick in range(6):
        y = top + height * (1 - tick / 5)
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y}" y2="{y}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{top_value * tick / 5:g}</text>'
        )
    for d, dataset in enumerate(datasets):
        x0 = left + d * group + gap / 2
        for s, system in enumerate(systems):
            value = cell[(dataset, system)]
            if value is None:  # could not run: no bar, and a dash where it would stand
                parts.append(
                    f'<text x="{x0 + s * bar + 2}" y="{top + height - 4}"><title>{escape(system)}: '
                    "could not run</title>—</text>"
                )
                continue
            y = top + height * (1 - min(value, top_value) / top_value)
            colour = _COLOURS[s % len(_COLOURS)]
            parts.append(
                f'<rect x="{x0 + s * bar}" y="{y:.1f}" width="{bar - 2}" height="{top + height - y:.1f}" '
                f'fill="{colour}"><title>{escape(system)}: {value:,.1f}</title></rect>'
            )
        parts.append(
            f'<text x="{x0 + bar * len(systems) / 2}" y="{top + height + 16}" text-anchor="middle">'
            f"{escape(dataset)}</text>"
        )
    for s, system in enumerate(systems):
        y = legend_top + 18 * s
        parts.append(
            f'<rect x="{left}" y="{y - 10}" width="12" height="12" fill="{_COLOURS[s % len(_COLOURS)]}"/>'
            f'<text x="{left + 18}" y="{y}">{escape(system)}</text>'
        )
    parts.append(
        f'<text x="12" y="{top + height / 2}" transform="rotate(-90 12 {top + height / 2})" '
        f'text-anchor="middle">{escape(axis)}</text></svg>'
    )
    return "\n".join(parts) + "\n"
