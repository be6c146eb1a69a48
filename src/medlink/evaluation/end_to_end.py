"""End-to-end evaluation of annotation: the system finds the mentions itself in every document of a corpus.

- **mention level**: a found (document, start, end, concept) must equal a gold one exactly (a composite gold
  mention counts once per concept it names; ids joined by ``+`` are one concept's alternatives);
- **document level**: the set of (document, concept) pairs, BioCreative V CDR's disease-named-entity measure.

Gold ids are resolved through the terminology (alternative ids to the concept's own); gold mentions without an id
(``-1``) are left out of both measures. Negated and uncertain mentions count: the corpora annotate them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus
from medlink.evaluation.crosswalk import Crosswalk
from medlink.linking.annotation.annotator import Annotation, AnnotatorConfig, lexicon_in_use
from medlink.linking.annotation.candidates import find_spans
from medlink.linking.annotation.lexicon import Lexicon, TrainingMention, learn_lexicon
from medlink.terminology import Terminology


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    found: int
    gold: int
    right: int

    @classmethod
    def of(cls, found: set, gold: set) -> PRF:
        right = len(found & gold)
        precision = right / len(found) if found else 0.0
        recall = right / len(gold) if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return cls(round(precision, 4), round(recall, 4), round(f1, 4), len(found), len(gold), right)


@dataclass(frozen=True)
class EndToEnd:
    documents: int
    mention: PRF
    document: PRF

    def to_dict(self) -> dict[str, Any]:
        return {"documents": self.documents, "mention": vars(self.mention), "document": vars(self.document)}


def gold_sets(corpus: Corpus, terminology: Terminology, crosswalk: Crosswalk | None = None) -> tuple[set, set]:
    """The gold (document, start, end, concept) and (document, concept) sets; with ``crosswalk``, ids it moves
    across releases are scored as their new ids."""
    mentions, concepts = set(), set()
    for m in corpus:
        if m.document_id is None or m.start is None or m.end is None:
            raise MedlinkError(
                f"{corpus.name}: end-to-end evaluation needs documents and mention offsets (PubTator has them)"
            )
        gold = crosswalk.gold(m.gold) if crosswalk is not None else m.gold
        for part in gold.parts:  # a part's ids are alternatives ("+"): one concept, the first the terminology has
            ids = [concept for concept in part if concept and not concept.endswith("-1")]
            if ids:
                concept = _first_known(ids, terminology)
                mentions.add((m.document_id, m.start, m.end, concept))
                concepts.add((m.document_id, concept))
    return mentions, concepts


def score_annotations(
    corpus: Corpus,
    annotations: Sequence[Sequence[Annotation]],
    terminology: Terminology,
    crosswalk: Crosswalk | None = None,
) -> EndToEnd:
    """``annotations[i]`` are the system's for ``corpus.documents[i]``; ``crosswalk``: as for :func:`gold_sets`."""
    gold_mentions, gold_concepts = gold_sets(corpus, terminology, crosswalk)
    found_mentions, found_concepts = found_sets(corpus, annotations)
    return EndToEnd(len(corpus.documents), PRF.of(found_mentions, gold_mentions), PRF.of(found_concepts, gold_concepts))


def found_sets(corpus: Corpus, annotations: Sequence[Sequence[Annotation]]) -> tuple[set, set]:
    """What the system found, as :func:`gold_sets` gives the gold: (document, start, end, concept) and (document,
    concept); ``annotations[i]`` are its for ``corpus.documents[i]``."""
    mentions, concepts = set(), set()
    for (document_id, _), found in zip(corpus.documents, annotations, strict=True):
        for annotation in found:
            for concept in annotation.concepts:
                mentions.add((document_id, annotation.start, annotation.end, concept))
                concepts.add((document_id, concept))
    return mentions, concepts


def _taught_concepts(parts: tuple[tuple[str, ...], ...], terminology: Terminology) -> tuple[str, ...]:
    """What a training mention teaches, as it is scored (:func:`gold_sets`): one concept per part (a composite
    mention, "|": "breast and ovarian cancer"), the first of the part's alternative ids ("+") the terminology has;
    nothing for a nil mention."""
    if any(c.endswith("-1") for part in parts for c in part) or not all(parts):
        return ()
    return tuple(dict.fromkeys(_first_known(part, terminology) for part in parts))


def _first_known(ids: Sequence[str], terminology: Terminology) -> str:
    return next((known for c in ids if (known := terminology.resolve(c))), ids[0])


def learn_from_corpus(corpus: Corpus, terminology: Terminology, config: AnnotatorConfig | None = None) -> Lexicon:
    """The lexicon a training corpus teaches (:mod:`medlink.linking.annotation.lexicon`): its mention texts as
    spans of their own, and the names its documents show are seldom mentions."""
    documents = dict(corpus.documents)
    normalize = terminology.normalizer
    mentions = [
        (m.document_id, TrainingMention(m.start, m.end, normalize(documents[m.document_id][m.start : m.end]), taught))
        for m in corpus
        if m.document_id in documents
        and m.start is not None
        and m.end is not None
        and (taught := _taught_concepts(m.gold.parts, terminology))
    ]
    given = {mention.key for _, mention in mentions}
    # The documents also judge what the corpus lexicon teaches, so that they can over-rule it (``Lexicon.under``).
    shipped = lexicon_in_use(terminology, replace(config, lexicon=Lexicon())) if config is not None else Lexicon()
    judged = given | set(shipped.concepts)
    teach = replace(config or AnnotatorConfig(), lexicon=Lexicon(dict.fromkeys(judged, ()), frozenset()))
    found = {
        document_id: [(s.start, s.end, s.key) for s in find_spans(terminology, text, teach)]
        for document_id, text in documents.items()
    }
    return learn_lexicon(mentions, found)
