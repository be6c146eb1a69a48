"""Fitting the form test (``linking/mentions/form.py``) of an index: a logistic model over the form of retrieval
decisions, told apart by labelled examples —

- kept: the right retrieval decisions on an annotated corpus (each distinct mention once: an abstract repeating one
  mention 18 times would otherwise set the cut), and simulated unknowns answered by a true ancestor;
- dropped: simulated unknowns answered by a look-alike (``evaluation/unknowns.py``: names of concepts held out of
  the terminology and its index, invented drug-like names).

Wrong decisions on the corpus are left out of the fit: they are known concepts missed, not unknown ones (fitting on
them caught fewer look-alikes). The cut is the highest that turns nil at most ``budget`` of the corpus's distinct
mentions the linker links right. ``medlink calibrate`` fits one for any index; ``scripts/calibrate_default_form.py``
for the embedded default.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from medlink.evaluation.corpus import Corpus
from medlink.evaluation.runner import linker_mentions, resolve_gold
from medlink.evaluation.unknowns import (
    ANCESTOR,
    CALIBRATION,
    UnknownSet,
    held_out_ids,
    held_out_linker,
    held_out_names,
    invented_names,
)
from medlink.linking import Linker, LinkerConfig, LinkResult
from medlink.linking.mentions.form import FEATURES, FormJudge, FormModel, judged

CORPUS = "corpus"
BUDGETS = (0.001, 0.002, 0.005, 0.01, 0.02)  # the trade-off reported beside the chosen budget
_PLACEHOLDER = FormModel(tuple(0.0 for _ in FEATURES), 0.0, 0.0)
_INVENTED_FROM = 50  # stems of drug names a terminology needs before invented names are made from them


@dataclass
class FormExamples:
    """Labelled form readings (1: keep the decision, 0: a look-alike), by the kind of example each is."""

    features: list[tuple[float, ...]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    seen: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)  # distinct corpus mentions, across corpora

    @property
    def corpus_mentions(self) -> int:
        return len(self.seen)

    def add(self, kind: str, judge: FormJudge, results: Sequence[LinkResult], labels: Sequence[int]) -> None:
        for result, label in zip(results, labels, strict=True):
            self.features.append(judge.read(result).features)
            self.labels.append(label)
            self.kinds.append(kind)
            self.texts.append(f"{result.mention} -> {result.matched_name}")

    def add_corpus(self, linker: Linker, corpus: Corpus) -> None:
        """The retrieval decisions of ``linker`` on ``corpus``, each distinct (mention, gold) once, labelled right
        or wrong; mentions whose gold is composite or outside the terminology say nothing of form."""
        judge, seen = FormJudge(_PLACEHOLDER, linker.terminology), self.seen
        chosen, labels = [], []
        for mention, result in zip(corpus, linker.link_many(linker_mentions(corpus)), strict=True):
            gold = resolve_gold(mention.gold, linker.terminology)
            if len(gold.parts) != 1 or not any(g in linker.terminology for g in gold.parts[0]):
                continue
            key = (result.mention.casefold(), gold.parts[0])
            if key in seen:
                continue
            seen.add(key)
            if judged(result):
                chosen.append(result)
                labels.append(int(result.concepts[0] in gold.parts[0]))
        self.add(CORPUS, judge, chosen, labels)

    def add_unknowns(self, kind: str, linker: Linker, unknowns: UnknownSet) -> None:
        results = linker.link_many(list(unknowns.mentions))
        chosen = [(r, o) for r, o in zip(results, unknowns.outcomes(results), strict=True) if judged(r)]
        judge = FormJudge(_PLACEHOLDER, linker.terminology)
        self.add(kind, judge, [r for r, _ in chosen], [int(o == ANCESTOR) for _, o in chosen])


@dataclass(frozen=True)
class FormFit:
    """The fitted model, and what it catches: per kind, the share of its look-alikes below the cut, at the chosen
    budget and at each of :data:`BUDGETS`."""

    model: FormModel
    budget: float
    right_retrievals: int
    may_turn_nil: int
    caught: dict[str, float]
    trade_off: dict[float, dict[str, float]]
    examples: dict[str, int]

    def lines(self) -> list[str]:
        caught = ", ".join(f"{kind} {100 * share:.1f} %" for kind, share in self.caught.items())
        out = [
            f"form test: {sum(self.examples.values()):,} decisions ({self.examples}); {self.right_retrievals:,} "
            f"right corpus retrievals, {self.may_turn_nil} may turn nil (budget {self.budget:.3f}); look-alikes "
            f"caught: {caught}"
        ]
        for budget, rates in self.trade_off.items():
            shown = ", ".join(f"{kind} {100 * share:.0f} %" for kind, share in rates.items())
            out.append(f"  budget {budget:.3f}: look-alikes caught: {shown}")
        return out


def fit_form_model(examples: FormExamples, budget: float) -> FormFit:
    from sklearn.linear_model import LogisticRegression

    x, y = np.asarray(examples.features, dtype=np.float64), np.asarray(examples.labels)
    kinds = np.asarray(examples.kinds)
    in_corpus = kinds == CORPUS
    if not (y[in_corpus] == 1).any() or not (y[~in_corpus] == 0).any():
        raise ValueError("the form test needs right corpus decisions and look-alikes to tell apart")
    fit = ~(in_corpus & (y == 0))
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit(x[fit], y[fit])
    decisions = x @ model.coef_[0] + model.intercept_[0]
    kept = np.sort(decisions[in_corpus & (y == 1)])

    def cut_at(share: float) -> tuple[float, int]:
        allowed = int(share * examples.corpus_mentions)
        return (float(kept[allowed] - 1e-6) if allowed < len(kept) else float(kept[-1])), allowed

    def caught(cut: float) -> dict[str, float]:
        return {
            str(kind): float(np.mean(decisions[(kinds == kind) & (y == 0)] < cut))
            for kind in dict.fromkeys(examples.kinds)
            if ((kinds == kind) & (y == 0)).any()
        }

    cut, allowed = cut_at(budget)
    fitted = FormModel(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]), round(cut, 4))
    counts = {str(kind): int((kinds == kind).sum()) for kind in dict.fromkeys(examples.kinds)}
    return FormFit(
        fitted, budget, len(kept), allowed, caught(cut), {share: caught(cut_at(share)[0]) for share in BUDGETS}, counts
    )


def calibrate_form(
    index_dir: Path,
    corpus: Corpus,
    budget: float,
    held_out: int = 500,
    invented: int = 1_000,
    sieves: str | None = None,
) -> FormFit:
    """The form test of the index at ``index_dir``: its right decisions on ``corpus`` against the look-alikes it gives
    for the names of ``held_out`` of its concepts (taken out of its terminology and index) and for invented drug-like
    names (when its names hold enough drug-name stems)."""
    from medlink.linking.linker import Linker

    off = LinkerConfig(form_test=False)
    linker = Linker.load(index_dir, sieves=sieves, config=off)
    examples = FormExamples()
    examples.add_corpus(linker, corpus)
    terminology = linker.terminology
    held = held_out_ids(terminology, CALIBRATION, min(held_out, len(terminology) // 10))
    if held:
        with tempfile.TemporaryDirectory() as work:
            reduced = held_out_linker(terminology, held, Path(index_dir), Path(work), off)
            examples.add_unknowns("held-out concepts", reduced, held_out_names(terminology, held))
    try:
        names = invented_names(terminology, CALIBRATION, invented, minimum_stems=_INVENTED_FROM)
    except ValueError:
        names = None  # too few drug names to invent from: a disease vocabulary
    if names is not None:
        examples.add_unknowns("invented names", linker, names)
    return fit_form_model(examples, budget)
