"""Names that do not stand alone in running text, by what the terminology says: one-word names written only in
capitals (short forms) where the text writes them as everyday words, and category words that head a large share of
the terminology's names."""

from __future__ import annotations

from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.linking.annotation.approximate import ApproximateNames
from medlink.linking.annotation.name_checks import CATEGORY_HEADS
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept

OFF = AnnotatorConfig(context=False, corpus_lexicon=False)


def _linker(concepts: list) -> Linker:
    return Linker(Terminology.from_concepts(concepts))


def _found(linker: Linker, text: str, config: AnnotatorConfig = OFF) -> list[str]:
    return [annotation.text for annotation in linker.annotate(text, config)]


def _short_forms() -> Linker:
    return _linker(
        [
            make_concept("X:D1", "Chronic Obstructive Pulmonary Disease", [Name("COPD", NameKind.ENTRY_TERM)]),
            make_concept("X:D2", "Microphthalmia, Syndromic 5", [Name("INCLUDED", NameKind.ENTRY_TERM)]),
            make_concept("X:D3", "Anemia", [Name("ANEMIA", NameKind.ENTRY_TERM)]),
            make_concept("X:D4", "Wiskott-Aldrich Syndrome", [Name("WAS1", NameKind.ENTRY_TERM)]),
            make_concept("X:D5", "Gout", [Name("Podagra", NameKind.ENTRY_TERM)]),
        ]
    )


def test_a_short_form_in_capitals_written_as_everyday_words_reads_as_the_words() -> None:
    linker = _short_forms()
    text = "Patients with copd were included; anemia. It was 1 year without COPD; WAS1 carriers."
    # "copd" spells no English word (a short form typed carelessly); "Anemia" has a name with small letters
    assert _found(linker, text) == ["copd", "anemia", "COPD", "WAS1"]
    assert _found(linker, "HEARING TESTS WERE INCLUDED") == ["INCLUDED"]  # written so, it is the short form
    # a note typed in small letters throughout says nothing by them
    assert _found(linker, "pt with copd, was 1 of those included") == ["copd", "was 1", "included"]
    # the checks are a setting
    off = AnnotatorConfig(context=False, corpus_lexicon=False, name_checks=False)
    assert _found(linker, "Patients were included.", off) == ["included"]


def test_in_a_terminology_written_in_capitals_throughout_capitals_say_nothing() -> None:
    linker = _linker([make_concept(f"X:D{i}", name) for i, name in enumerate(["INCLUDED", "ANEMIA", "GOUT"])])
    assert _found(linker, "Anemia and gout were included") == ["Anemia", "gout", "included"]


def _with_category(heads: int) -> Linker:
    """A terminology where "syndrome" is a name and ends ``heads`` of its other names."""
    concepts = [make_concept("X:C0", "Syndrome"), make_concept("X:C1", "Pain")]
    concepts += [make_concept(f"X:S{i}", f"Example{i} Syndrome") for i in range(heads)]
    concepts += [make_concept(f"X:P{i}", f"Other{i} Pain") for i in range(3)]
    return _linker(concepts)


def test_a_word_heading_a_large_share_of_names_is_a_category_not_a_mention_alone() -> None:
    linker = _with_category(CATEGORY_HEADS)
    text = "The syndrome (Example3 syndrome) with pain."
    assert _found(linker, text) == ["Example3 syndrome", "pain"]
    # the setting turns it off; a small terminology has no categories
    assert _found(linker, text, AnnotatorConfig(context=False, corpus_lexicon=False, category_share=1.0)) == [
        "syndrome",
        "Example3 syndrome",
        "pain",
    ]
    assert _found(_with_category(CATEGORY_HEADS - 1), text) == ["syndrome", "Example3 syndrome", "pain"]


def test_approximate_matching_does_not_bring_back_what_the_checks_refused() -> None:
    linker = _with_category(CATEGORY_HEADS)
    names = linker.terminology.normalized_names()
    config = AnnotatorConfig(context=False, corpus_lexicon=False, approximate=ApproximateNames(names, 0.7))
    assert _found(linker, "The syndrome (Example3 syndrom).", config) == ["Example3 syndrom"]
