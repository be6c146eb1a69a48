"""Other spellings of a mention: British → American, digit groups, salts; and a written name over a training
mention that only normalizes alike."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.index import IndexEntry
from medlink.linking import Linker, LinkerConfig
from medlink.linking.mentions.respelling import (
    _STEMS,
    acid_name,
    eponym_names,
    says_the_same_cause,
    standard_spelling,
    without_cause,
    without_isotope_label,
    without_salt,
)
from medlink.linking.mentions.scanner import ConceptScanner
from medlink.linking.results import Candidate, LinkResult, Stage
from medlink.linking.sieves.exact import ExactSieve, prefer_written_name
from medlink.terminology import load_default_terminology


@pytest.fixture(scope="module")
def mesh():
    return load_default_terminology()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Haemorrhagic oedema", "hemorrhagic edema"),
        ("leukaemia", "leukemia"),
        ("mast cell tumours", "mast cell tumors"),
        ("thiosulphate", "thiosulfate"),
        ("paediatric anaesthesia", "pediatric anesthesia"),
        ("diarrhoea", "diarrhea"),
        ("SR 48,968", "SR 48968"),  # digit groups joined, case kept when nothing else changed
        ("1,2-dichloroethane", "1,2-dichloroethane"),  # locants are no digit groups
        ("Hemorrhage", "Hemorrhage"),
        ("hereditary angioedema", "hereditary angioedema"),  # American: "angio-" + "edema"
        ("lymphoedema", "lymphedema"),
        ("academia", "academia"),
    ],
)
def test_standard_spelling(text: str, expected: str) -> None:
    assert standard_spelling(text) == expected


def test_without_salt_keeps_a_salt_alone_and_drops_stacked_salts() -> None:
    assert without_salt("estramustine phosphate sodium") == "estramustine"
    assert without_salt("Metformin Hydrochloride") == "Metformin"
    assert without_salt("sodium") == "sodium"
    assert without_salt("sodium chloride") == "sodium"
    assert without_salt("metformin") == "metformin"


def test_an_isotope_label_is_dropped_before_the_compound_it_labels(mesh) -> None:
    assert without_isotope_label("[(3)H]saxitoxin") == "saxitoxin" and without_isotope_label("[125I]MIBG") == "MIBG"
    assert without_isotope_label("[D-Pen2.5]-enkephalin") == "[D-Pen2.5]-enkephalin"  # a bracket, no isotope
    assert without_isotope_label("[3H]") == "[3H]"  # never the whole mention
    arginine = Linker(mesh).link("[3H]-L-arginine")
    assert arginine.preferred_names == ("Arginine",) and "isotope label dropped" in arginine.reason


def test_an_anion_is_searched_as_its_acid(mesh) -> None:
    assert acid_name("metrizoate") == "metrizoic acid" and acid_name("Kainates") == "Kainic acid"
    assert acid_name("pyrrolidine dithiocarbamate") == "pyrrolidine dithiocarbamic acid"
    assert acid_name("ate") == "ate" and acid_name("urate crystals") == "urate crystals"  # only a final anion
    linked = Linker(mesh).link("ibotenate")  # no MeSH 2024 name ("metrizoate" is one)
    assert linked.preferred_names == ("Ibotenic Acid",) and "anion searched as its acid" in linked.reason
    assert Linker(mesh, config=LinkerConfig(respell=False)).link("ibotenate").concepts == ()
    assert Linker(mesh).link("zorbate").concepts == ()  # "zorbic acid" names nothing: no guess


def test_a_condition_is_searched_without_its_cause(mesh) -> None:
    assert without_cause("cocaine-induced paranoia") == "paranoia"
    assert without_cause("contrast media-induced nephropathy") == "nephropathy"
    assert without_cause("Transplantation-associated microangiopathy") == "microangiopathy"
    assert without_cause("induced abortion") == "induced abortion" and without_cause("paranoia") == "paranoia"
    assert without_cause("PLP-associated disease") == "PLP-associated disease"  # a generic head alone: no
    assert without_cause("RCC- and VHL-associated tumors") == "RCC- and VHL-associated tumors"  # composite
    # "nephropathy" is no MeSH name; an annotated training mention makes it one for the exact sieve.
    nephropathy = IndexEntry(mesh.normalizer("nephropathy"), "nephropathy", ("MESH:D007674",), "D")
    linker = Linker(mesh, sieves=[ExactSieve(mesh, mentions=[nephropathy])])
    linked = linker.link("contrast media-induced nephropathy")
    assert linked.concepts == ("MESH:D007674",) and "cause dropped" in linked.reason
    assert Linker(mesh).link("contrast media-induced nephropathy").concepts == ()  # no guess without the mention
    assert says_the_same_cause("drug-induced hepatitis", "Hepatitis, Drug-Induced")
    assert not says_the_same_cause("cocaine-induced paranoia", "Cocaine-Related Disorders")


def test_eponym_names_only_for_a_possessive_alone() -> None:
    assert eponym_names("Parkinson's") == ("Parkinson's disease", "Parkinson's syndrome")
    assert eponym_names("Lou Gehrig\u2019s") == ("Lou Gehrig\u2019s disease", "Lou Gehrig\u2019s syndrome")
    assert eponym_names("Graves'")[0] == "Graves' disease"
    assert eponym_names("Parkinsons") == ()  # a plural reads the same: never guessed
    assert eponym_names("Crohn's disease") == () and eponym_names("Down's syndrome") == ()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=60))
def test_text_without_a_british_stem_or_digit_group_comes_back_unchanged(text: str) -> None:
    respelled = standard_spelling(text)
    assert len(respelled) <= len(text)  # no rule lengthens a text
    # the rule's own stems: a hand-picked list missed "GYNAEC"
    if "," not in text and not any(british in text.lower() for british, _ in _STEMS):
        assert respelled == text


def test_the_linker_searches_american_spellings_and_parent_drugs(mesh) -> None:
    linker = Linker(mesh)  # exact match over the embedded MeSH descriptors: no encoder
    oedema, haematuria, haloperidol, venlafaxine, sodium = linker.link_many(
        ["oedema", "Haematuria", "haloperidol hydrochloride", "Venlafaxine Hydrochloride", "sodium"]
    )
    assert oedema.preferred_names == ("Edema",) and "respelled as 'edema'" in oedema.reason
    assert oedema.mention == "oedema"
    assert haematuria.preferred_names == ("Hematuria",)
    # not a MeSH 2024 name ("Metformin Hydrochloride" is one, of Metformin)
    assert haloperidol.preferred_names == ("Haloperidol",) and "salt searched as its parent drug" in haloperidol.reason
    assert venlafaxine.preferred_names == ("Venlafaxine Hydrochloride",)  # a salt with a name of its own stands
    assert sodium.preferred_names == ("Sodium",)
    off = Linker(mesh, config=LinkerConfig(respell=False))
    assert [r.concepts for r in off.link_many(["oedema", "haloperidol hydrochloride", "Parkinson's"])] == [(), (), ()]


def test_a_possessive_eponym_alone_links_to_the_disease_or_syndrome_it_names(mesh) -> None:
    parkinson, down, possessive = Linker(mesh).link_many(["parkinson's", "Down's", "Smith's"])
    assert parkinson.preferred_names == ("Parkinson Disease",) and "eponym searched as" in parkinson.reason
    assert parkinson.mention == "parkinson's"
    assert down.preferred_names == ("Down Syndrome",)  # no "Down disease": the syndrome
    assert possessive.concepts == ()  # a possessive that names nothing stays unlinked


def test_the_scanner_reads_british_spellings(mesh) -> None:
    scanner = ConceptScanner(mesh)
    assert scanner.scan("Presents with ankle oedema and anaemia.") == ("MESH:D004487", "MESH:D000740")
    assert ConceptScanner(mesh, respell=False).scan("ankle oedema") == ()
    # MeSH 2024's entry terms, which the embedded descriptors lacked before (issue 60): found, the negated one not
    found = scanner.scan("Breast cancer, then lung cancer; no prostate cancer.")
    assert found == ("MESH:D001943", "MESH:D008175")


def test_a_name_written_as_the_mention_beats_a_training_mention_that_only_normalizes_alike(mesh) -> None:
    annotated = LinkResult(
        "amphetamines",
        ("MESH:D000661",),
        Stage.EXACT,
        1.0,
        matched_name="amphetamine",
        candidates=(Candidate("MESH:D000661", "amphetamine", 1.0),),
        strategy="D",
    )
    chosen = prefer_written_name(annotated, "amphetamines", mesh)
    assert chosen.concepts[0] == "MESH:D000662" and chosen.preferred_names[0] == "Amphetamines"
    assert prefer_written_name(annotated, "amphetamine", mesh) is annotated  # the annotated string itself
    assert prefer_written_name(annotated, "Amphetamine", mesh) is annotated  # case aside, the same string
    terminology_result = LinkResult(
        "amphetamines", ("MESH:D000661",), Stage.EXACT, 1.0, matched_name="Amphetamine", strategy="O"
    )
    assert prefer_written_name(terminology_result, "amphetamines", mesh) is terminology_result
