"""Linking mentions to concepts: result records, sieves and the :class:`Linker`."""

from medlink.linking.exact import ExactSieve
from medlink.linking.linker import Linker, LinkerConfig, Sieve
from medlink.linking.results import Candidate, LinkResult, Mention, Stage

__all__ = ["Candidate", "ExactSieve", "LinkResult", "Linker", "LinkerConfig", "Mention", "Sieve", "Stage"]
