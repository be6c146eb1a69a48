"""Coordinated mentions in running text ("breast and ovarian cancer"): one span naming every conjunct's concept, as
BC5CDR and NCBI-disease annotate them, and never where the conjuncts are names of their own."""

from __future__ import annotations

import pytest

from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.end_to_end import learn_from_corpus, score_annotations
from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig
from medlink.linking.annotation.coordinations import coordination_ending
from medlink.linking.annotation.lexicon import Lexicon
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from support import FIXTURES


def _ending(text: str, last: str) -> tuple[str, tuple[str, ...]] | None:
    start = text.rindex(last)
    found = coordination_ending(text, start, start + len(last))
    if found is None:
        return None
    parts = (*(found.conjunct(i) for i in range(len(found.modifiers))), last)
    return text[found.modifiers[0][0] : start + len(last)], parts


@pytest.mark.parametrize(
    ("text", "last", "expected"),
    [
        ("risk of breast and ovarian cancer in", "ovarian cancer", ("breast and ovarian cancer", 2)),
        (
            "prostatic, pancreas, skin, and lung cancer",
            "lung cancer",
            ("prostatic, pancreas, skin, and lung cancer", 4),
        ),
        ("inherited breast/ovarian cancer", "ovarian cancer", ("breast/ovarian cancer", 2)),
        ("breast and/or ovarian cancer", "ovarian cancer", ("breast and/or ovarian cancer", 2)),
        ("C6 or C7 deficiency", "C7 deficiency", ("C6 or C7 deficiency", 2)),
    ],
)
def test_a_coordination_is_read_back_from_its_last_conjunct(text: str, last: str, expected: tuple[str, int]) -> None:
    found = _ending(text, last)
    assert found is not None
    assert (found[0], len(found[1])) == expected
    assert found[1][-1] == last  # the last conjunct is the name span itself, with the head the others share
    assert all(part.endswith(last.split(maxsplit=1)[1]) for part in found[1])


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("nausea and vomiting", "vomiting"),  # two names, no shared head
        ("type 1 and type 2 diabetes", "type 2 diabetes"),  # a numbered head is the last conjunct's own
        ("seen in the breast. And lung cancer", "lung cancer"),  # a sentence ends between them
        ("breast cancer", "breast cancer"),  # no conjunction
        ("Alzheimer's and Parkinson's disease", "Parkinson's disease"),  # no modifier "s" after an apostrophe
        ("the risk of " + "colon, " * 40 + "and lung cancer", "lung cancer"),  # a list longer than the reach
    ],
)
def test_no_coordination_where_none_shares_a_head(text: str, last: str) -> None:
    assert _ending(text, last) is None


@pytest.fixture(scope="module")
def linker() -> Linker:
    def disease(concept_id: str, name: str, *synonyms: str) -> object:
        names = [Name(synonym, NameKind.ENTRY_TERM) for synonym in synonyms]
        return make_concept(concept_id, name, names, tree_numbers=("C04",))

    return Linker(
        Terminology.from_concepts(
            [
                disease("MESH:D001943", "Breast Neoplasms", "breast cancer"),
                disease("MESH:D010051", "Ovarian Neoplasms", "ovarian cancer"),
                disease("MESH:D008175", "Lung Neoplasms", "lung cancer"),
                disease("MESH:D009325", "Nausea"),
                disease("MESH:D014839", "Vomiting"),
                disease("MESH:D020031", "Epstein-Barr Virus Infections", "Epstein-Barr virus"),
                disease("MESH:D014777", "Virus Diseases", "virus infection"),
                disease("MESH:D003586", "Cytomegalovirus Infections", "cytomegalovirus infection"),
            ]
        )
    )


def _found(linker: Linker, text: str, config: AnnotatorConfig) -> list[tuple[str, tuple[str, ...]]]:
    return [(a.text, a.concepts) for a in linker.annotate(text, config)]


def test_a_coordination_is_one_mention_of_each_conjuncts_concept(linker: Linker) -> None:
    config = AnnotatorConfig(context=False)
    text = "Carriers have a high risk of breast and ovarian cancer and of nausea and vomiting."
    assert _found(linker, text, config) == [
        ("breast and ovarian cancer", ("MESH:D001943", "MESH:D010051")),
        ("nausea", ("MESH:D009325",)),
        ("vomiting", ("MESH:D014839",)),
    ]
    found = linker.annotate(text, config)[0]
    assert (text[found.start : found.end], found.stage) == ("breast and ovarian cancer", "composite")
    assert "breast cancer; ovarian cancer" in found.reason
    assert _found(linker, text, AnnotatorConfig(context=False, coordinations=False))[0] == (
        "ovarian cancer",
        ("MESH:D010051",),
    )


