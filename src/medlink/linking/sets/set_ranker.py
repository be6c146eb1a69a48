"""A learned ranker that links a mention to the *set* of concepts it names (CHIP-CDN's multi-implication).

For each candidate of a mention (``pair_features.py``) a logistic model over a hinge basis of the features gives
the probability that the candidate is one of the mention's concepts; a second such model looks again at each
candidate beside the mention's others (its rank, how much of its name the better candidates already cover, how
many candidates are likely), and the mention claims every candidate above the ranker's threshold, and at least its
best one. The threshold is chosen, cross-fitted, for the set F1 on the training mentions
(``training/set_ranker_fit.py``), which replaces Liang et al.'s count head plus θ rule (eq. 14): on CHIP-CDN train
the threshold alone scored higher than the count-and-θ rule, and no better with the true counts.

A ranker is a folder: ``ranker.json`` (plain numbers: the model, the threshold, the settings, what it was fitted
on) and ``mentions.jsonl`` (the training mentions it remembers); a ranker with an encoder also keeps the vectors
of the names and of those mentions (``names.npy``, ``mentions.npy``, float16). It is refused over another
terminology, and with an encoder whose vectors differ from the ones it was fitted with.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from medlink.errors import MedlinkError
from medlink.folders import read_manifest_json, staged_folder
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.linking.sets.mention_memory import MentionMemory, Remembered
from medlink.linking.sets.pair_features import (
    DENSE_FEATURES,
    FEATURES,
    DenseNames,
    PairFeaturizer,
    PairSettings,
)
from medlink.linking.sets.pair_rescorer import RESCORER_CARD, RESCORER_FOLDER, PairRescorer, ranker_fingerprint
from medlink.linking.sets.ranker_model import SET_FEATURES, RankedSet, RankerModel, rank_pairs, rescore
from medlink.terminology import Terminology

RANKER_FORMAT = 2
RANKER_FILE = "ranker.json"
MENTIONS_FILE = "mentions.jsonl"
OUT_OF_FOLD_FILE = "out-of-fold.jsonl"  # the cross-fitting's view of each training mention (see OutOfFold)
OUT_OF_FOLD_CANDIDATES = 20
NAME_VECTORS, MENTION_VECTORS = "names.npy", "mentions.npy"


@dataclass(frozen=True)
class OutOfFold:
    """A training mention as cross-fitting saw it: its fold, and its best candidates with the probabilities that
    models fitted without its fold gave them, best first. What a second stage trains on (its candidates are the
    ones new mentions get) and is checked against (they are honest probabilities)."""

    mention: Remembered
    fold: int
    candidates: tuple[Candidate, ...]


class SetRanker:
    """Ranks a mention's candidates and claims the set above ``threshold``."""

    def __init__(
        self,
        featurizer: PairFeaturizer,
        model: RankerModel,
        threshold: float,
        report: dict | None = None,
        out_of_fold: Sequence[OutOfFold] = (),
        rescorer: PairRescorer | None = None,
    ) -> None:
        self.featurizer, self.model, self.threshold = featurizer, model, threshold
        self.report = report or {}
        self.out_of_fold = tuple(out_of_fold)  # kept by save(), read back by read_out_of_fold()
        self.rescorer = rescorer

    @property
    def terminology(self) -> Terminology:
        return self.featurizer.terminology

    def rank(self, texts: Sequence[str]) -> list[RankedSet]:
        pairs = self.featurizer.pairs(texts)
        if self.rescorer is None:
            return rank_pairs(pairs, self.model, self.threshold)
        return rescore(texts, pairs.entries, self.model.probabilities(pairs), self.rescorer)

    def save(self, folder: Path | str) -> Path:
        """Written to a staged folder and renamed into place: a failed save leaves an older ranker intact."""
        memory = self.featurizer.memory
        payload = {
            "format": RANKER_FORMAT,
            "terminology": self.terminology.fingerprint(),
            "features": list(self.featurizer.features),
            "settings": asdict(self.featurizer.settings),
            "threshold": self.threshold,
            "memory": {
                "ngrams": list(memory.ngrams),
                "longest_gram": memory.longest_gram,
                "min_gram_count": memory.min_gram_count,
            },
            "set_features": list(SET_FEATURES),
            "model": asdict(self.model),
            "report": self.report,
        }
        dense = self.featurizer.dense
        if dense is not None:
            payload["encoder"] = {"name": dense.name, "fingerprint": dense.encoder.identity.fingerprint()}
        with staged_folder(Path(folder), RANKER_FILE, "a medlink ranker") as staging:
            (staging / RANKER_FILE).write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
            with (staging / MENTIONS_FILE).open("w", encoding="utf-8") as handle:
                for mention in memory.mentions:
                    handle.write(json.dumps({"text": mention.text, "parts": mention.parts}, ensure_ascii=False) + "\n")
            if self.out_of_fold:
                _write_out_of_fold(staging / OUT_OF_FOLD_FILE, self.out_of_fold)
            if self.rescorer is not None:
                shutil.copytree(self.rescorer.folder, staging / RESCORER_FOLDER)
            if dense is not None:
                np.save(staging / NAME_VECTORS, dense.vectors.astype(np.float16))
                np.save(staging / MENTION_VECTORS, np.asarray(memory.vectors).astype(np.float16))
        return Path(folder)

    @classmethod
    def load(cls, folder: Path | str, terminology: Terminology) -> SetRanker:
        folder = Path(folder)
        path = folder / RANKER_FILE
        missing = f"{folder}: not a ranker folder (no {RANKER_FILE}); make one with `medlink train set-ranker`"
        payload = read_manifest_json(path, MedlinkError, missing)
        expected = list(FEATURES + DENSE_FEATURES) if "encoder" in payload else list(FEATURES)
        if (
            payload.get("format") != RANKER_FORMAT
            or payload.get("features") != expected
            or payload.get("set_features") != list(SET_FEATURES)
        ):
            raise MedlinkError(
                f"{path}: ranker format {payload.get('format')} from another medlink version; "
                "fit it again with `medlink train set-ranker`"
            )
        if payload.get("terminology") != terminology.fingerprint():
            raise MedlinkError(
                f"{path}: fitted over another terminology (fingerprint "
                f"{payload.get('terminology')}, this one {terminology.fingerprint()}); "
                "pass the terminology it was fitted on"
            )
        dense = _dense_names(folder, payload.get("encoder"))
        memory_settings = payload["memory"]
        mention_vectors = _vectors(folder / MENTION_VECTORS) if dense is not None else None
        try:
            memory = MentionMemory(
                read_remembered(folder / MENTIONS_FILE),
                terminology.normalizer,
                tuple(memory_settings["ngrams"]),
                memory_settings["longest_gram"],
                memory_settings["min_gram_count"],
                mention_vectors,
            )
            featurizer = PairFeaturizer(terminology, memory, PairSettings(**payload["settings"]), dense=dense)
        except ValueError as error:
            raise MedlinkError(f"{folder}: {error}; fit the ranker again") from None
        model, threshold = RankerModel.from_dict(payload["model"]), float(payload["threshold"])
        rescorer = None
        if (folder / RESCORER_FOLDER / RESCORER_CARD).is_file():
            rescorer = PairRescorer.load(folder / RESCORER_FOLDER, ranker_fingerprint(model, threshold))
        return cls(featurizer, model, threshold, payload.get("report"), rescorer=rescorer)


