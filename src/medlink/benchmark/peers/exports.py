"""The terminology written as the peers read it: JSON Lines of concepts and names (Gilda, scispaCy, MedCAT) and a
UMLS release folder (QuickUMLS), each with any names added to concepts (training mentions as synonyms)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from medlink.terminology import Terminology

SEMANTIC_TYPE = "T047"  # the one type every exported concept gets: QuickUMLS filters on types, medlink has none


def names_of(terminology: Terminology, extra: Mapping[str, Sequence[str]]) -> Iterator[tuple[str, list[str]]]:
    """Each concept's id and names, the preferred name first, then its synonyms, then the added ones."""
    for concept in terminology:
        names = [concept.preferred_name, *(name.text for name in concept.names), *extra.get(concept.id, ())]
        yield concept.id, list(dict.fromkeys(names))


def write_terms(terminology: Terminology, path: Path, extra: Mapping[str, Sequence[str]]) -> None:
    """One line per concept: its id and names."""
    with path.open("w", encoding="utf-8") as out:
        for concept, names in names_of(terminology, extra):
            out.write(json.dumps({"id": concept, "names": names}, ensure_ascii=False) + "\n")


def write_umls(terminology: Terminology, mrconso: Path, extra: Mapping[str, Sequence[str]]) -> None:
    """The terminology as a UMLS release folder with made-up CUIs: MRCONSO rows written to ``mrconso`` (a
    temporary name the caller renames to ``MRCONSO.RRF`` last), and beside it MRSTY and ``ids.json`` mapping the
    CUIs back."""
    folder, cuis = mrconso.parent, {}
    mrsty = mrconso.with_name(f"{mrconso.name}.MRSTY")  # this writer's own temporary name too
    with mrsty.open("w", encoding="utf-8") as types, mrconso.open("w", encoding="utf-8") as conso:
        for number, (concept, names) in enumerate(names_of(terminology, extra), start=1):
            cui = f"C{number:07d}"
            cuis[cui] = concept
            types.write(f"{cui}|{SEMANTIC_TYPE}|A1.2|Disease or Syndrome|AT{number}|256|\n")
            for position, name in enumerate(names):
                text = name.replace("|", " ")
                preferred = "Y" if position == 0 else "N"
                conso.write(
                    f"{cui}|ENG|P|L{number}|PF|S{number}_{position}|{preferred}|A{number}_{position}||||"
                    f"MEDLINK|{'PT' if position == 0 else 'SY'}|{concept}|{text}|0|N|256|\n"
                )
    mrsty.replace(folder / "MRSTY.RRF")
    (folder / "ids.json").write_text(json.dumps(sorted(cuis.items())), encoding="utf-8")
