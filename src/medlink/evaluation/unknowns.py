"""Simulated unknown terms (issue 44): names whose concept the linker lacks, and what it answers for them — nil, a
true ancestor (right) or a look-alike (wrong, and silent).

Three kinds: the names of MeSH supplementary records linked through the descriptors alone (right: the record's
mapped descriptors and their ancestors); the names of descriptors held out of the terminology and its index (right:
their ancestors); invented drug-like names, real stems recombined with INN affixes (right: nil). Every kind is split
in two halves by a hash of its key, so a form test calibrated on one half (``scripts/calibrate_default_form.py``,
``CALIBRATION``) is measured on the other (``benchmarks/unknown_terms.py``, ``MEASUREMENT``).
"""

from __future__ import annotations

import gzip
import random
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.linking import Linker, LinkResult
from medlink.linking.settings import LinkerConfig
from medlink.terminology import Terminology

CALIBRATION, MEASUREMENT = 0, 1
# The INN stems invented names are made with (the form test knows more: linking/mentions/form.py).
INVENTED_AFFIXES = (
    "ciclib",
    "gliptin",
    "glutide",
    "tinib",
    "zumab",
    "ximab",
    "parin",
    "prazole",
    "sartan",
    "statin",
    "tide",
    "mab",
    "olol",
    "pril",
    "vir",
    "cillin",
    "mycin",
    "oxacin",
    "dipine",
    "setron",
    "lukast",
)
NIL, ANCESTOR, LOOK_ALIKE = "nil", "ancestor", "look-alike"


def half_of(key: str) -> int:
    """Which half ``key`` (a concept id, a stem) belongs to, the same on every machine."""
    return zlib.crc32(key.encode("utf-8")) % 2


def outcome(result: LinkResult, right: set[str]) -> str:
    if not result.concepts:
        return NIL
    return ANCESTOR if set(result.concepts) <= right else LOOK_ALIKE


@dataclass(frozen=True)
class UnknownSet:
    """Mentions and, for each, the concepts that count as right for it (empty: only nil is right)."""

    mentions: tuple[str, ...]
    rights: tuple[frozenset[str], ...]

    def outcomes(self, results: Sequence[LinkResult]) -> list[str]:
        return [outcome(result, set(right)) for result, right in zip(results, self.rights, strict=True)]


def supplementary_names(records: Path, descriptors: Terminology, part: int, n: int, seed: int = 0) -> UnknownSet:
    """The preferred names of ``n`` supplementary records of one half (NLM's TSV: id, name, …, mapped descriptors)."""
    with gzip.open(records, "rt", encoding="utf-8") as lines:
        rows = [row for line in lines if len(row := line.rstrip("\n").split("\t")) >= 4 and half_of(row[0]) == part]
    sample = random.Random(seed).sample(rows, n)
    rights = []
    for row in sample:
        ids = (f"MESH:{d.strip().strip('*')}" for d in re.split(r"[,|]", row[3]) if d.strip())
        mapped = {i for i in ids if i in descriptors}
        rights.append(frozenset(mapped.union(*(descriptors.ancestors(m) for m in mapped))))
    return UnknownSet(tuple(row[1] for row in sample), tuple(rights))


def held_out_ids(terminology: Terminology, part: int, n: int, seed: int = 0) -> list[str]:
    return sorted(random.Random(seed).sample([i for i in terminology.ids if half_of(i) == part], n))


def held_out_names(terminology: Terminology, held: Sequence[str]) -> UnknownSet:
    """Every distinct name of each held-out concept; right: its ancestors."""
    mentions, rights = [], []
    for concept_id in held:
        right = frozenset(terminology.ancestors(concept_id))
        for name in dict.fromkeys(name.text for name in terminology.names_of(concept_id)):
            mentions.append(name)
            rights.append(right)
    return UnknownSet(tuple(mentions), tuple(rights))


def held_out_linker(
    terminology: Terminology, held: Sequence[str], base_index: Path, work: Path, config: LinkerConfig | None = None
) -> Linker:
    """A linker over ``terminology`` without the ``held`` concepts: its index rebuilt from ``base_index``'s vectors
    (nothing encoded again), with the base's nil threshold, term model and form test."""
    from medlink.index import VectorIndex, build_index, ontology_entries
    from medlink.index.update import update_manifest
    from medlink.linking.pipeline import encoder_name_of, encoder_of
    from medlink.terminology.store import save_terminology

    dropped = set(held)
    reduced = Terminology.from_concepts(
        [c for c in terminology if c.id not in dropped], normalizer=terminology.normalizer
    )
    save_terminology(reduced, work / "terms")
    base = VectorIndex.load(base_index)
    manifest, encoder = base.manifest, encoder_of(base)
    build_index(
        ontology_entries(reduced),
        encoder,
        work / "index",
        reduced.fingerprint(),
        reuse=[base_index],
        # the name resolved where the base index is, so that the new index reopens the same model
        origin={
            "encoder": encoder_name_of(base),
            "backend": manifest.origin.backend,
        },
    )
    update_manifest(
        work / "index",
        nil_threshold=manifest.nil_threshold,
        term_model=manifest.term_model,
        form_model=manifest.form_model,
    )
    return Linker.load(work / "index", terminology=work / "terms", config=config)


def invented_names(known: Terminology, part: int, n: int, seed: int = 0, minimum_stems: int = 1) -> UnknownSet:
    """Real drug names split into stem + INN affix, stems of one half recombined with the affixes into names no
    concept of ``known`` has ("kiaciclib", "plipaparin"); ValueError when ``known`` has fewer than
    ``minimum_stems`` such stems."""
    stems: set[str] = set()
    for text in known.names["text"]:
        word = text.lower()
        if word.isalpha():
            affix = next((a for a in INVENTED_AFFIXES if word.endswith(a) and len(word) > len(a) + 2), None)
            if affix is not None and half_of(stem := word[: -len(affix)]) == part:
                stems.add(stem)
    if len(stems) < max(1, minimum_stems):
        raise ValueError(f"{len(stems)} drug-name stems, fewer than {minimum_stems}: nothing to invent names from")
    ordered, rng = sorted(stems), random.Random(seed)
    invented: set[str] = set()
    for _ in range(50 * n):  # a small vocabulary may run out of new combinations
        name = rng.choice(ordered) + rng.choice(INVENTED_AFFIXES)
        if not known.lookup(name):
            invented.add(name)
            if len(invented) == n:
                break
    names = tuple(sorted(invented))
    return UnknownSet(names, tuple(frozenset() for _ in names))
