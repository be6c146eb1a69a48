"""Terminologies: one schema every source converts into, readers for published formats, a compiled store."""

from medlink.errors import MedlinkError
from medlink.terminology.borrowing import BorrowingReport, borrow_synonyms
from medlink.terminology.builder import TerminologyBuilder
from medlink.terminology.compile import SourceSpec, compile_terminology
from medlink.terminology.diagnostics import ReadReport, SourceError
from medlink.terminology.embedded import load_default_terminology
from medlink.terminology.records import Concept, Name, NameKind, Relation
from medlink.terminology.store import TerminologyFormatError, load_terminology, read_manifest, save_terminology
from medlink.terminology.terminology import NameMatch, SourceInfo, Terminology

__all__ = [
    "BorrowingReport",
    "Concept",
    "MedlinkError",
    "Name",
    "NameKind",
    "NameMatch",
    "ReadReport",
    "Relation",
    "SourceError",
    "SourceInfo",
    "SourceSpec",
    "Terminology",
    "TerminologyBuilder",
    "TerminologyFormatError",
    "borrow_synonyms",
    "compile_terminology",
    "load_default_terminology",
    "load_terminology",
    "read_manifest",
    "save_terminology",
]
