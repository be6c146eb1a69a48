"""A synthetic UMLS release of any size, for scale tests and benchmarks (the real UMLS is licensed, so not here).

``write_release(folder, pool, concepts=4_000_000, rows=12_000_000)`` writes ``MRCONSO.RRF``, ``MRSTY.RRF`` and
``MRREL.RRF`` in the layouts of the UMLS Reference Manual, deterministic by seed. Names are real terminology text:
the ``pool`` holds real concepts (preferred name, synonyms, parent) read from open terminologies
(:func:`pool_from_terminologies`); concept ``k`` takes the names of pool entry ``k mod len(pool)``, and the ``n``-th
reuse of a pool entry appends the ``n``-th qualifier (", chronic") so that every concept's names are its own. The
proportions follow a real release: about a fifth of the rows in other languages, a few percent suppressed, several
sources and term types per concept (the same string from several sources, and the forms sources give a name:
capitals, "(disorder)", "NOS"), ``PAR``/``CHD``
pairs for the hierarchy, ``RO`` relations, and a few hierarchy cycles of the kind real releases carry.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from medlink.terminology import Terminology

# Qualifiers as UMLS sources write them; the n-th reuse of a pool concept gets the n-th.
QUALIFIERS = (
    "chronic",
    "acute",
    "left",
    "right",
    "bilateral",
    "recurrent",
    "congenital",
    "secondary",
    "primary",
    "familial",
    "juvenile",
    "adult onset",
    "severe",
    "mild",
    "in remission",
    "unspecified",
    "late onset",
    "drug-induced",
    "postoperative",
    "of childhood",
    "localized",
    "generalized",
    "intermittent",
    "persistent",
    "subacute",
    "early onset",
    "refractory",
    "hereditary",
    "idiopathic",
    "iatrogenic",
    "traumatic",
    "neonatal",
    "maternal",
    "focal",
    "diffuse",
    "moderate",
    "stage I",
    "stage II",
    "stage III",
    "stage IV",
)
_SOURCES = (
    ("SNOMEDCT_US", "PT"),
    ("MSH", "MH"),
    ("NCI", "PT"),
    ("MDR", "LLT"),
    ("MEDCIN", "PT"),
    ("RXNORM", "IN"),
    ("LNC", "LN"),
    ("ICD10CM", "PT"),
    ("HPO", "PT"),
    ("OMIM", "PT"),
)
_SYNONYM_TTYS = ("SY", "ET", "SY", "ETAL", "FN", "ACR", "AB")
_LANGUAGES = ("SPA", "FRE", "GER", "DUT", "POR", "ITA", "JPN", "CZE")
_SEMANTIC_TYPES = (
    ("T047", "Disease or Syndrome"),
    ("T121", "Pharmacologic Substance"),
    ("T109", "Organic Chemical"),
    ("T191", "Neoplastic Process"),
    ("T184", "Sign or Symptom"),
    ("T033", "Finding"),
    ("T061", "Therapeutic or Preventive Procedure"),
    ("T023", "Body Part"),
)
# How sources write a name in MRCONSO: SNOMED CT's semantic tags, MedDRA's and ICD's NOS, capitals, lower case.
_VARIANTS: tuple[Callable[[str], str], ...] = (
    str.upper,
    lambda name: f"{name} (disorder)",
    lambda name: f"{name} NOS",
    str.lower,
    lambda name: f"{name} (finding)",
    lambda name: f"{name}, unspecified",
    lambda name: f"{name} [Ambiguous]",
    lambda name: f"{name} (substance)",
    lambda name: f"Other {name}",
    lambda name: f"{name} (morphologic abnormality)",
)
_RELAS = ("may_treat", "has_finding_site", "associated_with", "has_causative_agent", "clinically_similar")


@dataclass(frozen=True)
class PoolConcept:
    """A real concept lent to the synthetic release: its names and the pool position of one parent (or -1)."""

    names: tuple[str, ...]
    parent: int = -1


@dataclass(frozen=True)
class ReleaseShape:
    """The proportions of a release (defaults near UMLS 2024AA's MRCONSO)."""

    other_language: float = 0.2
    suppressed: float = 0.05
    relations_per_concept: float = 0.5
    cycles_per_million: int = 20


@dataclass(frozen=True)
class ReleaseSummary:
    concepts: int
    mrconso_rows: int
    mrsty_rows: int
    mrrel_rows: int


def pool_from_terminologies(terminologies: Iterable[Terminology]) -> list[PoolConcept]:
    """Real concepts (every name, first parent) from compiled or read terminologies, in their order."""
    pool: list[PoolConcept] = []
    for terminology in terminologies:
        offset = len(pool)
        rows = {concept_id: row for row, concept_id in enumerate(terminology.ids)}
        for concept in terminology:
            parent = next((rows[p] for p in concept.parents if p in rows), -1)
            pool.append(PoolConcept(tuple(name.text for name in concept.names), offset + parent if parent >= 0 else -1))
    return pool


def write_release(
    folder: Path | str,
    pool: Sequence[PoolConcept],
    concepts: int,
    rows: int,
    seed: int = 0,
    shape: ReleaseShape = ReleaseShape(),
) -> ReleaseSummary:
    """Write MRCONSO/MRSTY/MRREL for ``concepts`` concepts and about ``rows`` MRCONSO rows (at least one per
    concept), sorted by CUI as NLM ships them."""
    if not pool:
        raise ValueError("the pool of real concepts is empty")
    if concepts < 1 or rows < concepts:
        raise ValueError(f"need at least one MRCONSO row per concept ({concepts:,} concepts, {rows:,} rows asked)")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    mean_extra = rows / concepts - 1  # rows beyond the preferred one, drawn per concept around this mean
    counts = {"MRCONSO": 0, "MRSTY": 0, "MRREL": 0}
    atom = 0
    with (
        open(folder / "MRCONSO.RRF", "w", encoding="utf-8", newline="\n") as mrconso,
        open(folder / "MRSTY.RRF", "w", encoding="utf-8", newline="\n") as mrsty,
    ):
        for k in range(concepts):
            base = pool[k % len(pool)]
            reuse = k // len(pool)
            qualifier = f", {_qualifier(reuse - 1)}" if reuse else ""
            cui = _cui(k)
            extra = _geometric(rng, mean_extra)
            sab, _ = _SOURCES[k % len(_SOURCES)]
            lines = [_conso_row(cui, "ENG", "P", "PF", "Y", atom, sab, "PT", k, base.names[0] + qualifier, "N")]
            atom += 1
            for j in range(extra):
                lap, position = divmod(j + 1, len(base.names))
                text = _variant(base.names[position], lap) + qualifier
                other_sab, _ = _SOURCES[rng.randrange(len(_SOURCES))]
                language = _LANGUAGES[rng.randrange(len(_LANGUAGES))] if rng.random() < shape.other_language else "ENG"
                suppress = "OEY"[rng.randrange(3)] if rng.random() < shape.suppressed else "N"
                tty = _SYNONYM_TTYS[rng.randrange(len(_SYNONYM_TTYS))]
                lines.append(
                    _conso_row(
                        cui,
                        language,
                        "S",
                        "PF" if j % 2 else "VO",
                        "N" if j % 3 else "Y",
                        atom,
                        other_sab,
                        tty,
                        k,
                        text,
                        suppress,
                    )
                )
                atom += 1
            mrconso.write("".join(lines))
            counts["MRCONSO"] += len(lines)
            tui, name = _SEMANTIC_TYPES[(k % len(pool)) % len(_SEMANTIC_TYPES)]
            mrsty.write(f"{cui}|{tui}|A1.2.{tui[1:]}|{name}|AT{k:08d}||\n")
            counts["MRSTY"] += 1
    counts["MRREL"] = _write_relations(folder, pool, concepts, rng, shape)
    return ReleaseSummary(concepts, counts["MRCONSO"], counts["MRSTY"], counts["MRREL"])


def _write_relations(
    folder: Path, pool: Sequence[PoolConcept], concepts: int, rng: random.Random, shape: ReleaseShape
) -> int:
    """MRREL: each concept's parent both ways (with a cycle now and then, as releases have), and other relations
    drawn at the shape's rate; returns the rows written. Drawn after MRCONSO from the same generator."""
    written = 0
    with open(folder / "MRREL.RRF", "w", encoding="utf-8", newline="\n") as mrrel:
        relation = 0
        cycle_every = max(1, 1_000_000 // shape.cycles_per_million) if shape.cycles_per_million else 0
        for k in range(concepts):
            parent = _parent(k, pool, concepts)
            lines = []
            if parent is not None:
                lines.append(_rel_row(_cui(k), "PAR", _cui(parent), "isa", relation))
                lines.append(_rel_row(_cui(parent), "CHD", _cui(k), "inverse_isa", relation + 1))
                relation += 2
                if cycle_every and k % cycle_every == cycle_every - 1:
                    lines.append(_rel_row(_cui(parent), "PAR", _cui(k), "", relation))  # a cycle, as releases have
                    relation += 1
            if rng.random() < shape.relations_per_concept:
                other = rng.randrange(concepts)
                if other != k:
                    lines.append(_rel_row(_cui(k), "RO", _cui(other), _RELAS[rng.randrange(len(_RELAS))], relation))
                    relation += 1
            mrrel.write("".join(lines))
            written += len(lines)
    return written


def _variant(name: str, lap: int) -> str:
    """The name as the ``lap``-th source writes it, once the pool concept's own names are used up."""
    return _VARIANTS[lap % len(_VARIANTS)](name) if lap else name


def _geometric(rng: random.Random, mean: float) -> int:
    """Extra rows for one concept: geometric with the given mean (few concepts have many names, as in MRCONSO)."""
    if mean <= 0:
        return 0
    return int(math.log(1.0 - rng.random()) / math.log(mean / (mean + 1)))


def _qualifier(n: int) -> str:
    """The n-th qualifier; past the list, numbered ("chronic 2") so that names stay distinct at any size."""
    base = QUALIFIERS[n % len(QUALIFIERS)]
    return base if n < len(QUALIFIERS) else f"{base} {n // len(QUALIFIERS) + 1}"


def _parent(k: int, pool: Sequence[PoolConcept], concepts: int) -> int | None:
    """A qualified concept is under its unqualified one; an unqualified one under its pool parent."""
    if k >= len(pool):
        return k % len(pool)
    parent = pool[k].parent
    return parent if 0 <= parent < concepts and parent != k else None


def _cui(k: int) -> str:
    return f"C{k:07d}"


def _conso_row(
    cui: str, lat: str, ts: str, stt: str, ispref: str, atom: int, sab: str, tty: str, k: int, text: str, suppress: str
) -> str:
    # CUI|LAT|TS|LUI|STT|SUI|ISPREF|AUI|SAUI|SCUI|SDUI|SAB|TTY|CODE|STR|SRL|SUPPRESS|CVF|
    return (
        f"{cui}|{lat}|{ts}|L{atom:08d}|{stt}|S{atom:08d}|{ispref}|A{atom:09d}||{k}||{sab}|{tty}|{k}|{text}|0|"
        f"{suppress}||\n"
    )


def _rel_row(cui1: str, rel: str, cui2: str, rela: str, number: int) -> str:
    # CUI1|AUI1|STYPE1|REL|CUI2|AUI2|STYPE2|RELA|RUI|SRUI|SAB|SL|RG|DIR|SUPPRESS|CVF|
    return f"{cui1}||CUI|{rel}|{cui2}||CUI|{rela}|R{number:09d}||SNOMEDCT_US|SNOMEDCT_US|||N||\n"
