import pytest

from medlink.text import Normalizer, NormalizerConfig, normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Infarction, Myocardial", "myocardial infarction"),
        ("Diabetes Mellitus, Type 2", "type 2 diabetes mellitus"),
        ("MYOCARDIAL   infarction.", "myocardial infarction"),
        ("Crohn's Disease", "crohn disease"),
        ("Alzheimer’s disease", "alzheimer disease"),
        ("type II diabetes", "type 2 diabetes"),
        ("Factor VIII deficiency", "factor 8 deficiency"),
        ("type I", "type 1"),
        ("vitamin i", "vitamin i"),
        ("TGF-β1", "tgf beta 1"),
        ("TGF-beta1", "tgf beta 1"),
        ("COVID-19", "covid 19"),
        ("covid19", "covid 19"),
        ("non–Hodgkin lymphoma", "non hodgkin lymphoma"),  # en dash
        ("non-Hodgkin lymphoma", "non hodgkin lymphoma"),
        ("Ｈｅａｒｔ　Ａｔｔａｃｋ", "heart attack"),  # full-width forms and ideographic space
        ("Cysts", "cyst"),
        ("Allergies", "allergy"),
        ("Abscesses", "abscess"),
        ("Virus Diseases", "virus disease"),
        ("diabetes", "diabetes"),
        ("AIDS", "aids"),
        ("Hearing Aids", "hearing aid"),
        ("2,4-Dienoyl-CoA Reductase Deficiency", "2 4 dienoyl coa reductase deficiency"),
        ("Cholera, unspecified", "cholera unspecified"),
        ("Epilepsy, Photogenic, with Spastic Diplegia", "epilepsy photogenic with spastic diplegia"),
        ("   ", ""),
        ("", ""),
        ("--", ""),
    ],
)
def test_default_rules(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_inverted_and_natural_order_meet() -> None:
    assert normalize("Infarction, Myocardial") == normalize("myocardial infarctions")
    assert normalize("Arthritis, Juvenile Rheumatoid") == normalize("juvenile rheumatoid arthritis")


def test_steps_can_be_switched_off() -> None:
    plain = Normalizer(NormalizerConfig(greek=False, uninvert=False, roman_numerals=False, plurals=False))
    assert plain("Infarctions, Myocardial") == "infarctions myocardial"
    assert plain("type II") == "type ii"
    assert plain.fingerprint != Normalizer().fingerprint


def test_chinese_text_is_kept() -> None:
    assert normalize("霍乱,由于01群霍乱弧菌") == "霍乱 由于 01 群霍乱弧菌"
