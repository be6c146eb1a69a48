"""Ids across terminology releases, for scoring corpora annotated with an older one. BC5CDR (2015) gives
supplementary records that NLM has since promoted to descriptors (olanzapine ``C076029`` → ``D000077152``); a
linker over today's MeSH answers the descriptor, and strict scoring calls that wrong. A crosswalk maps such an old id
to the id that took its place, so evaluation can report both figures: strict ids, and across releases.

A move is learned, never guessed at scoring time: an id the terminology does not know, whose annotated mention
texts are, in most of their occurrences, a term of one descriptor created after the corpus (a 9-digit MeSH UI:
``D000077152``, not ``D014150``) in the newer release's own term list. The shipped file
(``resources/mesh-crosswalk/``) is learned from BC5CDR's training and development annotations by
``scripts/build_mesh_crosswalk.py`` (never its test set); each row says its evidence. It moves only ids those
annotations use: an id first seen in other documents stays as it is, and counts strictly."""

from __future__ import annotations

import csv
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from medlink.errors import MedlinkError
from medlink.evaluation.corpus import Corpus, Gold

COLUMNS = ("old_id", "new_id", "evidence")
_NEW_DESCRIPTOR = re.compile(r"(?:MESH:)?D\d{9}")
MIN_SHARE = 0.5  # of an id's annotated mentions, those whose text is a term of the new descriptor


@dataclass(frozen=True)
class Crosswalk:
    """``moves``: old id → the id that took its place; ``evidence``: why, per old id; ``name``: where it came
    from (the file)."""

    moves: Mapping[str, str]
    evidence: Mapping[str, str]
    name: str

    def gold(self, gold: Gold) -> Gold:
        """``gold`` with every id the crosswalk moves replaced by its new id (resolve it through the terminology
        after this)."""
        return Gold.of([[self.moves.get(i, i) for i in part] for part in gold.parts])

    def moved_in(self, corpus: Corpus) -> int:
        """How many mentions of ``corpus`` have an id the crosswalk moves."""
        return sum(any(i in self.moves for i in m.gold.ids()) for m in corpus)

    def save(self, path: Path, header: str) -> None:
        """As TSV, ``header`` as its first comment line; written to a temporary file and renamed."""
        partial = path.with_name(f".{path.name}.partial")
        with open(partial, "w", encoding="utf-8", newline="") as stream:
            stream.write(f"# {header}\n")
            writer = csv.writer(stream, delimiter="\t", lineterminator="\n")
            writer.writerow(COLUMNS)
            writer.writerows((old, new, self.evidence.get(old, "")) for old, new in sorted(self.moves.items()))
        os.replace(partial, path)


def read_crosswalk(path: Path) -> Crosswalk:
    """A crosswalk TSV (``old_id, new_id, evidence``, ``#`` comment lines); a malformed line is refused naming
    the file and line."""
    moves: dict[str, str] = {}
    evidence: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise MedlinkError(f"{path}: cannot read the crosswalk ({error})") from None
    header_seen = False
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if tuple(fields) != COLUMNS:
                raise MedlinkError(f"{path}, line {number}: expected the header {' / '.join(COLUMNS)}")
            header_seen = True
            continue
        if len(fields) != len(COLUMNS) or not fields[0] or not fields[1]:
            raise MedlinkError(f"{path}, line {number}: expected old id, new id and evidence separated by tabs")
        if fields[0] in moves:
            raise MedlinkError(f"{path}, line {number}: {fields[0]} is moved twice")
        moves[fields[0]], evidence[fields[0]] = fields[1], fields[2]
    if not header_seen:
        raise MedlinkError(f"{path}: an empty crosswalk (no header {' / '.join(COLUMNS)})")
    return Crosswalk(moves, evidence, path.name)


def shipped_crosswalk() -> Crosswalk:
    """BC5CDR's MeSH ids (2015) to the MeSH 2024 descriptors that took their place."""
    from medlink.resources import resource_path

    return read_crosswalk(resource_path("mesh-crosswalk") / "bc5cdr-mesh2015-to-mesh2024.tsv")


def open_crosswalk(spec: str | None) -> Crosswalk | None:
    """``shipped`` (:func:`shipped_crosswalk`), ``none`` (or ``None``: no crosswalk), or a crosswalk TSV; a path
    that is no file is refused naming it (``eval --crosswalk``, a benchmark dataset's ``crosswalk``)."""
    if spec is None or spec.casefold() == "none":
        return None
    if spec.casefold() == "shipped":
        return shipped_crosswalk()
    path = Path(spec)
    if not path.is_file():
        why = "a folder, not a file" if path.is_dir() else "no such file"
        raise MedlinkError(f"{spec}: {why} (give 'shipped', 'none' or a crosswalk TSV)")
    return read_crosswalk(path)


def learn_crosswalk(
    corpora: Iterable[Corpus],
    knows: Callable[[str], bool],
    terms: Iterable[tuple[str, str]],
    normalize: Callable[[str], str],
) -> Crosswalk:
    """Moves for the ids of ``corpora`` that ``knows`` (the terminology) says are gone: ``terms`` are the newer
    release's (descriptor id, term) pairs, ``normalize`` the terminology's normalizer."""
    texts: dict[str, Counter[str]] = defaultdict(Counter)
    for corpus in corpora:
        for mention in corpus:
            for identifier in mention.gold.ids():
                if not identifier.endswith("-1") and not knows(identifier):
                    texts[identifier][normalize(mention.text)] += 1
    wanted = {text for counted in texts.values() for text in counted}
    holders: dict[str, set[str]] = defaultdict(set)
    for descriptor, term in terms:
        key = normalize(term)
        if key in wanted and _NEW_DESCRIPTOR.fullmatch(descriptor):
            holders[key].add(descriptor)
    moves, evidence = {}, {}
    for old, counted in sorted(texts.items()):
        votes: Counter[str] = Counter()
        for text, n in counted.items():
            if len(holders.get(text, ())) == 1:
                votes[next(iter(holders[text]))] += n
        if votes:
            new, n = votes.most_common(1)[0]
            total = sum(counted.values())
            if n > MIN_SHARE * total:
                moves[old] = new
                shown = ", ".join(f"{text!r} {count}" for text, count in counted.most_common(3))
                evidence[old] = f"{n} of {total} mentions are terms of {new} ({shown})"
    return Crosswalk(moves, evidence, "learned")
