"""The embedded default knows today's drugs and says "unknown" for a drug-like name no terminology has (issue 44):
real MiniLM, the shipped form test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from medlink.linking import Linker
from medlink.linking.results import Stage


@pytest.fixture(scope="module")
def default() -> Linker:
    return Linker.load()


def test_new_drugs_link_to_their_supplementary_records(default: Linker) -> None:
    found = {text: default.link(text).concept_id for text in ("dostarlimab", "nirmatrelvir", "lecanemab")}
    assert found == {
        "dostarlimab": "MESH:C000719628",
        "nirmatrelvir": "MESH:C000718217",
        "lecanemab": "MESH:C000612089",
    }
    assert default.link("mpox").concept_id == "MESH:D045908"


def test_invented_drug_names_are_nil_saying_which_name_they_resemble(default: Linker) -> None:
    for text, look_alike in (("quextatinib", "Lapatinib"), ("telzumab", "Gemtuzumab")):
        result = default.link(text)
        assert result.stage is Stage.NIL and not result.concepts
        assert f"closest name {look_alike!r} differs in its stem" in result.reason
    without = default.with_config(replace(default.config, form_test=False))  # what the default answered before
    assert without.link("quextatinib").preferred_names == ("Lapatinib",)


def test_paraphrases_and_misspellings_keep_their_links(default: Linker) -> None:
    assert default.link("myocardial infarctoin").concept_id == "MESH:D009203"
    assert default.link("cancer of the breast").concept_id == "MESH:D001943"
