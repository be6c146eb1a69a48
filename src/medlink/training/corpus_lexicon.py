"""Learning the corpus lexicon (:mod:`medlink.linking.annotation.corpus_lexicon`) from annotated documents, with
its evidence measured out of fold: the documents are split into folds by their ids; for each fold, what the other
folds teach (each mention text → the concept annotated most often) is looked for in the fold's documents, and
every find is scored against the fold's own annotations. A form's ``finds`` and ``hits`` are those counts summed
over the folds, so its precision is what a user would have met on documents it was not learned from.

The names of the terminology are judged the same way, per kind: how often the dictionary finds each in documents
that annotate that kind, and how often annotators marked that find as a mention."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from medlink.evaluation.corpus import Corpus, GoldMention
from medlink.evaluation.folds import fold_of
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.linking.annotation.candidates import find_spans
from medlink.linking.annotation.corpus_lexicon import COMPOSITE, CorpusLexicon, SeldomMarked, TaughtForm
from medlink.linking.annotation.lexicon import Lexicon, has_small_letter
from medlink.terminology import Terminology

DEFAULT_FOLDS = 5
_BOTH, _DISEASE = ("Chemical", "Disease"), ("Disease",)


@dataclass(frozen=True)
class LexiconSource:
    """An annotated corpus and the kinds it annotates: with one kind, every mention is of it (NCBI-disease's
    ``SpecificDisease``, ``Modifier``, … are all Disease); with several, a mention's own type says which, and
    mentions of other types are left out."""

    name: str
    corpus: Corpus
    kinds: tuple[str, ...]

    def kind_of(self, mention: GoldMention) -> str | None:
        if len(self.kinds) == 1:
            return self.kinds[0]
        wanted = (mention.entity_type or "").casefold()
        return next((kind for kind in self.kinds if kind.casefold() == wanted), None)


def public_sources(corpora: Path) -> list[LexiconSource]:
    """What the shipped lexicon is learned from, read from ``corpora`` (``../shared/data/corpora``, the
    publishers' files): BC5CDR train + dev and NCBI-disease train + dev; NCBI-disease test is left to score on."""
    from medlink.evaluation.corpus_formats import load_corpus

    bc5cdr, ncbi = corpora / "bc5cdr", corpora / "ncbi-disease"
    return [
        LexiconSource("BC5CDR train", load_corpus(f"pubtator:{bc5cdr / 'CDR_TrainingSet.PubTator.txt'}"), _BOTH),
        LexiconSource("BC5CDR dev", load_corpus(f"pubtator:{bc5cdr / 'CDR_DevelopmentSet.PubTator.txt'}"), _BOTH),
        LexiconSource("NCBI-disease train", load_corpus(f"pubtator:{ncbi / 'NCBItrainset_corpus.txt'}"), _DISEASE),
        LexiconSource("NCBI-disease dev", load_corpus(f"pubtator:{ncbi / 'NCBIdevelopset_corpus.txt'}"), _DISEASE),
    ]


@dataclass(frozen=True)
class _Document:
    id: str
    text: str
    kinds: tuple[str, ...]
    fold: int


Place = tuple[str, int, int]  # document id, start, end


@dataclass(frozen=True)
class _Found:
    """A span the dictionary found: where, its normalized text, and whether it is written with a small letter."""

    start: int
    end: int
    key: str
    small: bool


def learn_corpus_lexicon(
    sources: Sequence[LexiconSource],
    terminology: Terminology,
    folds: int = DEFAULT_FOLDS,
    config: AnnotatorConfig | None = None,
) -> CorpusLexicon:
    """The lexicon ``sources`` teach, its forms and ``terminology``'s names scored out of ``folds`` folds; spans
    are found as ``config`` (default: the annotator's defaults, no tagger) finds them."""
    documents = _documents(sources, folds)
    gold, given, small = _gold(sources, terminology)
    teach = replace(
        config or AnnotatorConfig(), tagger=None, corpus=None, lexicon=Lexicon(dict.fromkeys(_keys(given), ()))
    )
    spans = {
        document.id: [
            _Found(s.start, s.end, s.key, has_small_letter(s.text))
            for s in find_spans(terminology, document.text, teach)
            if not s.long_form
        ]
        for document in documents
    }
    forms = [
        form
        for kind, taught in given.items()
        for form in _scored_forms(kind, taught, small[kind], documents, spans, gold[kind], folds)
    ]
    seldom = _seldom_marked(documents, spans, gold, terminology)
    names = tuple(f"{source.name} ({len(source.corpus.documents)} documents)" for source in sources)
    return CorpusLexicon(
        tuple(sorted(forms, key=lambda f: (f.kind, f.key))), seldom, names, frozenset(d.id for d in documents)
    )


def _documents(sources: Sequence[LexiconSource], folds: int) -> list[_Document]:
    kinds: dict[str, set[str]] = defaultdict(set)
    texts: dict[str, str] = {}
    for source in sources:
        for document_id, text in source.corpus.documents:
            texts.setdefault(document_id, text)
            kinds[document_id].update(source.kinds)
    return [_Document(i, text, tuple(sorted(kinds[i])), fold_of(i, folds)) for i, text in texts.items()]


# kind → (document, start, end) → the concepts annotated there (empty: a mention marked without one concept)
Gold = dict[str, dict[Place, tuple[str, ...]]]
# kind → normalized text → document → the concepts it was annotated with there, counted
Given = dict[str, dict[str, dict[str, Counter[tuple[str, ...]]]]]


def _gold(sources: Sequence[LexiconSource], terminology: Terminology) -> tuple[Gold, Given, dict[str, set[str]]]:
    """The annotations, what they teach, and per kind the texts ever annotated written with a small letter."""
    gold: Gold = defaultdict(dict)
    given: Given = defaultdict(lambda: defaultdict(lambda: defaultdict(Counter)))
    small: dict[str, set[str]] = defaultdict(set)
    normalize = terminology.normalizer
    for source in sources:
        texts = dict(source.corpus.documents)
        for mention in source.corpus:
            kind = source.kind_of(mention)
            if kind is None or mention.document_id not in texts or mention.start is None or mention.end is None:
                continue
            concepts = _taught_ids(mention.gold.parts, terminology)
            gold[kind][(mention.document_id, mention.start, mention.end)] = concepts
            written = texts[mention.document_id][mention.start : mention.end]
            key = normalize(written)
            if concepts and key:
                given[kind][key][mention.document_id][concepts] += 1
                if has_small_letter(written):
                    small[kind].add(key)
    return gold, given, small


def _taught_ids(parts: tuple[tuple[str, ...], ...], terminology: Terminology) -> tuple[str, ...]:
    """What a mention teaches: one part's alternative ids; a composite mention's ("breast and ovarian cancer",
    "hemorrhagic cystitis" in BC5CDR) one id per part, the first the terminology has, joined as one
    (:data:`~medlink.linking.annotation.corpus_lexicon.COMPOSITE`); nothing for a nil mention."""
    if not parts or any(not part or any(c.endswith("-1") for c in part) for part in parts):
        return ()
    if len(parts) == 1:
        return parts[0]
    firsts = (next((c for c in part if terminology.resolve(c)), part[0]) for part in parts)
    return (COMPOSITE.join(dict.fromkeys(firsts)),)


def _keys(given: Given) -> set[str]:
    return {key for taught in given.values() for key in taught}


def _scored_forms(
    kind: str,
    taught: dict[str, dict[str, Counter[tuple[str, ...]]]],
    small: set[str],
    documents: Sequence[_Document],
    spans: dict[str, list[_Found]],
    gold: dict[Place, tuple[str, ...]],
    folds: int,
) -> Iterable[TaughtForm]:
    fold_of_document = {d.id: d.fold for d in documents}
    # per fold, what the other folds teach: text → concept annotated most often there
    by_fold: list[dict[str, tuple[str, ...]]] = []
    for fold in range(folds):
        lexicon = {}
        for key, per_document in taught.items():
            counts = sum(
                (c for d, c in per_document.items() if fold_of_document.get(d) != fold), Counter[tuple[str, ...]]()
            )
            if counts:
                lexicon[key] = counts.most_common(1)[0][0]
        by_fold.append(lexicon)
    finds: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for document in documents:
        if kind not in document.kinds:
            continue
        lexicon = by_fold[document.fold]
        for found in spans[document.id]:
            if found.key in lexicon and (found.key in small or not found.small):  # as the lesson would apply
                finds[found.key] += 1
                annotated = gold.get((document.id, found.start, found.end), ())
                hits[found.key] += bool(set(annotated) & set(lexicon[found.key]))
    for key, per_document in taught.items():
        counts = sum(per_document.values(), Counter[tuple[str, ...]]())
        concepts = counts.most_common(1)[0][0]
        yield TaughtForm(kind, key, concepts, sum(counts.values()), finds[key], hits[key], cased=key not in small)


def _seldom_marked(
    documents: Sequence[_Document],
    spans: dict[str, list[_Found]],
    gold: Gold,
    terminology: Terminology,
) -> tuple[SeldomMarked, ...]:
    """Every kind's verdict on each name some kind blocks (a kind that marks the name must be able to veto)."""
    finds: dict[str, Counter[str]] = defaultdict(Counter)
    marked: dict[str, Counter[str]] = defaultdict(Counter)
    for document in documents:
        for found in spans[document.id]:
            if not terminology.has_normalized(found.key):
                continue
            for kind in document.kinds:
                finds[kind][found.key] += 1
                marked[kind][found.key] += (document.id, found.start, found.end) in gold[kind]
    verdicts = [
        SeldomMarked(kind, key, (), n, marked[kind][key])
        for kind, counted in finds.items()
        for key, n in counted.items()
    ]
    blocking = {verdict.key for verdict in verdicts if verdict.blocks}
    return tuple(
        replace(verdict, concepts=tuple(m.concept_id for m in terminology.lookup_normalized(verdict.key)))
        for verdict in sorted(verdicts, key=lambda v: (v.key, v.kind))
        if verdict.key in blocking
    )
