"""Annotating running text: dictionary spans with offsets, short forms the text defines, ConText negation and
uncertainty, branch scope, what training documents teach, and end-to-end scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.end_to_end import learn_from_corpus, score_annotations
from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.linking.annotation.context import assess
from medlink.linking.annotation.lexicon import Lexicon
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from support import FIXTURES


@pytest.fixture(scope="module")
def linker() -> Linker:
    return Linker(
        Terminology.from_concepts(
            [
                make_concept(
                    "MESH:D009203",
                    "Myocardial Infarction",
                    [Name("heart attack", NameKind.ENTRY_TERM)],
                    tree_numbers=("C14.280.647.500",),
                ),
                make_concept(
                    "MESH:D007676",
                    "Kidney Failure, Chronic",
                    [Name("chronic kidney disease", NameKind.ENTRY_TERM)],
                    tree_numbers=("C12.777.419.780.050",),
                ),
                make_concept("MESH:D007674", "Kidney Diseases", tree_numbers=("C12.777.419",)),
                make_concept("MESH:D011014", "Pneumonia", tree_numbers=("C08.381.677",)),
                make_concept("MESH:D010361", "Patients", tree_numbers=("M01.643",)),
                make_concept(
                    "MESH:D004364",
                    "Pharmaceutical Preparations",
                    [Name("drugs", NameKind.ENTRY_TERM)],
                    tree_numbers=("D26",),
                ),
            ]
        )
    )


TEXT = (
    "Patients with chronic kidney disease (CKD) and a heart attack. CKD, kidney diseases. "
    "No evidence of pneumonia, but possible heart attack; drugs."
)


def test_spans_are_the_longest_names_with_their_offsets_and_short_forms(linker: Linker) -> None:
    found = linker.annotate(TEXT, AnnotatorConfig(context=False))
    spans = [(a.text, a.concepts[0]) for a in found]
    assert spans == [
        ("chronic kidney disease", "MESH:D007676"),
        ("CKD", "MESH:D007676"),
        ("heart attack", "MESH:D009203"),
        ("CKD", "MESH:D007676"),
        ("kidney diseases", "MESH:D007674"),
        ("pneumonia", "MESH:D011014"),
        ("heart attack", "MESH:D009203"),
        ("drugs", "MESH:D004364"),
    ]
    assert all(TEXT[a.start : a.end] == a.text for a in found)
    assert "Patients" not in {a.text for a in found}  # MeSH-like terminology: persons (M) are not annotated
    assert "defines as 'chronic kidney disease'" in found[1].reason
    everything = linker.annotate(TEXT, AnnotatorConfig(branches=()))
    assert everything[0].text == "Patients"
    diseases = linker.annotate(TEXT, AnnotatorConfig(branches=("C",)))
    assert "drugs" not in {a.text for a in diseases}


def test_a_span_never_crosses_punctuation(linker: Linker) -> None:
    assert [a.text for a in linker.annotate("heart, attack. heart attack")] == ["heart attack"]


def test_negation_and_uncertainty_name_their_trigger(linker: Linker) -> None:
    found = {a.text + str(a.start): a for a in linker.annotate(TEXT)}
    pneumonia = next(a for a in found.values() if a.text == "pneumonia")
    assert pneumonia.negated and not pneumonia.uncertain and "negated by 'no evidence of'" in pneumonia.reason
    doubted = [a for a in found.values() if a.text == "heart attack"][-1]
    assert doubted.uncertain and not doubted.negated and "uncertain by 'possible'" in doubted.reason
    first = next(a for a in found.values() if a.text == "heart attack")
    assert not first.negated and not first.uncertain


def test_context_scope_ends_at_but_and_at_the_sentence() -> None:
    text = "No fever, but pneumonia was seen. Pneumonia again. Myocardial infarction was ruled out."
    assert not assess(text, text.index("pneumonia"), text.index("pneumonia") + 9).negated  # "but" ends "no"
    assert not assess(text, text.index("Pneumonia"), text.index("Pneumonia") + 9).negated  # a new sentence
    late = text.index("Myocardial")
    finding = assess(text, late, late + len("Myocardial infarction"))
    assert finding.negated and finding.trigger == "was ruled out"


def test_a_lexicon_adds_taught_mentions_and_blocks_names_seldom_marked(linker: Linker) -> None:
    lexicon = Lexicon({"nephrotoxicity": ("MESH:D007674",)}, frozenset({"drug"}), {"nephrotoxicity": 3})
    found = linker.annotate("Cisplatin nephrotoxicity and drugs.", AnnotatorConfig(lexicon=lexicon))
    assert [(a.text, a.concepts) for a in found] == [("nephrotoxicity", ("MESH:D007674",))]
    assert "training documents (3 times)" in found[0].reason and found[0].preferred_names == ("Kidney Diseases",)


def test_end_to_end_scores_mentions_and_documents(linker: Linker) -> None:
    corpus = load_corpus(f"pubtator:{FIXTURES / 'tiny.pubtator'}", None)
    assert [doc_id for doc_id, _ in corpus.documents] == ["100", "200"]
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D006527", "Wilson disease"),
            make_concept("MESH:D001943", "Breast Neoplasms"),
            make_concept("MESH:D002945", "Cisplatin"),
        ]
    )
    found = Linker(terminology).annotate_many([text for _, text in corpus.documents], AnnotatorConfig(branches=()))
    scores = score_annotations(corpus, found, terminology)
    # Gold: Wilson disease (0-14), breast and ovarian cancer (two ids), Cisplatin; found: Wilson disease twice,
    # "WD" once (defined by the text), Cisplatin.
    assert scores.mention.gold == 4 and scores.mention.right == 2 and scores.mention.found == 4
    assert scores.document.right == 2 and scores.document.gold == 4 and scores.document.found == 2
    lexicon = learn_from_corpus(corpus, terminology)
    assert lexicon.concepts["cisplatin"] == ("MESH:D002945",)


def test_annotation_is_fast_enough_to_matter(tmp_path: Path, linker: Linker) -> None:
    """Not a timing test: only that many documents go through in one batch, in document order."""
    texts = [TEXT, "Nothing here.", "A heart attack."] * 50
    found = linker.annotate_many(texts)
    assert len(found) == 150 and found[1] == [] and [a.text for a in found[2]] == ["heart attack"]


def test_skipping_words_no_name_holds_finds_the_same_spans(linker: Linker) -> None:
    from medlink.linking.annotation.name_words import NameWords
    from medlink.linking.annotation.spans import dictionary_spans

    terminology = linker.terminology
    text = TEXT + " Type I heart attacks; the patients' drugs (CKD). Kidney-diseases, chronic kidney disease."
    words = NameWords(terminology, Lexicon())
    assert not words("evidence") and words("attacks") and words("I")

    def spans(in_names):  # type: ignore[no-untyped-def]
        return dictionary_spans(
            text, lambda key, _: terminology.has_normalized(key), terminology.normalizer, in_names=in_names
        )

    assert spans(words) == spans(lambda _: True) and len(spans(words)) >= 8
    every_run_whole = dictionary_spans(text, lambda key, _: terminology.has_normalized(key), terminology.normalizer)
    word_by_word = dictionary_spans(
        text, lambda key, _: words.is_name(key), terminology.normalizer, in_names=words, word_runs=words.runs
    )
    assert word_by_word == every_run_whole  # a batch's remembered keys and answers find the same spans


def test_the_sentence_start_is_found_far_before_a_mention_too() -> None:
    long_sentence = "Pneumonia. No " + "x " * 700 + "pneumonia"  # the sentence began 1,400 characters earlier
    assert not assess(long_sentence, len(long_sentence) - 9, len(long_sentence)).negated  # "no" is out of the window
    near = "Pneumonia. " + "x " * 700 + "denies pneumonia"
    finding = assess(near, len(near) - 9, len(near))
    assert finding.negated and finding.trigger == "denies"
    one_sentence = "x " * 700 + "no pneumonia"  # no sentence end at all: the text's start begins it
    assert assess(one_sentence, len(one_sentence) - 9, len(one_sentence)).negated
