"""Schwartz & Hearst abbreviation expansion and composite splitting, alone and inside the linker."""

import pytest

from medlink.linking import Linker, LinkerConfig, Mention, Stage
from medlink.linking.mentions.abbreviations import (
    best_long_form,
    expand_abbreviations,
    find_abbreviations,
    initials_long_form,
    named_long_form,
    permuted_initials_long_form,
)
from medlink.linking.mentions.composites import split_composite
from medlink.terminology import Terminology
from medlink.terminology.records import Name, make_concept

DOCUMENT = (
    "The major cause is a dysfunctional ATP7B gene, causing Wilson disease (WD). We studied the common autosomal "
    "recessive copper toxicosis (CT) in terriers. Ataxia-telangiectasia (A-T) patients were excluded (n = 12). "
    "Hereditary nonpolyposis colorectal cancer (HNPCC) is common."
)


def test_definitions_found_in_a_document() -> None:
    assert find_abbreviations(DOCUMENT) == {
        "WD": "Wilson disease",
        "CT": "copper toxicosis",
        "A-T": "Ataxia-telangiectasia",
        "HNPCC": "Hereditary nonpolyposis colorectal cancer",
    }  # "(n = 12)" is not a short form


@pytest.mark.parametrize(
    ("short", "long", "expected"),
    [
        ("HNPCC", "is common. Hereditary nonpolyposis colorectal cancer", "Hereditary nonpolyposis colorectal cancer"),
        ("WD", "gene, causing Wilson disease", "Wilson disease"),
        ("XYZ", "gene, causing Wilson disease", None),
        ("WD", "WD", None),
    ],
)
def test_best_long_form(short: str, long: str, expected: str | None) -> None:
    assert best_long_form(short, long) == expected


def test_word_initials_win_over_the_rightmost_characters() -> None:
    # Schwartz & Hearst alone would give "adenomatous polyposis coli" (the first A matched at "adenomatous")
    found = find_abbreviations("Mutations cause attenuated adenomatous polyposis coli (AAPC), a variant.")
    assert found == {"AAPC": "attenuated adenomatous polyposis coli"}
    assert initials_long_form("AAPC", ["in", "adenomatous", "polyposis", "coli"]) is None


def test_initials_in_another_order_define_a_short_form() -> None:
    # DM abbreviates the Latin "dystrophia myotonica"; Schwartz & Hearst find no long form for it here
    found = find_abbreviations("Patients with myotonic dystrophy (DM) were studied.")
    assert found == {"DM": "myotonic dystrophy"}
    assert permuted_initials_long_form("DM", ["with", "myotonic", "dystrophy"]) == "myotonic dystrophy"
    assert permuted_initials_long_form("DM", ["with", "muscular", "myopathy"]) is None  # the same letters needed
    assert permuted_initials_long_form("D2", ["diabetes", "type"]) is None  # letters only


def test_a_long_form_using_an_earlier_short_form_is_spelled_out() -> None:
    found = find_abbreviations("Children with diffuse mesangial sclerosis (DMS) were seen; 10 had isolated DMS (IDMS).")
    assert found == {"DMS": "diffuse mesangial sclerosis", "IDMS": "isolated diffuse mesangial sclerosis"}


def test_a_long_form_never_spans_an_earlier_parenthesis() -> None:
    found = find_abbreviations("The most striking of carboplatin's advantages (CBDCA) over cisplatin (CDDP) is …")
    assert found == {}  # Schwartz & Hearst alone spell CDDP from "carboplatin's advantages (CBDCA) over cisplatin"


def test_a_plural_short_form_is_spelled_by_its_singular_and_defines_it_too() -> None:
    found = find_abbreviations("Women on combined oral contraceptives (COCs) were studied; COC use was common.")
    assert found == {"COCs": "combined oral contraceptives", "COC": "combined oral contraceptive"}
    # Schwartz & Hearst alone spell "COCs" inside "contraceptives"
    assert best_long_form("COCs", "combined oral contraceptives") == "contraceptives"


def test_a_parenthesis_inside_a_chemical_name_is_no_boundary() -> None:
    found = find_abbreviations("Dogs received 1-(2-chloroethyl)-3-cyclohexyl-1-nitrosourea (CCNU). CCNU was toxic.")
    assert found == {"CCNU": "1-(2-chloroethyl)-3-cyclohexyl-1-nitrosourea"}
    assert find_abbreviations("advantages (CBDCA) over cisplatin (CDDP)") == {}  # a word-opening one still is


