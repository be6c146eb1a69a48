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


def test_a_kind_names_its_branches_and_an_unknown_word_is_refused(mesh) -> None:
    from medlink.errors import MedlinkError

    assert BranchScope(mesh, ("Disease",)).prefixes == ("C", "F03")
    assert BranchScope(mesh, ("drug", "C04")).prefixes == ("D", "C04")
    with pytest.raises(MedlinkError, match="no branches known for the kind 'Diseases'"):
        BranchScope(mesh, ("Diseases",))


def test_link_branches_by_kind_matches_the_old_entity_type_option() -> None:
    from click.testing import CliRunner

    from medlink.cli import main

    runner = CliRunner()
    by_kind = runner.invoke(main, ["link", "--exact-only", "--branches", "Chemical", "aspirin", "heart attack"])
    old_name = runner.invoke(main, ["link", "--exact-only", "--entity-type", "Chemical", "aspirin", "heart attack"])
    assert by_kind.exit_code == 0, by_kind.output
    assert by_kind.output == old_name.output
    assert "MESH:D001241" in by_kind.output and "MESH:D009203" not in by_kind.output
    wrong = runner.invoke(main, ["link", "--exact-only", "--branches", "Chemicals", "aspirin"])
    assert wrong.exit_code != 0 and "no branches known for the kind 'Chemicals'" in wrong.output
