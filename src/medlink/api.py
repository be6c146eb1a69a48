"""One-shot linking for notebooks and scripts: ``medlink.link("heart attack")``.

The embedded default linker is loaded on the first call (prebuilt: nothing is encoded or compiled) and kept for
later calls in this process; ``Linker.load()`` gives a linker of your own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import overload

from medlink.linking import Linker, LinkResult, Mention


@functools.cache
def default_linker() -> Linker:
    """The embedded default (all of MeSH, exact → dense), loaded once per process."""
    return Linker.load()


@overload
def link(mentions: str | Mention) -> LinkResult: ...  # type: ignore[overload-overlap]  # a str is one mention
@overload
def link(mentions: Iterable[str | Mention]) -> list[LinkResult]: ...
def link(mentions: str | Mention | Iterable[str | Mention]) -> LinkResult | list[LinkResult]:
    """Link one mention (a result) or several (a list of results, in order) with the embedded default."""
    if isinstance(mentions, str | Mention):
        return default_linker().link(mentions)
    return default_linker().link_many(mentions)