def test_a_one_letter_short_form_needs_its_initial_and_a_whole_mention() -> None:
    document = "Rats received methylprednisolone (M) or triamcinolone (T). On postnatal day (P) 20, vitamin E was given"
    assert find_abbreviations(document) == {"M": "methylprednisolone", "T": "triamcinolone"}  # "day" is no P
    assert expand_abbreviations("T", document) == "triamcinolone"
    assert expand_abbreviations("T cell lymphoma", document) == "T cell lymphoma"  # never inside a longer mention
    assert expand_abbreviations("vitamin M", document) == "vitamin M"


CHEMICALS = {"cisplatin", "ammonium acetate", "acetate", "acid", "amiloride"}
CHEMICAL_TEXT = (
    "Rats drank water with ammonium acetate (NH4Ac) or N10-propargyl-5,8-dideazafolic acid (CB 3717). The advantage of "
    "carboplatin (CBDCA) over cisplatin (CDDP) is clear. A potassium-sparing diuretic (amiloride) was given."
)


@pytest.mark.parametrize(
    ("short", "expected"),
    [
        ("NH4Ac", "ammonium acetate"),  # the longest name, not "acetate"
        ("CDDP", "cisplatin"),
        ("CB 3717", None),  # "acid" does not start the phrase: "…dideazafolic acid" is one name
        ("amiloride", None),  # a name in parentheses is an aside, not a short form
        ("XYZ", None),  # not in the text
    ],
)
def test_a_named_long_form_for_letters_that_spell_nothing(short: str, expected: str | None) -> None:
    assert named_long_form(short, CHEMICAL_TEXT, lambda text: text.lower() in CHEMICALS) == expected


def test_expansion_of_whole_mentions_and_tokens() -> None:
    assert expand_abbreviations("WD", DOCUMENT) == "Wilson disease"
    assert expand_abbreviations("WD patients", DOCUMENT) == "Wilson disease patients"
    assert expand_abbreviations("WD", None) == "WD"
    assert expand_abbreviations("MI", DOCUMENT) == "MI"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("breast and ovarian cancer", ["breast cancer", "ovarian cancer"]),
        ("brain, breast, and prostate cancer", ["brain cancer", "breast cancer", "prostate cancer"]),
        ("C6 or C7 deficiency", ["C6 deficiency", "C7 deficiency"]),
        ("hypertension and type 2 diabetes", ["hypertension", "type 2 diabetes"]),  # a numbered head is not shared
        ("obesity or type II diabetes", ["obesity", "type II diabetes"]),
        ("combination of ribociclib + capecitabine", ["ribociclib", "capecitabine"]),
        ("cisplatin plus paclitaxel", ["cisplatin", "paclitaxel"]),
        ("nivolumab vs. placebo", ["nivolumab", "placebo"]),
        ("severe combined immunodeficiency", None),
        ("Wilson disease", None),
    ],
)
def test_split_composite(text: str, parts: list[str] | None) -> None:
    assert split_composite(text) == parts


def test_coordinated_names_split_whole_only_when_each_is_a_name() -> None:
    names = {
        "multiple myeloma",
        "plasma cell neoplasm",
        "hypertension",
        "obesity",
        "diabetes",
        "brain",
        "lung",
        "infection",
    }

    def is_name(text: str) -> bool:
        return text.lower() in names

    myeloma = split_composite("Multiple Myeloma and Plasma Cell Neoplasm", is_name)
    assert myeloma == ["Multiple Myeloma", "Plasma Cell Neoplasm"]
    assert split_composite("Hypertension, Obesity, Diabetes", is_name) == ["Hypertension", "Obesity", "Diabetes"]
    assert split_composite("Hypertension or Obesity", is_name) == ["Hypertension", "Obesity"]
    assert split_composite("Infection, Lung", is_name) is None  # two parts without a conjunction: an inverted name
    assert split_composite("Multiple Myeloma and Plasma Cell Neoplasm") is None  # no terminology to ask
    assert split_composite("Multiple Myeloma and Bone Pain", is_name) is None  # "Bone Pain" names nothing
    # a one-word modifier is read as sharing the head even when it is a name of its own ("brain" is anatomy)
    assert split_composite("brain and central nervous system tumors", is_name)[0] != "brain"


@pytest.fixture
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D006527", "Hepatolenticular Degeneration", [Name("Wilson Disease")]),
            make_concept("MESH:D001943", "Breast Neoplasms", [Name("breast cancer")]),
            make_concept("MESH:D010051", "Ovarian Neoplasms", [Name("ovarian cancer")]),
            make_concept("MESH:D000001", "Hand, Foot and Mouth Disease"),
        ]
    )


