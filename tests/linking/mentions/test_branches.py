"""Branch scopes: a decision kept to tree-number prefixes, or passed on."""

from __future__ import annotations

import pytest

from medlink.linking.mentions.branches import BranchScope
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.terminology import load_default_terminology


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


def test_branch_scope_keeps_in_scope_candidates_or_says_nil(mesh) -> None:
    diseases = BranchScope(mesh, ("C", "F03"))
    kidney_transplant = mesh.lookup("Kidney Transplantation")[0].concept_id
    hypertension = mesh.lookup("Hypertension")[0].concept_id
    assert diseases.allows(hypertension) and not diseases.allows(kidney_transplant)
    result = LinkResult(
        "kidney tx",
        (kidney_transplant,),
        Stage.DENSE,
        0.9,
        "Kidney Transplantation",
        candidates=(
            Candidate(kidney_transplant, "Kidney Transplantation", 0.9),
            Candidate(hypertension, "Hypertension", 0.7),
        ),
    )
    restricted = diseases.restrict(result)
    assert restricted.concepts == (hypertension,) and restricted.score == 0.7
    alone = diseases.restrict(LinkResult("kidney tx", (kidney_transplant,), Stage.EXACT, 1.0))
    assert alone.stage is Stage.NIL and "branches C,F03" in alone.reason