def read_ranker_model(folder: Path | str) -> tuple[RankerModel, float]:
    """A ranker folder's fitted model and threshold, without its terminology or encoder."""
    path = Path(folder) / RANKER_FILE
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        return RankerModel.from_dict(payload["model"]), float(payload["threshold"])
    except FileNotFoundError:
        raise MedlinkError(f"{folder}: not a ranker folder (no {RANKER_FILE})") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise MedlinkError(f"{path}: not a ranker ({error}); fit it again with `medlink train set-ranker`") from None


def _dense_names(folder: Path, encoder: dict | None) -> DenseNames | None:
    """The encoder a ranker was fitted with and its name vectors, refused when the encoder now gives other
    vectors."""
    if encoder is None:
        return None
    from medlink.encoders import load_encoder
    from medlink.encoders.named import model_named_in

    if not isinstance(encoder, dict):
        raise MedlinkError(f"{folder / RANKER_FILE}: its encoder is not a JSON object; fit the ranker again")
    loaded = load_encoder(model_named_in(folder / RANKER_FILE, encoder.get("name")))
    if loaded.identity.fingerprint() != encoder["fingerprint"]:
        raise MedlinkError(
            f"{folder}: fitted with encoder {encoder['name']!r} of fingerprint "
            f"{encoder['fingerprint']}, which now has {loaded.identity.fingerprint()}; "
            "fit the ranker again"
        )
    return DenseNames(encoder["name"], loaded, _vectors(folder / NAME_VECTORS))


