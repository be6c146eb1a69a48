"""The corpus lexicon: what public annotated corpora (BC5CDR, NCBI-disease) teach a dictionary annotator, shipped
with the span tagger and used by annotation by default. Learned by :mod:`medlink.training.corpus_lexicon`; each
form carries the evidence for it, measured out of fold, so a user of their own terminology gets only what holds:

- a **taught form** ("nephrotoxicity" → Kidney Diseases) is a span of its own, linked to its concept, when its
  smoothed out-of-fold precision is over the cut and the terminology has the concept; where the terminology
  names that text as another concept, the form must also have been found out of fold often enough
  (``MIN_FINDS_OVER_A_NAME``), so a form seen once never overrules an exact name;
- a **seldom-marked name** ("disease", "patients") stops being a span when it was found often enough
  (``MIN_FINDS_TO_BLOCK``), less than half of those finds were marked, and the terminology still names the
  concept it named when the lexicon was learned (a user's own vocabulary is not judged by MeSH's conventions).

The file (``corpus-lexicon.json.gz``) also lists the documents it was learned from, so evaluation on any of them
can leave it off (:func:`CorpusLexicon.learned_from_any`)."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError
from medlink.linking.annotation.lexicon import Lexicon
from medlink.terminology import Terminology

LEXICON_FORMAT = "medlink-corpus-lexicon-1"
# A composite mention's concepts, one per part, are one entry of a form's concepts joined as PubTator joins them
# ("MESH:D006470|MESH:D003556"): a reader that knows no composites finds no such id and leaves the form untaught.
COMPOSITE = "|"
FILE_NAME = "corpus-lexicon.json.gz"
MIN_FINDS_OVER_A_NAME = 3
MIN_UNTESTED_CHARS = 3  # learning finds no span shorter (min_chars): such a form was never tested ("Ca", "Na")
MIN_FINDS_TO_BLOCK = 3
BLOCK_BELOW = 0.5  # the share of finds that were marked under which a name is blocked
PRIOR_HITS, PRIOR_MISSES = 1.0, 1.0  # the smoothing of out-of-fold precision: a form never tested scores 0.5


@dataclass(frozen=True)
class TaughtForm:
    """``key``: a normalized mention text; ``concepts``: the alternatives annotators gave it most often, or a
    composite mention's concepts as one entry, joined by :data:`COMPOSITE`; ``count``:
    how often it was annotated; ``finds`` / ``hits``: out of fold, how often a lexicon learned without the
    document found the form in it, and how often that find was annotated with the concept taught; ``cased``: it
    was only ever annotated in capitals ("PAN", "HIT", "DEN"), so it teaches only text without a small letter
    ("pan", "hit" and "den" are words)."""

    kind: str
    key: str
    concepts: tuple[str, ...]
    count: int
    finds: int
    hits: int
    cased: bool = False

    @property
    def precision(self) -> float:
        """Out-of-fold precision, smoothed toward one half so that a form tested once is not certain."""
        return (self.hits + PRIOR_HITS) / (self.finds + PRIOR_HITS + PRIOR_MISSES)


@dataclass(frozen=True)
class SeldomMarked:
    """A name the dictionary found ``finds`` times in documents annotating ``kind`` and annotators marked
    ``marked`` times; ``concepts``: what the terminology it was learned with named by it."""

    kind: str
    key: str
    concepts: tuple[str, ...]
    finds: int
    marked: int

    @property
    def blocks(self) -> bool:
        return self.finds >= MIN_FINDS_TO_BLOCK and self.marked < BLOCK_BELOW * self.finds


@dataclass(frozen=True)
class CorpusLexicon:
    """``sources``: the corpora learned from, as "name (N documents)"; ``documents``: their document ids."""

    forms: tuple[TaughtForm, ...]
    seldom_marked: tuple[SeldomMarked, ...]
    sources: tuple[str, ...]
    documents: frozenset[str]
    # id of the terminology (kept alive beside its lexicon, so the id is not reused), kinds, cut → lexicon
    _made: dict[tuple[int, tuple[str, ...] | None, float], tuple[Terminology, Lexicon]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def __getstate__(self) -> dict[str, Any]:  # a copy (a worker's) makes its own lexicons, not the terminologies
        return {name: getattr(self, name) for name in ("forms", "seldom_marked", "sources", "documents")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in {**state, "_made": {}}.items():
            object.__setattr__(self, name, value)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({form.kind for form in self.forms}))

    def learned_from_any(self, document_ids: Iterable[str]) -> bool:
        return any(document_id in self.documents for document_id in document_ids)

    def lexicon(self, terminology: Terminology, kinds: tuple[str, ...] | None, cut: float) -> Lexicon:
        """What applies to ``terminology`` for ``kinds`` (``None``: every kind; a kind is matched ignoring case,
        one the lexicon lacks teaches nothing) at precision ``cut``. Remembered per terminology, kinds and cut."""
        memo_key = (id(terminology), kinds, cut)
        made = self._made.get(memo_key)
        if made is None:
            made = self._made[memo_key] = (terminology, self._lexicon(terminology, kinds, cut))
        return made[1]

    def _lexicon(self, terminology: Terminology, kinds: tuple[str, ...] | None, cut: float) -> Lexicon:
        wanted = None if kinds is None else {kind.casefold() for kind in kinds}
        concepts: dict[str, tuple[str, ...]] = {}
        evidence: dict[str, TaughtForm] = {}
        for form in sorted(self.forms, key=lambda f: (f.key, -f.count)):
            if wanted is not None and form.kind.casefold() not in wanted:
                continue
            if form.key in concepts or form.precision <= cut:
                continue
            if not form.finds and len(form.key) < MIN_UNTESTED_CHARS:
                continue  # "ca." is circa far more often than calcium
            own = _own_concepts(terminology, form.concepts)
            if not own:
                continue  # the terminology lacks its concept (NCBI's OMIM ids under MeSH)
            named = {match.concept_id for match in terminology.lookup_normalized(form.key)}
            # a composite over a name adds concepts to it, so it needs the same evidence as a form that replaces it
            composite = any(COMPOSITE in concept for concept in form.concepts)
            if named and (composite or not named & set(own)) and form.finds < MIN_FINDS_OVER_A_NAME:
                continue
            concepts[form.key], evidence[form.key] = own, form
        return Lexicon(
            concepts,
            self._blocked(terminology, wanted, set(concepts)),
            {key: form.count for key, form in evidence.items()},
            {key: _reason(form) for key, form in evidence.items()},
            frozenset(key for key, form in evidence.items() if form.cased),
        )

    def _blocked(self, terminology: Terminology, wanted: set[str] | None, taught: set[str]) -> frozenset[str]:
        """A name is blocked when every kind (of those wanted) that judged it blocks it."""
        verdicts: dict[str, list[SeldomMarked]] = {}
        for entry in self.seldom_marked:
            if (wanted is None or entry.kind.casefold() in wanted) and entry.key not in taught:
                verdicts.setdefault(entry.key, []).append(entry)
        blocked = set()
        for key, judged in verdicts.items():
            if not all(entry.blocks for entry in judged):
                continue
            named = {match.concept_id for match in terminology.lookup_normalized(key)}
            if named & {terminology.resolve(concept) or concept for concept in judged[0].concepts}:
                blocked.add(key)
        return frozenset(blocked)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": LEXICON_FORMAT,
            "sources": list(self.sources),
            "documents": sorted(self.documents),
            "forms": [[f.kind, f.key, list(f.concepts), f.count, f.finds, f.hits, f.cased] for f in self.forms],
            "seldom_marked": [[s.kind, s.key, list(s.concepts), s.finds, s.marked] for s in self.seldom_marked],
        }

    def save(self, path: Path) -> None:
        """Written to a temporary file and renamed: a failed write leaves what was there."""
        partial = path.with_name(f".{path.name}.partial")
        text = json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
        with gzip.GzipFile(partial, "wb", mtime=0) as stream:  # mtime 0: the same lexicon, the same bytes
            stream.write(text.encode("utf-8"))
        os.replace(partial, path)


def _own_concepts(terminology: Terminology, concepts: tuple[str, ...]) -> tuple[str, ...]:
    """What a form teaches in ``terminology``: the alternatives it has, or for a composite every part's concept
    (nothing where it lacks one: half a composite is a wrong answer)."""
    own: list[str] = []
    for concept in concepts:
        parts = [terminology.resolve(part) for part in concept.split(COMPOSITE)]
        own += [part for part in parts if part is not None] if all(parts) else []
    return tuple(dict.fromkeys(own))


def _reason(form: TaughtForm) -> str:
    found = f"found {form.finds} times out of fold, right {form.hits}" if form.finds else "not tested out of fold"
    times = "once" if form.count == 1 else f"{form.count} times"
    return f"annotated so in public corpora ({times}; {found})"


def read_corpus_lexicon(path: Path) -> CorpusLexicon:
    """A lexicon file; a damaged or foreign one is refused naming the file and what is wrong."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as stream:
            data = json.load(stream)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise MedlinkError(f"{path}: not a readable corpus lexicon ({error})") from None
    if not isinstance(data, Mapping):
        raise MedlinkError(f"{path}: not a corpus lexicon (a JSON {type(data).__name__}, not an object)")
    if data.get("format") != LEXICON_FORMAT:
        raise MedlinkError(
            f"{path}: a corpus lexicon of format {data.get('format')!r}; this medlink reads {LEXICON_FORMAT!r}"
        )
    try:
        forms = tuple(_form(entry) for entry in _listed(data["forms"]))
        seldom = tuple(_seldom(entry) for entry in _listed(data["seldom_marked"]))
        sources = tuple(str(source) for source in _listed(data["sources"]))
        documents = frozenset(str(document) for document in _listed(data["documents"]))
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise MedlinkError(
            f"{path}: a corpus lexicon with a malformed entry ({type(error).__name__}: {error})"
        ) from None
    return CorpusLexicon(forms, seldom, sources, documents)


