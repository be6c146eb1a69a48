"""Terminology readers, chosen by format name; each converts one published format into :class:`Concept` records.

Readers are imported only when used. ``detect_format`` guesses a format from a file name, so most users never
name one.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError
from medlink.terminology.diagnostics import ReadReport
from medlink.terminology.records import Concept

Reader = Callable[..., Iterator[Concept]]


@dataclass(frozen=True)
class ReaderSpec:
    name: str
    target: str  # "module:function", imported on first use
    description: str
    patterns: tuple[str, ...]  # file-name patterns (lower case) that select this format

    def load(self) -> Reader:
        module, _, function = self.target.partition(":")
        return getattr(importlib.import_module(f"medlink.terminology.readers.{module}"), function)


READERS: dict[str, ReaderSpec] = {
    spec.name: spec
    for spec in (
        ReaderSpec("obo", "obo:read_obo", "OBO 1.4 ontology (hp.obo, doid.obo)", ("*.obo", "*.obo.gz")),
        ReaderSpec("ctd", "ctd:read_ctd", "CTD vocabulary TSV (CTD_diseases.tsv, CTD_chemicals.tsv)", ("ctd_*.tsv*",)),
        ReaderSpec(
            "biosyn",
            "biosyn_dictionary:read_biosyn_dictionary",
            "BioSyn dictionary 'id||name|synonym…'",
            ("medic_*.txt", "*dictionary*.txt"),
        ),
        ReaderSpec(  # before mesh-desc-tsv, whose pattern takes 'mesh_descriptor_terms.tsv' too
            "mesh-terms-tsv",
            "mesh_terms:read_mesh_terms_tsv",
            "NLM's MeSH descriptor term list TSV, with a header (DescriptorUI, TermName, LexicalTag…)",
            ("mesh*descriptor_terms*.tsv*",),
        ),
        ReaderSpec(
            "mesh-desc-tsv",
            "mesh_tsv:read_mesh_descriptors_tsv",
            "MeSH descriptors TSV: id, name, entry terms, tree numbers",
            ("mesh_desc*.tsv*",),
        ),
        ReaderSpec(
            "mesh-supp-tsv",
            "mesh_tsv:read_mesh_supplementary_tsv",
            "MeSH supplementary concepts TSV: id, name, synonyms, mapped descriptors",
            ("mesh_supp*.tsv*",),
        ),
        ReaderSpec(
            "mesh-xml",
            "mesh_xml:read_mesh_xml",
            "NLM MeSH XML (descYYYY.xml, suppYYYY.xml)",
            ("desc*.xml*", "supp*.xml*"),
        ),
        ReaderSpec("umls", "umls_rrf:read_umls_rrf", "UMLS RRF (META folder or MRCONSO.RRF)", ("mrconso.rrf*", "meta")),
        ReaderSpec(
            "drugbank", "drugbank:read_drugbank_vocabulary", "DrugBank open vocabulary CSV", ("drugbank*.csv*",)
        ),
        ReaderSpec("icd10cm", "icd10cm:read_icd10cm_tabular", "ICD-10-CM tabular list XML", ("icd10cm*tabular*.xml*",)),
        ReaderSpec(
            "code-table",
            "table:read_code_table",
            "code/name table (TSV or xlsx), hierarchy by code prefix",
            ("*.xlsx",),
        ),
        ReaderSpec("tsv", "table:read_table", "generic 'id<TAB>name[<TAB>kind]' TSV", ("*.tsv", "*.tsv.gz", "*.txt")),
        ReaderSpec("jsonl", "jsonl:read_jsonl", "generic JSON Lines, one concept per line", ("*.jsonl", "*.jsonl.gz")),
    )
}


def detect_format(path: Path) -> str:
    """The reader format for ``path`` from its name; raises with the list of formats when it cannot tell."""
    name = path.name.lower()
    if path.is_dir() and (path / "MRCONSO.RRF").exists():
        return "umls"
    for spec in READERS.values():
        if any(fnmatch.fnmatch(name, pattern) for pattern in spec.patterns):
            return spec.name
    raise MedlinkError(f"cannot tell the format of {path}; name it as FORMAT:PATH or with --format ({format_list()})")


def format_list() -> str:
    return ", ".join(READERS)


def read_source(path: Path, format_name: str | None, report: ReadReport, **options: Any) -> Iterator[Concept]:
    """Concepts of one source. Options a reader does not take (e.g. ``namespace`` for OBO) are ignored."""
    format_name = format_name or detect_format(path)
    spec = READERS.get(format_name)
    if spec is None:
        raise MedlinkError(f"unknown terminology format {format_name!r} (known: {format_list()})")
    reader = spec.load()
    return reader(path, report, **accepted_options(reader, options))


def accepted_options(function: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The options ``function`` takes, without the ones left unset."""
    accepted = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in accepted and value is not None}
