"""Linking mentions to concepts: result records, the :class:`Linker` and the sieves it runs.

The core sits here (results, settings, decisions, pipeline, defaults, spec, linker); the rooms below it each do
one job: ``sieves/`` (exact, dense, sparse), ``mentions/`` (what happens to a mention around the sieves),
``rerank/`` (the cross-encoder stage) and ``sets/`` (mentions naming several concepts).
"""

from medlink.linking.linker import Linker
from medlink.linking.results import Candidate, LinkResult, Mention, NilCause, Stage
from medlink.linking.settings import LinkerConfig, LinkerParts, Sieve
from medlink.linking.sieves.exact import ExactSieve

__all__ = [
    "Candidate",
    "ExactSieve",
    "LinkResult",
    "Linker",
    "LinkerConfig",
    "LinkerParts",
    "Mention",
    "NilCause",
    "Sieve",
    "Stage",
]
