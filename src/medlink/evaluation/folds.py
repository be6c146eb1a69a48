"""Which cross-fitting fold an annotated mention belongs to, decided by its text alone.

Fold encoders (``medlink train --hold-out-fold K``) and the set ranker's cross-fitting
(``training/set_ranker_fit.py``) must agree on the split without sharing a file, and a text annotated twice must
never sit on both sides of it: a hash of the normalized text gives both, on every machine.
"""

from __future__ import annotations

import zlib

from medlink.text import normalize


def fold_of(text: str, folds: int) -> int:
    """The fold (0 … ``folds`` − 1) of a mention text; case, width and spacing do not move it."""
    if folds < 2:
        raise ValueError(f"cross-fitting needs at least 2 folds, got {folds}")
    return zlib.crc32(normalize(text).encode("utf-8")) % folds