def _form(entry: Any) -> TaughtForm:
    kind, key, concepts, count, finds, hits, cased = entry
    count, finds, hits = _counts(count, finds, hits)
    return TaughtForm(str(kind), str(key), _ids(concepts), count, finds, hits, bool(cased))


def _seldom(entry: Any) -> SeldomMarked:
    kind, key, concepts, finds, marked = entry
    finds, marked = _counts(finds, marked)
    return SeldomMarked(str(kind), str(key), _ids(concepts), finds, marked)


def _counts(*counts: Any) -> tuple[int, ...]:
    """Whole counts, none negative, and no more hits than finds (the last never above the one before it)."""
    values = tuple(int(count) for count in counts)
    if any(value < 0 or value != count for value, count in zip(values, counts, strict=True)):
        raise ValueError(f"counts must be whole and not negative, found {list(counts)}")
    if len(values) > 1 and values[-1] > values[-2]:
        raise ValueError(f"more right than found: {list(counts)}")
    return values


def _listed(values: Any) -> list[Any]:
    if not isinstance(values, list):
        raise TypeError(f"expected a list, found {type(values).__name__}")
    return values


def _ids(concepts: Any) -> tuple[str, ...]:
    if not isinstance(concepts, list) or not concepts or not all(isinstance(c, str) and c for c in concepts):
        raise ValueError(f"concepts must be a non-empty list of ids, found {concepts!r}")
    return tuple(concepts)


def packaged_corpus_lexicon() -> CorpusLexicon | None:
    """The lexicon shipped with the span tagger (``medlink[tagger]``); ``None`` when that is not installed."""
    from medlink.linking.annotation.tagger import PACKAGED
    from medlink.models.catalog import model_entry, model_location

    folder = model_location(model_entry(PACKAGED))
    path = folder / FILE_NAME if folder is not None else None
    return read_corpus_lexicon(path) if path is not None and path.is_file() else None
