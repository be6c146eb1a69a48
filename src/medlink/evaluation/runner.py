"""Run a linker over a corpus and score it: what ``medlink eval`` does.

Gold ids are first resolved through the terminology (an ``OMIM:`` gold id that MEDIC lists as an alternative id of
``MESH:C537806`` becomes that id), so a system is not penalized for answering with the concept's own id. Ids the
terminology does not know are kept as they are and can never be matched; with a crosswalk between releases
(:mod:`medlink.evaluation.crosswalk`) the same predictions are also scored with the moved ids, reported apart.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus, Gold
from medlink.evaluation.crosswalk import Crosswalk
from medlink.evaluation.scoring import Mode, Prediction, Scores, rank_of_gold, score
from medlink.evaluation.setups import select_subset
from medlink.linking import Linker, LinkResult, Mention
from medlink.terminology import Terminology


def prediction_of(result: LinkResult) -> Prediction:
    """A linker result as the scorer sees it: the best concept is the claim (all of them for a multi-concept or
    composite result), every candidate is ranked."""
    ranked = tuple(dict.fromkeys([*result.concepts, *(c.concept_id for c in result.candidates)]))
    claimed = result.concepts if result.several else result.concepts[:1]
    return Prediction(
        concepts=claimed,
        ranked=ranked,
        parts=tuple(prediction_of(p) for p in result.parts),
        stage=result.stage.value,
        matched_name=result.matched_name or "",
    )


def resolve_gold(gold: Gold, terminology: Terminology) -> Gold:
    return Gold.of([[terminology.resolve(i) or i for i in part] for part in gold.parts])


@dataclass(frozen=True)
class Evaluation:
    corpus: str
    setup: dict[str, object]
    scores: Scores
    golds: tuple[Gold, ...]
    predictions: tuple[Prediction, ...]
    mentions: tuple[str, ...]
    across_releases: Scores | None = None  # scored with a crosswalk's moved ids, when it moved any

    def as_dict(self) -> dict[str, object]:
        across = {"across_releases": self.across_releases.as_dict()} if self.across_releases else {}
        return {"corpus": self.corpus, "setup": self.setup, **self.scores.as_dict(), **across}


def evaluate(
    linker: Linker,
    corpus: Corpus,
    ks: Sequence[int] = (1, 5),
    mode: Mode = "strict",
    train: Corpus | None = None,
    subset: str = "all",
    crosswalk: Crosswalk | None = None,
) -> Evaluation:
    """Link every mention of ``corpus`` (or of its ``subset``: refined, zero-shot, stratified against ``train``);
    scored strictly by id, and also across releases where ``crosswalk`` moves an id of the corpus."""
    corpus = select_subset(corpus, train, subset, linker.terminology.normalizer)
    if not len(corpus.mentions):
        left = f"the {subset} subset of {corpus.name}" if subset != "all" else corpus.name
        raise MedlinkError(
            f"no mention to evaluate in {left}: nothing would be scored (check the corpus, its "
            f"entity type and the subset)"
        )
    predictions = tuple(prediction_of(result) for result in linker.link_many(linker_mentions(corpus)))
    golds = tuple(resolve_gold(m.gold, linker.terminology) for m in corpus)
    setup: dict[str, object] = {
        "mode": mode,
        "subset": subset,
        "train": train.name if train else None,
        "notes": list(corpus.notes),
    }
    across = None
    moved = crosswalk.moved_in(corpus) if crosswalk is not None else 0
    if crosswalk is not None and moved:
        setup["crosswalk"] = {"name": crosswalk.name, "mentions_moved": moved}
        across = score_across_releases(corpus, predictions, linker.terminology, crosswalk, ks, mode)
    return Evaluation(
        corpus.name,
        setup,
        score(golds, predictions, ks, mode),
        golds,
        predictions,
        tuple(m.text for m in corpus),
        across,
    )


def score_across_releases(
    corpus: Corpus,
    predictions: Sequence[Prediction],
    terminology: Terminology,
    crosswalk: Crosswalk,
    ks: Sequence[int],
    mode: Mode = "strict",
) -> Scores:
    """``predictions`` (one per mention of ``corpus``) scored with the gold ids ``crosswalk`` moves as their new
    ids."""
    golds = [resolve_gold(crosswalk.gold(mention.gold), terminology) for mention in corpus]
    return score(golds, predictions, ks, mode)


def linker_mentions(corpus: Corpus) -> list[Mention]:
    """The corpus's mentions as the linker takes them: with their documents, for abbreviation expansion."""
    return [Mention(m.text, m.document, m.start, m.end, m.entity_type) for m in corpus]


ERROR_COLUMNS = ("mention", "gold", "prediction", "rank_of_gold", "stage", "matched_name")


def write_errors(evaluation: Evaluation, path: Path) -> int:
    """Write every mention the system got wrong at rank 1, as TSV; returns how many."""
    rows = []
    for text, gold, prediction, correct in zip(
        evaluation.mentions, evaluation.golds, evaluation.predictions, evaluation.scores.correct_at_1, strict=True
    ):
        if not correct:
            rank = rank_of_gold(gold, prediction, evaluation.scores.mode)
            rows.append(
                (
                    text,
                    str(gold),
                    "|".join(prediction.concepts) or "NIL",
                    rank or "",
                    prediction.stage,
                    prediction.matched_name,
                )
            )
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(ERROR_COLUMNS)
        writer.writerows(rows)
    return len(rows)
