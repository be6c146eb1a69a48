"""What a peer is given besides the terminology, alike for linking and annotation: the training mentions as
synonyms of their concepts (the rows "with training mentions"), and for MedCAT the texts it learns its vocabulary
and context vectors from, without their labels."""

from __future__ import annotations

from medlink.benchmark.peers.isolated import PeerInput
from medlink.evaluation.corpus import Corpus
from medlink.terminology import Terminology


def training_names(train: Corpus, terminology: Terminology) -> dict[str, list[str]]:
    """Each mention with one concept, as a name of that concept (the first of its ids the terminology has):
    what Gilda's terms, QuickUMLS's MRCONSO rows, scispaCy's aliases and MedCAT's CDB names can take."""
    names: dict[str, list[str]] = {}
    for text, ids in train.labelled_pairs():
        concept = next((found for found in map(terminology.resolve, ids) if found), None)
        if concept is not None and text not in names.setdefault(concept, []):
            names[concept].append(text)
    return names


def unlabelled_texts(corpus: Corpus, train: Corpus | None) -> list[str]:
    """The training documents; where there are none, the test documents, and where those are not given either
    (mention-only corpora), the test mentions' texts. MedCAT's own workflow trains without labels on the notes it
    will annotate, so reading the test texts is its documented use, not a leak of their labels."""
    for source in (train, corpus):
        if source is not None and source.documents:
            return [text for _, text in source.documents]
    return list(dict.fromkeys(mention.text for mention in corpus))


def peer_input(
    system: str, corpus: Corpus, train: Corpus | None, terminology: Terminology, mentions: bool, task: str
) -> PeerInput:
    """``mentions``: the row with training mentions (a dataset without a training corpus gives none)."""
    extra = training_names(train, terminology) if mentions and train is not None else None
    texts = unlabelled_texts(corpus, train) if system == "medcat" else []
    return PeerInput(extra, texts, task)
