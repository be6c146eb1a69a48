"""Calibrate the embedded default's form test (linking/mentions/form.py) and write it to
src/medlink/resources/default-form.json.

    python scripts/calibrate_default_form.py          # ~6 min on 2 cores; needs ../shared/data

Every retrieval decision the default makes (form test off, nil threshold on) is a labelled example:
- kept (1): a correct decision on BC5CDR train (Disease, Chemical) and NCBI-disease train, gold in MeSH; and a
  simulated unknown answered by a true ancestor;
- dropped (0): a simulated unknown answered by a look-alike, an invented drug-like name — the calibration half of
  each kind (medlink.evaluation.unknowns), so that benchmarks/unknown_terms.py measures on names this never saw.
Wrong decisions on the corpora are left out of the fit: they are known concepts missed, not unknown ones, and
fitting on them caught fewer look-alikes (34 % against 61 % of the calibration half, same budget).
A logistic regression over the form features is fitted; its cut is the highest that makes nil no more than
``--budget`` of the corpora's distinct mentions that the default links right (issue 44 allows 0.3 points of Acc@1;
the script prints what other budgets would catch).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from medlink.encoders import load_encoder
from medlink.encoders.registry import DEFAULT_MODEL
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.runner import linker_mentions, resolve_gold
from medlink.evaluation.unknowns import (
    ANCESTOR,
    CALIBRATION,
    UnknownSet,
    held_out_ids,
    held_out_linker,
    held_out_names,
    invented_names,
    supplementary_names,
)
from medlink.linking import Linker, LinkerConfig, LinkResult
from medlink.linking.defaults import default_drug_terminology_path, default_index
from medlink.linking.mentions.form import FEATURES, FormJudge, FormModel
from medlink.linking.recipe import DESCRIPTORS, LinkerRecipe
from medlink.linking.settings import RETRIEVAL
from medlink.resources import DEFAULT_FORM, resource_path, supplementary_records_path
from medlink.terminology import load_default_terminology, load_terminology

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpora"
CORPORA = (("pubtator:bc5cdr/CDR_TrainingSet.PubTator.txt", "Disease"),
           ("pubtator:bc5cdr/CDR_TrainingSet.PubTator.txt", "Chemical"),
           ("pubtator:ncbi-disease/NCBItrainset_corpus.txt", None))  # fmt: skip
OFF = LinkerConfig(form_test=False)
PLACEHOLDER = FormModel(tuple(0.0 for _ in FEATURES), 0.0, 0.0)


def retrieved(result: LinkResult) -> bool:
    return result.stage in RETRIEVAL and bool(result.concepts) and result.score is not None and not result.several


def readings(judge: FormJudge, results: Sequence[LinkResult]) -> list[tuple[float, ...]]:
    return [judge.read(r).features for r in results]


def corpus_examples(linker: Linker, judge: FormJudge, texts: list[str]) -> tuple[list, list, int]:
    """Each distinct (mention, gold) once: one abstract repeating a mention 18 times would otherwise set the cut."""
    features, labels, seen = [], [], set()
    for spec, entity_type in CORPORA:
        kind, _, path = spec.partition(":")
        corpus = load_corpus(f"{kind}:{SHARED / path}", entity_type)
        for mention, result in zip(corpus, linker.link_many(linker_mentions(corpus)), strict=True):
            gold = resolve_gold(mention.gold, linker.terminology)
            if len(gold.parts) != 1 or not any(g in linker.terminology for g in gold.parts[0]):
                continue  # composite or outside MeSH (OMIM): not a judgement of form
            key = (result.mention.casefold(), gold.parts[0])
            if key in seen:
                continue
            seen.add(key)
            if retrieved(result):
                features.append(judge.read(result).features)
                labels.append(int(result.concepts[0] in gold.parts[0]))
                texts.append(f"{result.mention} -> {result.matched_name}")
    return features, labels, len(seen)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=0.003)
    parser.add_argument("--output", type=Path, default=resource_path(DEFAULT_FORM))
    parser.add_argument("--examples", type=Path, help="also save the labelled features here (.npz), to study them")
    args = parser.parse_args(argv)
    descriptors = load_default_terminology()
    union = Linker.from_recipe(LinkerRecipe(), OFF)
    only_descriptors = Linker.from_recipe(LinkerRecipe(embedded=DESCRIPTORS), OFF)
    union_judge = FormJudge(PLACEHOLDER, union.terminology)
    texts: list[str] = []
    features, labels, corpus_mentions = corpus_examples(union, union_judge, texts)
    kept_in_corpora = sum(labels)
    sources = {"corpora": len(labels)}

    def add(linker: Linker, unknowns: UnknownSet, name: str) -> None:
        judge = FormJudge(PLACEHOLDER, linker.terminology)
        results = linker.link_many(list(unknowns.mentions))
        chosen = [(r, o) for r, o in zip(results, unknowns.outcomes(results), strict=True) if retrieved(r)]
        features.extend(readings(judge, [r for r, _ in chosen]))
        labels.extend(int(o == ANCESTOR) for _, o in chosen)
        texts.extend(f"{r.mention} -> {r.matched_name}" for r, _ in chosen)
        sources[name] = len(chosen)

    add(only_descriptors, supplementary_names(supplementary_records_path(), descriptors, CALIBRATION, 1_000),
        "supplementary names")  # fmt: skip
    held = held_out_ids(descriptors, CALIBRATION, 500)
    with tempfile.TemporaryDirectory() as work:
        add(held_out_linker(descriptors, held, default_index(), Path(work), OFF), held_out_names(descriptors, held),
            "held-out descriptors")  # fmt: skip
    add(union, invented_names(load_terminology(default_drug_terminology_path()), CALIBRATION, 1_000),
        "invented names")  # fmt: skip

    x, y = np.asarray(features, dtype=np.float64), np.asarray(labels)
    if args.examples:
        np.savez(args.examples, x=x, y=y, texts=np.asarray(texts), counts=np.asarray(list(sources.values())))
    in_corpora = np.arange(len(y)) < sources["corpora"]
    fit = ~(in_corpora & (y == 0))
    model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=1000).fit(x[fit], y[fit])
    decisions = x @ model.coef_[0] + model.intercept_[0]
    kept = np.sort(decisions[in_corpora & (y == 1)])
    allowed = int(args.budget * corpus_mentions)  # correct corpus decisions the cut may make nil
    cut = float(kept[allowed] - 1e-6) if allowed < len(kept) else float(kept[-1])
    caught = float(np.mean(decisions[~in_corpora & (y == 0)] < cut))
    print(f"{len(y):,} decisions {sources}; corpora: {corpus_mentions:,} distinct mentions, {kept_in_corpora:,} right "
          f"retrievals, {allowed} may turn nil; cut {cut:.3f} catches {100 * caught:.1f} % of the calibration "
          f"look-alikes")  # fmt: skip
    origin = np.concatenate([np.full(count, name) for name, count in sources.items()])
    for name in sources:
        wrong = (origin == name) & (y == 0)
        print(f"  {name}: {100 * np.mean(decisions[wrong] < cut):.1f} % of {wrong.sum():,} look-alikes caught")
    for budget in (0.001, 0.002, 0.005, 0.01, 0.02):  # the trade-off, to choose the budget by
        at = int(budget * corpus_mentions)
        other = float(kept[at] - 1e-6) if at < len(kept) else float(kept[-1])
        rates = ", ".join(f"{name} {100 * np.mean(decisions[(origin == name) & (y == 0)] < other):.0f} %"
                          for name in sources)  # fmt: skip
        print(f"  budget {budget:.3f} ({at} right mentions nil): look-alikes caught: {rates}")
    for name, weight in zip(FEATURES, model.coef_[0], strict=True):  # on the features' own scales
        print(f"  {name:12s} {weight:+.3f}")
    fitted = FormModel(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]), round(cut, 4))
    record = {"model": fitted.to_dict(), "encoder_fingerprint": load_encoder(DEFAULT_MODEL).identity.fingerprint(),
              "budget": args.budget, "examples": sources, "corpus_mentions": corpus_mentions,
              "calibration_look_alikes_caught": round(caught, 4),
              "command": "python scripts/calibrate_default_form.py"}  # fmt: skip
    args.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
