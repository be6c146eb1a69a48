"""Intervention strings cleaned, split and nil-classed before linking."""

from __future__ import annotations

from medlink.trials.normalization.interventions import (
    PLACEBO,
    STANDARD_OF_CARE,
    clean_intervention,
    prepare_intervention,
)


def test_intervention_strings_are_cleaned_split_and_nil_classed() -> None:
    assert clean_intervention("Ibuprofen 600 mg oral tablet") == "Ibuprofen"
    assert clean_intervention("Vitamin D3 2000 IU daily") == "Vitamin D3"
    assert prepare_intervention("irinotecan hydrochloride").parts == (("irinotecan hydrochloride", "irinotecan"),)
    assert prepare_intervention("estramustine phosphate sodium").parts[0][-1] == "estramustine"
    assert prepare_intervention("Perphenazine [Trilafon]").parts == (("Perphenazine", "Trilafon"),)
    assert prepare_intervention("ribociclib + capecitabine").parts == (("ribociclib",), ("capecitabine",))
    assert prepare_intervention("Lopinavir/ritonavir").parts == (("Lopinavir",), ("ritonavir",))
    assert prepare_intervention("Nitrous oxide 40% and placebo").parts == (("Nitrous oxide",),)
    assert prepare_intervention("Matched Placebo Tablet").nil_class == PLACEBO
    assert prepare_intervention("sham procedure").nil_class == PLACEBO
    assert prepare_intervention("Standard of care").nil_class == STANDARD_OF_CARE
    assert prepare_intervention("Usual care").nil_class == STANDARD_OF_CARE
    assert prepare_intervention("Hand and foot care", split=False).parts == (("Hand and foot care",),)
