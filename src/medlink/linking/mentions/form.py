"""Does the name a dense search found agree with the mention in form? A test for terms whose concept the
terminology lacks (issue 44).

Dense retrieval always returns the nearest name, and a look-alike scores like a paraphrase: "quextatinib" →
Lapatinib 0.70, "telzumab" → Gemtuzumab 0.71. What gives it away is form: the mention has a word that no name of the
terminology has (so it names something the terminology has never heard of) and that the found concept's names do not
account for either — not even as a misspelling — or it bears a drug-name affix (-tinib, -zumab, -gliptin) whose stem
differs from the found name's. A paraphrase ("kidney stones" → Nephrolithiasis) has words the terminology knows; a
misspelling ("infarctoin") resembles a word of the found name. A small logistic model over these features and the
dense score, fitted on simulated unknowns and on correct decisions of annotated corpora (``evaluation/form_fit.py``:
``medlink calibrate`` for an index, ``scripts/calibrate_default_form.py`` for the embedded default), decides; below
its cut the mention is nil, saying why.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from medlink.linking.results import LinkResult
from medlink.linking.settings import RETRIEVAL
from medlink.terminology import Terminology

# Word endings of INN stems (WHO, "The use of stems in the selection of International Nonproprietary Names"), longest
# first so that "-zumab" wins over "-mab". Endings that ordinary words share ("-ase", "-amide", "-one") are left out.
INN_AFFIXES = tuple(
    sorted(
        {
            "mab",
            "ximab",
            "zumab",
            "umab",
            "cept",
            "kinra",
            "grastim",
            "poetin",
            "teplase",
            "tinib",
            "anib",
            "rafenib",
            "ciclib",
            "lisib",
            "parib",
            "degib",
            "zomib",
            "limus",
            "imod",
            "lidomide",
            "lutamide",
            "sartan",
            "pril",
            "olol",
            "alol",
            "dipine",
            "azepam",
            "azolam",
            "caine",
            "cillin",
            "conazole",
            "mycin",
            "micin",
            "oxacin",
            "vir",
            "previr",
            "buvir",
            "asvir",
            "navir",
            "tegravir",
            "vudine",
            "gliptin",
            "glutide",
            "glinide",
            "gliflozin",
            "glitazone",
            "statin",
            "prazole",
            "tidine",
            "setron",
            "triptan",
            "coxib",
            "profen",
            "fenac",
            "dronate",
            "parin",
            "xaban",
            "gatran",
            "tide",
            "relin",
            "relix",
            "pressin",
            "semide",
            "thiazide",
            "terol",
            "tropium",
            "curium",
            "afil",
            "oxetine",
            "faxine",
            "triptyline",
            "peridol",
            "apine",
            "idone",
            "mustine",
            "platin",
            "rubicin",
            "taxel",
            "tecan",
            "trexed",
            "citabine",
            "lukast",
        },
        key=lambda affix: (-len(affix), affix),
    )
)
FEATURES = ("score", "unmatched", "novel", "stem_clash", "name_dice", "words", "extra", "margin", "crowd", "codes")
_CROWD = 0.03  # candidates of other concepts this close to the best make a crowd: no name stands out
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    ("a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with", "without")
)
_ENDING = 4  # letters an inflection or derivation adds to a word ("-ion", "-s", "-ally")
_SHARED_STEM = 6
_INFLECTIONS = 64  # words sharing a stem that are compared with a word not in the vocabulary
_SAME_STEM = 75.0  # rapidfuzz ratio at which two INN stems are one stem misspelled ("trastuza-", "trastuzu-")


def words(text: str) -> list[str]:
    """The content words of ``text``, case-folded (function words dropped)."""
    return [w for w in _WORD.findall(text.casefold()) if w not in _STOP]


def inn_affix(word: str) -> str | None:
    """The INN affix ``word`` bears, when a stem of at least two letters is left ("ke-lutamide")."""
    return next((a for a in INN_AFFIXES if word.endswith(a) and len(word) >= len(a) + 2 and word.isalpha()), None)


def same_word(a: str, b: str) -> bool:
    """One word, inflected or misspelled: "infarct"/"infarction", "neoplastic"/"neoplasms", "infarctoin"; not two
    chemicals that share a prefix ("hydroxyshidasterone"/"hydroxyprogesterone"), nor two codes or numbers ("slc2a12"
    /"slc12a2", "3"/"1")."""
    if a == b:
        return True
    if any(c.isdigit() for c in a + b):
        return False
    short, long = sorted((a, b), key=len)
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(short))
    if len(short) >= 4 and common == len(short) and len(long) - len(short) <= _ENDING:
        return True
    if common >= _SHARED_STEM and common >= 0.75 * len(short):
        return True
    return OSA.distance(a, b) <= 1 + len(short) // 6


def _stem_clash(word: str, affix: str, others: Sequence[str]) -> bool:
    stem = word[: -len(affix)]
    return not any(o.endswith(affix) and fuzz.ratio(stem, o[: -len(affix)]) >= _SAME_STEM for o in others)


def _trigrams(text: str) -> set[str]:
    padded = f"  {' '.join(text.casefold().split())} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def dice(a: str, b: str) -> float:
    x, y = _trigrams(a), _trigrams(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 0.0


def judged(result: LinkResult) -> bool:
    """Whether the form test reads ``result``: a retrieval decision for one concept (or one name's concepts) with
    a score; exact matches and claimed sets are left as they are."""
    return result.stage in RETRIEVAL and bool(result.concepts) and result.score is not None and not result.several


@dataclass(frozen=True)
class FormReading:
    """The features of one decision (in :data:`FEATURES` order) and the words that explain a low one."""

    features: tuple[float, ...]
    novel: tuple[str, ...] = ()
    clashing: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()


class Vocabulary:
    """Every word of a terminology's names. A word is known when a name has it or an inflection of it: a word that
    shares all but its last few letters and differs in at most two ("deficits" from "deficit", "tumours" from
    "tumour"; not "abikovirovir" from "abikoviromycin"). ``words`` may be a function that gives them: it is called
    on the first question, so a decision whose words all match the found name never pays for reading all of MeSH
    (0.9 s)."""

    def __init__(self, words: Iterable[str] | Callable[[], Iterable[str] | Any]) -> None:
        self._words = words

    @cached_property
    def _sorted(self) -> SortedWords:
        return SortedWords(self._words() if callable(self._words) else self._words)

    def knows(self, word: str) -> bool:
        stem = word[: max(4, len(word) - 3)]
        at = bisect.bisect_left(self._sorted, stem)
        for position in range(at, min(at + _INFLECTIONS, len(self._sorted))):
            other = self._sorted[position]
            if not other.startswith(stem):
                return False
            if OSA.distance(other, word) <= 2:
                return True
        return False


class SortedWords:
    """Distinct words in sorted order, kept as one Arrow string array (a UTF-8 buffer and its offsets: about 12
    bytes a word, where a list of ``str`` took ten times that — 140 MB for MeSH, in every worker process of a
    service). Arrow sorts by bytes, which for UTF-8 is code point order, as ``sorted`` would."""

    def __init__(self, words: Iterable[str] | Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        array = words if isinstance(words, pa.Array) else pa.array(list(words), pa.string())
        distinct = pc.unique(array.drop_null())
        self._array = distinct.take(pc.sort_indices(distinct))
        del array, distinct
        pa.default_memory_pool().release_unused()  # what reading all the names took (~100 MB) goes back

    def __len__(self) -> int:
        return len(self._array)

    def __getitem__(self, position: int) -> str:
        return str(self._array[position].as_py())


def read_form(
    mention: str, names: Sequence[str], score: float, known: Vocabulary, others: Sequence[float] = ()
) -> FormReading:
    """How ``mention`` agrees in form with ``names`` (the found concept's names, the matched one first); ``known``:
    the words of the terminology's names; ``others``: the scores of the best candidates of other concepts (a look-alike
    rarely stands out among its siblings)."""
    own = words(mention)
    theirs = [w for name in names for w in words(name)]
    unmatched = [w for w in own if not any(same_word(w, t) for t in theirs)]
    capitals = {w.casefold() for w in _WORD.findall(mention) if w.isupper() and len(w) > 1}
    novel = [w for w in unmatched if w not in capitals and not known.knows(w)]
    # only a word the terminology does not know coins a drug name ("cocaine" ends like "-caine" and is no new drug)
    clashing = [
        w for w in own if (affix := inn_affix(w)) is not None and _stem_clash(w, affix, theirs) and not known.knows(w)
    ]
    matched_words = words(names[0]) if names else []
    extra = [w for w in matched_words if not any(same_word(w, o) for o in own)]
    codes = [w for w in unmatched if any(c.isdigit() for c in w)]
    n = max(1, len(own))
    features = (
        score,
        len(unmatched) / n,
        len(novel) / n,
        float(bool(clashing)),
        max((dice(mention, name) for name in names), default=0.0),
        float(np.log1p(len(own))),
        len(extra) / max(1, len(matched_words)),
        score - max(others, default=0.0),
        float(sum(1 for s in others if s >= score - _CROWD)),
        float(bool(codes)),
    )
    return FormReading(features, tuple(novel), tuple(clashing), tuple(unmatched), tuple(codes))


@dataclass(frozen=True)
class FormModel:
    """``weights · features + bias`` over :data:`FEATURES`; a decision below ``cut`` makes the mention nil."""

    weights: tuple[float, ...]
    bias: float
    cut: float
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        if self.features != FEATURES or len(self.weights) != len(FEATURES):
            raise ValueError(
                f"a form model over {list(self.features)} does not fit this medlink's features "
                f"{list(FEATURES)}: calibrate it again"
            )

    def decision(self, reading: FormReading) -> float:
        return float(np.dot(self.weights, reading.features) + self.bias)

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "cut": self.cut,
            "features": list(self.features),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FormModel:
        return cls(
            tuple(float(w) for w in data["weights"]),
            float(data["bias"]),
            float(data["cut"]),
            tuple(data.get("features", FEATURES)),
        )


@dataclass
class FormJudge:
    """The linker's form test: a :class:`FormModel` over a terminology's names. The terminology's vocabulary is read
    the first time a mention has a word the found name does not account for (under a second for all of MeSH)."""

    model: FormModel
    terminology: Terminology
    most_names: int = 30
    _cache: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @property
    def cut(self) -> float:
        return self.model.cut

    @cached_property
    def vocabulary(self) -> Vocabulary:
        return Vocabulary(self._words)

    def _words(self) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        texts = pc.utf8_lower(self.terminology.names.arrow("text", pa.string()))
        return pc.unique(pc.list_flatten(pc.split_pattern_regex(texts, r"[^\w]+|_")))  # an Arrow array, not str

    def names_of(self, concept_id: str) -> tuple[str, ...]:
        if concept_id not in self._cache:
            if len(self._cache) > 100_000:  # a long-running service meets ever more concepts
                self._cache.clear()
            names = dict.fromkeys(name.text for name in self.terminology.names_of(concept_id))
            self._cache[concept_id] = tuple(names)[: self.most_names]
        return self._cache[concept_id]

    def read(self, result: LinkResult) -> FormReading:
        matched, score = result.matched_name or "", result.score or 0.0
        names = [matched, *(name for c in result.concepts for name in self.names_of(c))]
        best: dict[str, float] = {}
        for candidate in result.candidates:
            if candidate.concept_id not in result.concepts:
                best[candidate.concept_id] = max(best.get(candidate.concept_id, -1.0), candidate.score)
        return read_form(result.mention, names, score, self.vocabulary, list(best.values()))

    def judge(self, result: LinkResult) -> tuple[float, str]:
        """The model's decision on a retrieval decision and, for a low one, the reason in words."""
        reading = self.read(result)
        return self.model.decision(reading), explain(reading, result.matched_name or "")


def explain(reading: FormReading, matched_name: str) -> str:
    if reading.clashing:
        return f"closest name {matched_name!r} differs in its stem from {reading.clashing[0]!r}"
    if reading.novel:
        return (
            f"closest name {matched_name!r} does not account for {reading.novel[0]!r}, a word no name of the "
            "terminology has"
        )
    if reading.codes:
        return f"closest name {matched_name!r} does not state {reading.codes[0]!r}"
    if reading.unmatched:
        return f"closest name {matched_name!r} does not account for {', '.join(map(repr, reading.unmatched[:3]))}"
    return f"closest name {matched_name!r} agrees too little with the mention in form"
