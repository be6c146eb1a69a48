"""QuickUMLS (``medspacy-quickumls`` 3.2) run offline as its own sources allow:

- its database is built by its installer's own functions (``extract_from_mrconso``, ``parse_and_encode_ngrams``,
  and the flags its ``main`` writes), from the terminology exported as MRCONSO/MRSTY, with its README's ``-L -U``
  (lower case, unicode normalized); ``main`` itself is not called, because its only download is a spaCy model that
  the build never uses (``install_spacy``), and it stops at an ``input()`` prompt;
- NLTK's English stop words come from a file (``NLTK_DATA``): the list NLTK's ``stopwords`` corpus holds, which
  QuickUMLS would otherwise ``nltk.download``;
- the tokenizer is a blank English spaCy pipeline (``spacy_component=True``, then ``.nlp = spacy.blank("en")``):
  no part-of-speech tags, so its determiner and preposition rules never fire (a deviation, stated in the report);
- matching is its ``match`` with its defaults (Jaccard, threshold 0.7, window 5, best match; ``match`` ignores the
  ``best_match`` and ``ignore_syntax`` it is given, upstream issue #74, so none are given).
"""

from __future__ import annotations

import json
import os
import shutil
from argparse import Namespace
from pathlib import Path
from typing import Any

BUILD = 1  # the recipe below; raise it when the build changes, so that databases built before are not loaded
STOPWORDS = Path(__file__).with_name("nltk-stopwords-english.txt")


def build(request: dict[str, Any], concepts: list[dict[str, Any]], into: Path) -> None:
    from quickumls.install import extract_from_mrconso, parse_and_encode_ngrams

    database = into / "quickumls"
    database.mkdir()
    opts = Namespace(lowercase=True, normalize_unicode=True, language="ENG", database_backend="unqlite")
    for flag in ("normalize-unicode.flag", "lowercase.flag"):
        (database / flag).touch()
    (database / "language.flag").write_text(opts.language)
    (database / "database_backend.flag").write_text(opts.database_backend)
    umls = Path(request["umls"])
    rows = extract_from_mrconso(str(umls / "MRCONSO.RRF"), str(umls / "MRSTY.RRF"), opts)
    parse_and_encode_ngrams(
        rows, str(database / "umls-simstring.db"), str(database / "cui-semtypes.db"), opts.database_backend
    )
    stopwords = into / "nltk_data" / "corpora" / "stopwords"
    stopwords.mkdir(parents=True)
    shutil.copyfile(STOPWORDS, stopwords / "english")


def _matcher(request: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    built = Path(request["built"])
    os.environ["NLTK_DATA"] = str(built / "nltk_data")  # read when nltk is first imported
    import nltk
    from quickumls import QuickUMLS

    import spacy

    nltk.data.path.insert(0, str(built / "nltk_data"))  # in case something imported nltk before
    matcher = QuickUMLS(str(built / "quickumls"), spacy_component=True)
    matcher.nlp = spacy.blank("en")
    cui_to_id = dict(json.loads(Path(request["umls"], "ids.json").read_text(encoding="utf-8")))
    return matcher, cui_to_id


def linker(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    matcher, cui_to_id = _matcher(request)

    def rank(mentions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        answers = []
        for mention in mentions:
            # its own order: the best group first (similarity, then length), within it similarity + preferred
            found = [match for group in matcher.match(mention["text"]) for match in group]
            ranked = list(dict.fromkeys(cui_to_id[match["cui"]] for match in found))
            answers.append({"concepts": ranked[:1], "ranked": ranked})
        return answers

    return rank


def annotator(request: dict[str, Any], concepts: list[dict[str, Any]]) -> Any:
    matcher, cui_to_id = _matcher(request)

    def spans(documents: list[dict[str, Any]]) -> list[list[list[Any]]]:
        found = []
        for document in documents:
            groups = matcher.match(document["text"])  # best match: each group's candidates, best first
            found.append([[g[0]["start"], g[0]["end"], cui_to_id[g[0]["cui"]]] for g in groups if g])
        return found

    return spans
