import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.text import Normalizer, NormalizerConfig, normalize
from medlink.text.normalize import WordRuns


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("子宫颈鳞癌IIB期放化疗后", "子宫颈鳞癌 iib 期放化疗后"),  # Latin letters split from Chinese
        ("II型糖尿病", "2 型糖尿病"),  # so a Roman numeral inside a Chinese term is read as one
        ("Ⅱ型糖尿病", "2 型糖尿病"),
        ("２型糖尿病", "2 型糖尿病"),  # full-width digits
        ("（子宫）子宫内膜样腺癌，中分化；", "子宫 子宫内膜样腺癌 中分化"),  # full-width punctuation
        ("ＣＯＶＩＤ－１９肺炎", "covid 19 肺炎"),
        ("肺結核", "肺結核"),  # traditional characters are kept, not converted
        ("A01.000x001", "a01000x001"),  # an ICD code stays one token; its x is not the numeral 10
        ("霍乱 A00.0 未特指", "霍乱 a000 未特指"),
        ("Vitamin B12", "vitamin b 12"),  # not a code without its dot
    ],
)
def test_chinese_text_and_codes(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_normalizing_in_worker_processes_gives_the_same_keys_in_order() -> None:
    from medlink.text import Normalizer

    texts = ["Heart Attacks", "Infarction, Myocardial", "AIDS", "β-blockers", "ICD I21.9 acute MI", "Type II diabetes"]
    texts = [f"{text} {number}" for number in range(40) for text in texts]
    normalizer = Normalizer()
    assert normalizer.normalize_all(texts, workers=2, chunk=50) == [normalizer(text) for text in texts]


_TRICKY_WORDS = [
    "type",
    "grade",
    "I",
    "i",
    "ii",
    "I-II",
    "iii",
    "AIDS",
    "aids",
    "NSAIDS-induced",
    "cells",
    "diabetes",
    "Crohn's",
    "β-blockers",
    "T-cell",
    "COVID19",
    "x-ray",
    "É",
    "α2-macroglobulin",
    "CD4+",
    "1,2-diol",
    "e.g.",
    "pts.",
    "Mrs",
    "HIVs",
    "Na+",
    "ÀÉ",
    "癌症",
    "mg",
    "ＡＩＤＳ",
    "𝐀𝐈𝐃𝐒",
    "AIDS⑴",
    "ĿAIDS",
    "🄁",
    "infarction🄁",
]
_WORD = st.one_of(
    st.sampled_from(_TRICKY_WORDS),
    st.text(st.characters(blacklist_categories=["Z", "C"]), min_size=1, max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=8))
def test_words_normalized_one_by_one_read_as_the_whole_run(words: list[str]) -> None:
    normalizer, keys = Normalizer(), {}
    assert normalizer.normalize_words(words, keys) == normalizer.normalize(" ".join(words))
    assert normalizer.normalize_words(words, keys) == normalizer.normalize(" ".join(words))  # from remembered keys


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=8))
def test_every_run_of_words_read_once_reads_as_that_run_whole(words: list[str]) -> None:
    normalizer = Normalizer()
    runs = WordRuns(normalizer, words, {})
    for start in range(len(words)):
        for end in range(start, len(words) + 1):
            assert runs.key(start, end) == normalizer.normalize(" ".join(words[start:end])), (start, end)


def test_a_roman_one_after_type_and_an_acronym_beside_its_letters_read_together() -> None:
    normalizer = Normalizer()
    assert normalizer.normalize_words(["type", "I", "diabetes"], {}) == "type 1 diabetes"
    assert normalizer.normalize_words(["grade", "I-II"], {}) == "grade 1 2"
    assert normalizer.normalize_words(["AIDS", "aids"], {}) == "aids aids"
    for words in (["ＡＩＤＳ", "aids"], ["🄁", "myocardial"], ["AIDS⑴", "aids"]):  # as NFKC reads them
        assert normalizer.normalize_words(words, {}) == normalizer.normalize(" ".join(words))