def _vectors(path: Path) -> np.ndarray:
    try:
        return np.load(path).astype(np.float32)
    except (OSError, ValueError) as error:
        raise MedlinkError(f"{path}: cannot read vectors ({error}); fit the ranker again") from None


def read_remembered(path: Path) -> list[Remembered]:
    mentions = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
                mentions.append(Remembered(record["text"], tuple(tuple(part) for part in record["parts"])))
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise MedlinkError(f"{path}: line {number}: not a remembered mention ({error})") from None
    return mentions


def _write_out_of_fold(path: Path, records: Sequence[OutOfFold]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            candidates = [[c.concept_id, c.name, c.score] for c in record.candidates]
            handle.write(
                json.dumps(
                    {
                        "text": record.mention.text,
                        "parts": record.mention.parts,
                        "fold": record.fold,
                        "candidates": candidates,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


def read_out_of_fold(folder: Path | str) -> list[OutOfFold]:
    """The training mentions' out-of-fold candidates a ranker folder keeps (rankers fitted before they were
    kept have none: fit again)."""
    path = Path(folder) / OUT_OF_FOLD_FILE
    if not path.is_file():
        raise MedlinkError(
            f"{folder}: the ranker keeps no out-of-fold candidates ({OUT_OF_FOLD_FILE}); fit it again "
            "with `medlink train set-ranker`"
        )
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
                mention = Remembered(record["text"], tuple(tuple(part) for part in record["parts"]))
                candidates = tuple(Candidate(c[0], c[1], float(c[2])) for c in record["candidates"])
                records.append(OutOfFold(mention, int(record["fold"]), candidates))
            except (json.JSONDecodeError, KeyError, TypeError, IndexError, ValueError) as error:
                raise MedlinkError(f"{path}: line {number}: not an out-of-fold record ({error})") from None
    return records


class SetRankerSieve:
    """The linking stage of a :class:`SetRanker`: decides every mention that has a candidate."""

    stage = Stage.RANKED

    def __init__(self, ranker: SetRanker) -> None:
        self.ranker = ranker
        self.name = "ranked"

    def link_batch(self, items: Sequence[tuple[str, str]]) -> list[LinkResult | None]:
        ranked = self.ranker.rank([text for text, _ in items])
        return [self._result(text, found) for (text, _), found in zip(items, ranked, strict=True)]

    def _result(self, text: str, found: RankedSet) -> LinkResult | None:
        if not found.claimed:
            return None
        terminology = self.ranker.terminology
        best = found.candidates[0]
        if found.rescored:
            claimed = ", ".join(
                f"{c.name!r} {c.rerank_score:.2f} (ranker {c.score:.2f})"
                for c in found.candidates[: len(found.claimed)]
            )
            rescorer = self.ranker.rescorer
            assert rescorer is not None
            reason = (
                f"ranked, then read with the mention by the pair cross-encoder: {claimed} (claims every one of "
                f"its {rescorer.card.depth} read candidates above {rescorer.card.threshold:.2f}, at least the "
                "best)"
            )
        else:
            claimed = ", ".join(f"{c.name!r} {c.score:.2f}" for c in found.candidates[: len(found.claimed)])
            reason = f"ranked: {claimed} (claims every candidate above {self.ranker.threshold:.2f}, at least the best)"
        return LinkResult(
            mention=text,
            concepts=found.claimed,
            stage=self.stage,
            score=best.score,
            matched_name=best.name,
            preferred_names=tuple(terminology.concept_preferred_name(c) for c in found.claimed),
            candidates=found.candidates,
            several=len(found.claimed) > 1,
            reason=reason,
        )
