"""The terminology embedded in medlink: the MeSH descriptors shipped in ``medlink.resources``."""

from __future__ import annotations

import functools

from medlink.resources import default_terminology_path
from medlink.terminology.store import load_terminology
from medlink.terminology.terminology import Terminology


@functools.cache
def load_default_terminology() -> Terminology:
    """The MeSH descriptors shipped with medlink, compiled; loaded once per process (the default index's name,
    the default linker and the trial matcher's concept scanner all read it, and it is never changed)."""
    return load_terminology(default_terminology_path())
