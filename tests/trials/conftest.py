"""What the trial tests share: the embedded MeSH descriptors and an exact-match normalizer over them."""

from __future__ import annotations

import pytest

from medlink.linking import Linker
from medlink.terminology import load_default_terminology
from medlink.trials.normalization.normalizer import TrialNormalizer


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


@pytest.fixture(scope="module")
def normalizer(mesh) -> TrialNormalizer:
    linker = Linker(mesh)  # exact match over the embedded MeSH descriptors: real data, no encoder
    return TrialNormalizer(linker, linker)
