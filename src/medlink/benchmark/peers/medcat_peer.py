"""MedCAT v2 (``medcat`` 2.9) built offline over the terminology, as its own sources allow:

- the concept database from the CDB CSV schema (``cui,name,ontologies,name_status,type_ids``) by ``CDBMaker
  .prepare_csvs``: each concept's first name with status ``P``, its others ``A`` (MedCAT's default);
- the ``Vocab`` its context linker needs from word2vec (gensim) over the given texts in MedCAT's own tokenization,
  as v1's ``MakeVocab`` did (300 dimensions, window 10), but every word kept (``min_count`` 1) and 10 epochs: these
  corpora are ~10^5 tokens, where v1's ``min_count`` 10 would leave most words without a vector; v2 has no builder;
- ``trainer.train_unsupervised`` over the same texts (its defaults: one epoch), seeded;
- everything else its defaults: the regex tokenizer, spell check, names of 3 characters or more, similarity 0.25.

A mention is linked as MedCAT links it in its document (its context linker reads the words around it): the entity
MedCAT finds over the mention's span; where it finds none there, or the mention has no document, the mention's
text alone. ``MEDCAT_DISABLE_VERSION_CHECK`` is set before the import: MedCAT otherwise asks PyPI for a release.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

BUILD = 1  # the recipe below; raise it when the build changes, so that models built before are not loaded
PACK = "medcat-pack"


def build(request: dict[str, Any], concepts: list[dict[str, Any]], into: Path) -> None:
    os.environ["MEDCAT_DISABLE_VERSION_CHECK"] = "true"
    import logging

    import numpy
    import pandas
    from medcat.cat import CAT
    from medcat.config import Config
    from medcat.model_creation.cdb_maker import CDBMaker

    config = Config()
    config.general.log_level = logging.WARNING
    rows = []
    for concept in concepts:
        names = list(dict.fromkeys(name.replace("|", " ") for name in concept["names"]))
        ontology = concept["id"].partition(":")[0]
        rows.append((concept["id"], names[0], ontology, "P", ""))
        if names[1:]:  # the synonyms in one row, by its multi-name separator "|"
            rows.append((concept["id"], "|".join(names[1:]), ontology, "A", ""))
    maker = CDBMaker(config)
    # a list of frames: prepare_csvs iterates what it is given, and a frame spares names with commas CSV quoting
    cdb = maker.prepare_csvs([pandas.DataFrame(rows, columns=["cui", "name", "ontologies", "name_status", "type_ids"])])
    with open(request["texts"], encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines]
    vocab = _vocab(maker.pipeline.tokenizer_with_tag, texts)
    cat = CAT(cdb, vocab, config)
    random.seed(0)
    numpy.random.seed(0)  # training samples names and negatives at random
    cat.trainer.train_unsupervised(texts)
    cat.save_model_pack(str(into), pack_name=PACK, add_hash_to_pack_name=False, make_archive=False)


def _vocab(tokenizer: Any, texts: list[str]) -> Any:
    from gensim.models import Word2Vec
    from medcat.vocab import Vocab

    sentences = [[t.base.lower for t in tokenizer(text) if not t.is_punctuation] for text in texts]
    vectors = Word2Vec(sentences, vector_size=300, window=10, min_count=1, epochs=10, workers=1, seed=1).wv
    vocab = Vocab()
    for word, count in Counter(word for sentence in sentences for word in sentence).items():
        vocab.add_word(word, cnt=count, vec=vectors[word] if word in vectors.key_to_index else None)
    vocab.init_cumsums()  # v2's negative-sampling table (v1's unigram table)
    return vocab


class _Found:
    """MedCAT's entities, its concept ids spelt as the terminology does (its CDB upper-cases them)."""

    def __init__(self, request: dict[str, Any], concepts: list[dict[str, Any]]) -> None:
        os.environ["MEDCAT_DISABLE_VERSION_CHECK"] = "true"
        from medcat.cat import CAT

        self.cat = CAT.load_model_pack(str(Path(request["built"]) / PACK))
        self.ids = {concept["id"].upper(): concept["id"] for concept in concepts}
        self.documents: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, text: str) -> list[dict[str, Any]]:
        entities = self.cat.get_entities(text)["entities"].values()
        return [{**e, "cui": self.ids.get(e["cui"], e["cui"])} for e in entities]

    def in_document(self, document: str) -> list[dict[str, Any]]:
        if document not in self.documents:
            self.documents = {document: self(document)}  # mentions come document by document: keep the last
        return self.documents[document]


def linker(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    found = _Found(request, concepts)

    def entities_of(mention: dict[str, Any]) -> list[dict[str, Any]]:
        start, end = mention.get("start"), mention.get("end")
        if mention.get("document") and start is not None and end is not None:
            over = [e for e in found.in_document(mention["document"]) if e["start"] < end and start < e["end"]]
            if over:  # the entity over the mention's span; the closest in extent first
                return sorted(over, key=lambda e: (abs(e["start"] - start) + abs(e["end"] - end), -e["acc"]))
        return sorted(found(mention["text"]), key=lambda e: (-e["context_similarity"], e["start"] - e["end"]))

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for mention in mentions:
            ranked = list(dict.fromkeys(entity["cui"] for entity in entities_of(mention)))
            answers.append({"concepts": ranked[:1], "ranked": ranked})
        return answers

    return rank


def annotator(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    found = _Found(request, concepts)

    def spans(documents: list[dict[str, Any]]) -> list[list[list[Any]]]:
        return [[[e["start"], e["end"], e["cui"]] for e in found(d["text"])] for d in documents]

    return spans
