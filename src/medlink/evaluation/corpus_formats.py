"""Readers for annotated corpora, named ``FORMAT:PATH`` on the command line.

- ``pubtator``: NCBI-disease, BC5CDR. ``PMID|t|title``, ``PMID|a|abstract``, then
  ``PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids``; relation lines (``CID``) are ignored.
- ``biosyn``: BioSyn's processed ``.concept`` files, ``PMID||start|end||type||mention||ids``.
- ``cadec``: CODER's CADEC folds, ``id<TAB>mention`` (``train.txt``, ``test.txt``).
- ``chip-cdn``: CHIP-CDN JSON, ``[{"text", "normalized_result": "name##name"}]``; names resolve to codes through
  the ICD-10 KB TSV beside the file.
- ``tsv``: generic ``mention<TAB>id[|id…]`` with PubTator's ``|`` / ``+`` / ``-1`` conventions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus, Gold, GoldMention, parse_pubtator_ids, with_namespace
from medlink.terminology.diagnostics import SourceError
from medlink.terminology.readers.source_files import iter_lines, open_text

CorpusReader = Callable[..., Corpus]


def read_pubtator(path: Path, namespace: str | None = "MESH") -> Corpus:
    titles: dict[str, str] = {}
    abstracts: dict[str, str] = {}
    rows: list[tuple[int, list[str]]] = []
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        head, sep, text = line.partition("|")
        if sep and text[:2] in ("t|", "a|") and "\t" not in head:
            (titles if text[0] == "t" else abstracts)[head] = text[2:]
            continue
        values = line.split("\t")
        if len(values) == 4 and not values[1].isdigit():
            continue  # a relation line: PMID, relation type, two ids
        if len(values) < 6 or not values[1].isdigit() or not values[2].isdigit():
            raise SourceError(path, "expected 'PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ids'", number)
        rows.append((number, values))
    mentions = []
    for _number, values in rows:
        pmid = values[0]
        document = f"{titles.get(pmid, '')} {abstracts.get(pmid, '')}".strip() or None
        mentions.append(
            GoldMention(
                text=values[3],
                gold=parse_pubtator_ids(values[5], namespace),
                document_id=pmid,
                document=document,
                start=int(values[1]),
                end=int(values[2]),
                entity_type=values[4],
            )
        )
    documents = tuple(
        (pmid, f"{titles.get(pmid, '')} {abstracts.get(pmid, '')}".strip())
        for pmid in dict.fromkeys([*titles, *abstracts])
    )
    return Corpus(path.name, tuple(mentions), documents=documents)


def read_biosyn_concepts(path: Path, namespace: str | None = "MESH") -> Corpus:
    """One ``.concept`` file, or a folder of them (BioSyn writes one per document)."""
    files = sorted(path.glob("*.concept")) if path.is_dir() else [path]
    mentions = []
    for file in files:
        for number, line in iter_lines(file):
            if not line.strip():
                continue
            fields = line.split("||")
            if len(fields) != 5 or "|" not in fields[1]:
                raise SourceError(file, "expected 'PMID||start|end||type||mention||ids'", number)
            start, _, end = fields[1].partition("|")
            mentions.append(
                GoldMention(
                    text=fields[3],
                    gold=parse_pubtator_ids(fields[4], namespace),
                    document_id=fields[0],
                    start=int(start) if start.isdigit() else None,
                    end=int(end) if end.isdigit() else None,
                    entity_type=fields[2],
                )
            )
    return Corpus(path.name, tuple(mentions))


def read_cadec(path: Path, namespace: str | None = "SNOMEDCT") -> Corpus:
    mentions = []
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        identifier, sep, text = line.partition("\t")
        if not sep or not identifier.strip():
            raise SourceError(path, "expected 'id<TAB>mention'", number)
        mentions.append(GoldMention(text=csv_unquoted(text), gold=parse_pubtator_ids(identifier, namespace)))
    return Corpus(f"{path.parent.name}/{path.name}", tuple(mentions))


def csv_unquoted(field: str) -> str:
    """A field as CSV writers quote it (``"\"\"back labor\"\" pains"``, CADEC's and PsyTar's files) read back as
    its text (``"back labor" pains``); any other field as it is."""
    if len(field) >= 2 and field[0] == field[-1] == '"':
        return field[1:-1].replace('""', '"')
    return field


def read_mention_tsv(path: Path, namespace: str | None = None) -> Corpus:
    mentions = []
    for number, line in iter_lines(path):
        if not line.strip() or line.startswith("#"):
            continue
        text, sep, ids = line.partition("\t")
        if not sep:
            raise SourceError(path, "expected 'mention<TAB>id[|id…]'", number)
        mentions.append(GoldMention(text=csv_unquoted(text), gold=parse_pubtator_ids(ids.split("\t")[0], namespace)))
    return Corpus(path.name, tuple(mentions))


CHIP_KB = "icd10_beijing_clinical_v601.tsv"


def read_chip_cdn(path: Path, namespace: str | None = "CODE", kb: Path | None = None) -> Corpus:
    """CHIP-CDN gives normalized *names*; each becomes a part whose alternatives are every code with that name.

    About 5 % of the gold names are not in the KB that ships with the dataset; they become ``NAME:<name>`` ids,
    which no code can match, so such mentions count as errors for every system, and the corpus notes how many.
    """
    kb = kb or path.with_name(CHIP_KB)
    codes_of_name: dict[str, list[str]] = {}
    for _number, line in iter_lines(kb):
        code, _, rest = line.partition("\t")
        name = _unquote(rest.split("\t")[0])
        if code.strip() and name:
            codes_of_name.setdefault(name, []).append(with_namespace(code.strip(), namespace))
    with open_text(path) as handle:
        try:
            records = json.load(handle)
        except json.JSONDecodeError as error:
            raise SourceError(path, f"invalid JSON ({error.msg})", error.lineno) from None
    mentions, unresolved = [], 0
    for record in records:
        names = [_unquote(name) for name in str(record.get("normalized_result", "")).split("##") if _unquote(name)]
        parts = []
        for name in names:
            if name not in codes_of_name:
                unresolved += 1
            parts.append(codes_of_name.get(name, [f"NAME:{name}"]))
        mentions.append(GoldMention(text=record["text"], gold=Gold.of(parts)))
    notes = (f"{unresolved} gold names not in {kb.name} kept as unmatchable NAME: ids",) if unresolved else ()
    return Corpus(path.name, tuple(mentions), notes)


def _unquote(name: str) -> str:
    """The dataset's JSON keeps the CSV quotes around names that contain a comma."""
    return name.strip().strip('"').strip()


CORPUS_FORMATS: dict[str, CorpusReader] = {
    "pubtator": read_pubtator,
    "biosyn": read_biosyn_concepts,
    "cadec": read_cadec,
    "chip-cdn": read_chip_cdn,
    "tsv": read_mention_tsv,
}


def load_corpus(spec: str, entity_type: str | None = None, namespace: str | None = None) -> Corpus:
    """Read ``FORMAT:PATH`` (e.g. ``pubtator:../shared/data/corpora/ncbi-disease/NCBItestset_corpus.txt``)."""
    format_name, sep, location = spec.partition(":")
    if not sep or format_name not in CORPUS_FORMATS:
        raise MedlinkError(f"name a corpus as FORMAT:PATH with FORMAT one of {', '.join(CORPUS_FORMATS)}; got {spec!r}")
    path = Path(location)
    if not path.exists():
        raise SourceError(path, "file not found")
    reader = CORPUS_FORMATS[format_name]
    corpus = reader(path) if namespace is None else reader(path, namespace=namespace)
    return corpus.with_type(entity_type)