def test_linker_expands_abbreviations_from_the_document(terminology: Terminology) -> None:
    linker = Linker(terminology)
    result = linker.link(Mention("WD", document=DOCUMENT))
    assert result.mention == "WD" and result.concepts == ("MESH:D006527",)
    assert result.reason.startswith("abbreviation expanded to 'Wilson disease'")
    assert linker.link("WD").stage is Stage.NIL  # without its document nothing defines WD
    off = Linker(terminology, config=LinkerConfig(expand_abbreviations=False))
    assert off.link(Mention("WD", document=DOCUMENT)).stage is Stage.NIL


def test_a_short_form_inside_a_name_is_kept_when_spelling_it_out_names_nothing() -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D015658", "HIV Infections"),
            make_concept("MESH:D006678", "HIV", [Name("Human Immunodeficiency Virus")]),
            make_concept("MESH:D000163", "Acquired Immunodeficiency Syndrome", [Name("AIDS")]),
        ]
    )
    document = "The human immunodeficiency virus (HIV) leads to the acquired immunodeficiency syndrome (AIDS)."
    linker = Linker(terminology)
    kept = linker.link(Mention("HIV Infections", document=document))
    assert kept.concepts == ("MESH:D015658",) and "expanded" not in kept.reason  # "human immunodeficiency virus
    # infections" is no name: spelled out, the mention would be nil (or, searched, the virus)
    assert linker.link(Mention("AIDS", document=document)).reason.startswith("abbreviation expanded")  # whole
    assert linker.link(Mention("HIV", document=document)).reason.startswith("abbreviation expanded")  # short forms
    no_name = linker.link(Mention("HIV wasting", document=document))
    assert no_name.reason.startswith("abbreviation expanded to 'human immunodeficiency virus wasting'")


def test_linker_expands_short_forms_whose_letters_spell_nothing_to_a_name(terminology: Terminology) -> None:
    document = "Tumours of the breast (XQ) were common. Patients with breast cancer (MPQ) were seen."
    assert find_abbreviations(document) == {}  # no spelling rule finds either
    result = Linker(terminology).link(Mention("MPQ", document=document))
    assert result.concepts == ("MESH:D001943",) and "expanded to 'breast cancer'" in result.reason
    assert Linker(terminology).link(Mention("XQ", document=document)).stage is Stage.NIL  # "breast" is no name


def test_linker_links_composites_part_by_part(terminology: Terminology) -> None:
    result = Linker(terminology).link("breast and ovarian cancer")
    assert result.stage is Stage.COMPOSITE and result.several
    assert result.concepts == ("MESH:D001943", "MESH:D010051")
    assert [part.mention for part in result.parts] == ["breast cancer", "ovarian cancer"]
    assert [part.concepts for part in result.parts] == [("MESH:D001943",), ("MESH:D010051",)]
    assert Linker(terminology).link("Hand, Foot and Mouth Disease").stage is Stage.EXACT  # known names stay whole
    assert Linker(terminology).link("breast and lung cancer").stage is Stage.NIL  # a part that links to nothing
    whole = Linker(terminology).link("Wilson Disease and Breast Neoplasms")  # names coordinated whole
    assert whole.concepts == ("MESH:D006527", "MESH:D001943") and whole.stage is Stage.COMPOSITE
    off = Linker(terminology, config=LinkerConfig(split_composites=False))
    assert off.link("breast and ovarian cancer").stage is Stage.NIL


def test_composite_result_scores_as_composite(terminology: Terminology) -> None:
    from medlink.evaluation.corpus import parse_pubtator_ids
    from medlink.evaluation.runner import prediction_of
    from medlink.evaluation.scoring import is_correct

    prediction = prediction_of(Linker(terminology).link("breast and ovarian cancer"))
    assert is_correct(parse_pubtator_ids("D001943|D010051", "MESH"), prediction)
    assert not is_correct(parse_pubtator_ids("D001943", "MESH"), prediction)


@pytest.mark.parametrize(
    "document",
    [
        "Patients with dry eye syndrome [DES] were seen; DES is common.",
        "Patients with dry eye syndrome (DES; n = 40) were seen.",
        "Patients with dry eye syndrome (DES, 40 eyes) were seen.",
    ],
)
def test_a_definition_in_brackets_or_before_more_said_in_its_parenthesis(document: str) -> None:
    assert find_abbreviations(document) == {"DES": "dry eye syndrome"}


def test_a_bracket_inside_a_word_or_a_short_form_after_more_said_defines_nothing() -> None:
    assert find_abbreviations("Levels of Ca[2+] rose in free fatty acids (FFA) too.") == {"FFA": "free fatty acids"}
    assert find_abbreviations("Seen in dry eye syndrome (n = 40; DES).") == {}
