"""Documents in and annotations out, for ``medlink annotate``.

Input, by extension (or a ``FORMAT:`` prefix): ``.txt`` (the whole file is one document, named after the file),
``.jsonl`` (``{"id", "text"}`` per line), ``pubtator`` (``.pubtator``: title and abstract of each document) and
``bioc`` (``.xml``: BioC passages, joined at their offsets). Output: ``jsonl`` (``{"id", "annotations": [...]}``),
``pubtator``, ``bioc`` (XML) and ``brat`` (standoff: a folder with ``ID.txt`` and ``ID.ann`` per document).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from medlink.linking.annotation.annotator import Annotation
from medlink.serve.text_checks import NOT_TEXT, is_text
from medlink.terminology.diagnostics import SourceError
from medlink.terminology.readers.source_files import iter_lines, open_binary

OUTPUT_FORMATS = ("jsonl", "pubtator", "bioc", "brat")
PUBTATOR_NAMESPACE = "MESH:"  # PubTator writes MeSH ids bare


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    title_end: int | None = None  # where a PubTator title ends (its abstract starts one character later)


def read_documents(spec: str) -> Iterator[Document]:
    """The documents of ``FORMAT:PATH`` or a path whose format its extension tells."""
    kind, _, rest = spec.partition(":")
    if rest and kind in ("txt", "jsonl", "pubtator", "bioc"):
        path = Path(rest)
    else:
        path = Path(spec)
        name = path.name.lower().removesuffix(".gz")
        kind = (
            "jsonl"
            if name.endswith(".jsonl")
            else "pubtator"
            if name.endswith((".pubtator", ".pubtator.txt"))
            else "bioc"
            if name.endswith(".xml")
            else "txt"
        )
    if kind == "txt":
        yield Document(path.stem, _text_file(path))
    elif kind == "jsonl":
        yield from _jsonl(path)
    elif kind == "pubtator":
        yield from _pubtator(path)
    else:
        yield from _bioc(path)


def _text_file(path: Path) -> str:
    """A whole text file in UTF-8 (gzip-compressed or not); bytes that are not UTF-8 are named with their line."""
    with open_binary(path) as stream:
        data = stream.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SourceError(path, f"not UTF-8 text: byte 0x{data[error.start]:02x} ({error.reason})", line) from None


def _jsonl(path: Path) -> Iterator[Document]:
    for number, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceError(path, f"not JSON ({error.msg})", number) from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise SourceError(path, 'expected {"id": ..., "text": "..."}', number)
        if not is_text(row["text"]):
            raise SourceError(path, f"its text {NOT_TEXT}", number)
        yield Document(str(row.get("id", number)), row["text"])


def _pubtator(path: Path) -> Iterator[Document]:
    titles: dict[str, str] = {}
    abstracts: dict[str, str] = {}
    for _, line in iter_lines(path):
        head, sep, text = line.partition("|")
        if sep and text[:2] in ("t|", "a|") and "\t" not in head:
            (titles if text[0] == "t" else abstracts)[head] = text[2:]
    for pmid in dict.fromkeys([*titles, *abstracts]):
        title = titles.get(pmid, "")
        yield Document(pmid, f"{title} {abstracts.get(pmid, '')}".rstrip(), len(title))


def _bioc(path: Path) -> Iterator[Document]:
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        raise SourceError(path, f"not BioC XML ({error})", error.position[0]) from None
    for document in root.iter("document"):
        text = ""
        for passage in document.iter("passage"):
            offset = int(passage.findtext("offset") or len(text))
            text = text.ljust(offset) + (passage.findtext("text") or "")
        yield Document(document.findtext("id") or str(len(text)), text)


def write_annotations(
    documents: Sequence[Document],
    annotations: Sequence[Sequence[Annotation]],
    kind: str,
    stream: IO[str] | None,
    folder: Path | None = None,
    entity_type: str | None = None,
) -> None:
    """Write in ``kind``; ``brat`` writes files into ``folder``, the others to ``stream``."""
    label = entity_type or "Concept"
    pairs = list(zip(documents, annotations, strict=True))
    if kind == "jsonl":
        assert stream is not None
        for document, found in pairs:
            stream.write(
                json.dumps({"id": document.id, "annotations": [a.to_dict() for a in found]}, ensure_ascii=False) + "\n"
            )
    elif kind == "pubtator":
        assert stream is not None
        for document, found in pairs:
            end = document.title_end if document.title_end is not None else len(document.text)
            title, abstract = _one_line(document.text[:end]), _one_line(document.text[end + 1 :])
            stream.write(f"{document.id}|t|{title}\n{document.id}|a|{abstract}\n")
            for a in found:
                ids = "|".join(c.removeprefix(PUBTATOR_NAMESPACE) for c in a.concepts)
                stream.write(f"{document.id}\t{a.start}\t{a.end}\t{_one_line(a.text)}\t{label}\t{ids}\n")
            stream.write("\n")
    elif kind == "bioc":
        assert stream is not None
        stream.write(_bioc_xml(pairs, label))
    elif kind == "brat":
        assert folder is not None
        folder.mkdir(parents=True, exist_ok=True)
        for document, found in pairs:
            (folder / f"{document.id}.txt").write_text(document.text, encoding="utf-8")
            lines = []
            for number, a in enumerate(found, start=1):
                pieces = _lines_of(document.text, a.start, a.end)
                offsets = ";".join(f"{start} {end}" for start, end in pieces)
                lines.append(
                    f"T{number}\t{label} {offsets}\t{_one_line(' '.join(document.text[s:e] for s, e in pieces))}"
                )
                named = zip(a.concepts, a.preferred_names, strict=False)
                lines += [f"N{number}_{i}\tReference T{number} {c}\t{name}" for i, (c, name) in enumerate(named, 1)]
                if a.negated or a.uncertain:
                    lines.append(f"A{number}\t{'Negated' if a.negated else 'Uncertain'} T{number}")
            (folder / f"{document.id}.ann").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    else:
        raise ValueError(f"unknown output format {kind!r} ({', '.join(OUTPUT_FORMATS)})")


# every character that ends a line for str.splitlines (and so for PubTator and brat readers that use it)
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_FLAT = str.maketrans(_LINE_BREAKS + "\t", " " * (len(_LINE_BREAKS) + 1))
_ONE_LINE = re.compile(f"[^{re.escape(_LINE_BREAKS)}]+")


def _one_line(text: str) -> str:
    """``text`` with line breaks and tabs as spaces, one for one: a PubTator line holds neither, and the offsets still
    count the same characters (a note's lines, a mention across them)."""
    return text.translate(_FLAT)


def _lines_of(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The pieces of ``text[start:end]`` on each of its lines, without the blanks about them: brat writes a mention
    across a line break as one fragment per line ("T1 Disease 8 14;15 33")."""
    pieces = []
    for line in _ONE_LINE.finditer(text, start, end):
        written = line.group()
        first = line.start() + len(written) - len(written.lstrip())
        last = line.end() - len(written) + len(written.rstrip())
        if first < last:
            pieces.append((first, last))
    return pieces


# what XML 1.0 cannot hold (control characters, lone surrogates, U+FFFE/U+FFFF) and a carriage return, which
# every XML parser reads as a line feed, dropping the "\r" of "\r\n" and so shifting every offset after it
_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\r\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` as BioC can carry it, one character for one so that the offsets still hold."""
    return _NOT_IN_XML.sub(" ", text)


def _bioc_xml(pairs: list[tuple[Document, Sequence[Annotation]]], label: str) -> str:
    collection = ElementTree.Element("collection")
    ElementTree.SubElement(collection, "source").text = "medlink"
    number = 0
    for document, found in pairs:
        node = ElementTree.SubElement(collection, "document")
        ElementTree.SubElement(node, "id").text = document.id
        passage = ElementTree.SubElement(node, "passage")
        ElementTree.SubElement(passage, "offset").text = "0"
        ElementTree.SubElement(passage, "text").text = _xml_text(document.text)
        for a in found:
            number += 1
            annotation = ElementTree.SubElement(passage, "annotation", id=str(number))
            infons = {
                "type": label,
                "identifier": ",".join(a.concepts),
                "negated": str(a.negated).lower(),
                "uncertain": str(a.uncertain).lower(),
                "stage": a.stage,
            }
            for key, value in infons.items():
                ElementTree.SubElement(annotation, "infon", key=key).text = value
            ElementTree.SubElement(annotation, "location", offset=str(a.start), length=str(a.end - a.start))
            ElementTree.SubElement(annotation, "text").text = _xml_text(a.text)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(collection, encoding="unicode") + "\n"