def test_every_conjunct_must_be_a_name(linker: Linker) -> None:
    # "heart cancer" is no name here: the span is the last conjunct's alone, as without coordinations
    assert _found(linker, "heart and lung cancer", AnnotatorConfig(context=False)) == [
        ("lung cancer", ("MESH:D008175",))
    ]


def test_a_conjunct_the_lexicon_teaches_is_linked_as_it_teaches(linker: Linker) -> None:
    taught = Lexicon({"lung tumour": ("MESH:D008175",)})
    config = AnnotatorConfig(context=False, lexicon=taught)
    assert _found(linker, "ovarian and lung tumour", config) == [("lung tumour", ("MESH:D008175",))]
    both = Lexicon({"lung tumour": ("MESH:D008175",), "ovarian tumour": ("MESH:D010051",)})
    assert _found(linker, "ovarian and lung tumour", AnnotatorConfig(context=False, lexicon=both)) == [
        ("ovarian and lung tumour", ("MESH:D010051", "MESH:D008175"))
    ]


def test_training_documents_teach_their_composite_mentions() -> None:
    corpus = load_corpus(f"pubtator:{FIXTURES / 'tiny.pubtator'}", None)
    terminology = Terminology.from_concepts(
        [
            make_concept("MESH:D006527", "Wilson disease", tree_numbers=("C06",)),
            make_concept("MESH:D001943", "Breast Neoplasms", tree_numbers=("C04",)),
            make_concept("MESH:D010051", "Ovarian Neoplasms", tree_numbers=("C04",)),
        ]
    )
    lexicon = learn_from_corpus(corpus, terminology)
    # "D001943|D010051": one concept per part, as scored; before, a composite mention taught nothing
    assert lexicon.concepts["breast and ovarian cancer"] == ("MESH:D001943", "MESH:D010051")
    config = AnnotatorConfig(lexicon=lexicon, coordinations=False)
    found = Linker(terminology).annotate_many([text for _, text in corpus.documents], config)
    assert ("breast and ovarian cancer", ("MESH:D001943", "MESH:D010051")) in [(a.text, a.concepts) for a in found[0]]
    assert score_annotations(corpus, found, terminology).mention.right == 2  # both parts, at the gold span


def test_a_list_is_read_from_the_run_of_names_next_to_the_span(linker: Linker) -> None:
    config = AnnotatorConfig(context=False)
    # a conjunct that is no name ("heart cancer") ends the list there: only what follows it can share the head
    assert _found(linker, "breast, heart and ovarian cancer", config) == [("ovarian cancer", ("MESH:D010051",))]
    assert _found(linker, "in 2001, breast and ovarian cancer", config) == [
        ("breast and ovarian cancer", ("MESH:D001943", "MESH:D010051"))
    ]
    assert _found(linker, "lung cancer, breast and ovarian cancer", config) == [
        ("lung cancer", ("MESH:D008175",)),
        ("breast and ovarian cancer", ("MESH:D001943", "MESH:D010051")),
    ]


def test_a_coordination_never_starts_inside_another_name(linker: Linker) -> None:
    # "virus infection" is a name, but "virus" ends "Epstein-Barr virus": two mentions, not a coordination
    text = "Epstein-Barr virus and cytomegalovirus infection"
    assert _found(linker, text, AnnotatorConfig(context=False)) == [
        ("Epstein-Barr virus", ("MESH:D020031",)),
        ("cytomegalovirus infection", ("MESH:D003586",)),
    ]


def test_a_coordination_gives_way_to_a_tagger_span_across_its_start(linker: Linker) -> None:
    from medlink.linking.annotation.annotator import _best_supported
    from medlink.linking.annotation.candidates import find_spans
    from medlink.linking.annotation.tagger import TaggedSpan

    text = "risk of breast and ovarian cancer"
    spans = find_spans(linker.terminology, text, AnnotatorConfig())
    links = {span: linker.link(span.text) for span in spans if not span.parts}
    coordination = next(span for span in spans if span.parts)
    links[coordination] = linker.link("breast cancer")  # a concept, so that only the witnesses decide
    start = text.index("breast")
    across = TaggedSpan(start - 3, start + 6, "Disease", 0.9)  # "of breast": it crosses the coordination's start
    within = TaggedSpan(start, len(text), "Disease", 0.9)
    assert [s.text for s in _best_supported(links, [within], None)] == ["breast and ovarian cancer"]
    ovarian = TaggedSpan(text.index("ovarian"), len(text), "Disease", 0.9)
    assert [s.text for s in _best_supported(links, [across, ovarian], None)] == ["ovarian cancer"]
