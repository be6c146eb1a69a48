"""medlink: link free-text medical terms to terminology concepts.

    >>> import medlink
    >>> medlink.link("heart attack").concept_id
    'MESH:D009203'
    >>> linker = medlink.Linker.load()            # or Linker.load("my-index/")
    >>> [r.to_dict() for r in linker.link_many(["heart attack", "Crohn's disease"])]

Heavy dependencies (pyarrow, torch, faiss) are imported only when one of these names is first used, so importing
medlink and running ``medlink --help`` stay instant.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from medlink.version import __version__

_EXPORTS = {
    "Linker": "medlink.linking",
    "LinkerConfig": "medlink.linking",
    "LinkerSpec": "medlink.linking.spec",
    "EmbeddedDefault": "medlink.linking.spec",
    "ExactMatch": "medlink.linking.spec",
    "OverIndex": "medlink.linking.spec",
    "SetRanked": "medlink.linking.spec",
    "TrainingMentions": "medlink.linking.spec",
    "LinkResult": "medlink.linking",
    "Mention": "medlink.linking",
    "Candidate": "medlink.linking",
    "NilCause": "medlink.linking",
    "Stage": "medlink.linking",
    "link": "medlink.api",
    "MedlinkError": "medlink.errors",
}

__all__ = [
    "Candidate",
    "EmbeddedDefault",
    "ExactMatch",
    "LinkResult",
    "Linker",
    "LinkerConfig",
    "LinkerSpec",
    "MedlinkError",
    "Mention",
    "NilCause",
    "OverIndex",
    "SetRanked",
    "Stage",
    "TrainingMentions",
    "__version__",
    "link",
]

if TYPE_CHECKING:
    from medlink.api import link
    from medlink.errors import MedlinkError
    from medlink.linking import Candidate, Linker, LinkerConfig, LinkResult, Mention, NilCause, Stage
    from medlink.linking.spec import EmbeddedDefault, ExactMatch, LinkerSpec, OverIndex, SetRanked, TrainingMentions


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'medlink' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
