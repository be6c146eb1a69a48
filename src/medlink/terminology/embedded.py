"""The terminology embedded in medlink: the MeSH descriptors shipped in ``medlink.resources``."""

from __future__ import annotations

from medlink.resources import default_terminology_path
from medlink.terminology.store import load_terminology
from medlink.terminology.terminology import Terminology


def load_default_terminology() -> Terminology:
    """The MeSH descriptors shipped with medlink, compiled (loads in about a second)."""
    return load_terminology(default_terminology_path())
