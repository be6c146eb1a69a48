"""The corpus lexicon: learned out of fold from annotated documents, applied only where a terminology has its
concepts, over-ruled by a user's own training documents, read back from its file (or refused naming it), and used
by annotation by default with the packaged tagger's distribution."""

from __future__ import annotations

import gzip
import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from medlink.errors import MedlinkError
from medlink.evaluation.corpus_formats import load_corpus
from medlink.evaluation.end_to_end import learn_from_corpus
from medlink.evaluation.folds import fold_of
from medlink.linking import Linker, LinkerConfig
from medlink.linking.annotation.annotator import (
    AnnotatorConfig,
    lexicon_in_use,
    packaged_span_sources,
    with_span_sources,
)
from medlink.linking.annotation.corpus_lexicon import (
    CorpusLexicon,
    SeldomMarked,
    TaughtForm,
    packaged_corpus_lexicon,
    read_corpus_lexicon,
)
from medlink.linking.annotation.lexicon import Lexicon
from medlink.linking.annotation.tagger import choose_tagger
from medlink.linking.annotation.witnesses import kinds_of
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from medlink.training.corpus_lexicon import LexiconSource, learn_corpus_lexicon

KIDNEY, PATIENTS, CISPLATIN, OXYGEN = "MESH:D007674", "MESH:D010361", "MESH:D002945", "MESH:D010100"


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept(KIDNEY, "Kidney Diseases", tree_numbers=("C12.777.419",)),
            make_concept(PATIENTS, "Patients", tree_numbers=("M01.643",)),
            make_concept(CISPLATIN, "Cisplatin", tree_numbers=("D01.210",)),
            make_concept(OXYGEN, "Oxygen", [Name("O2", NameKind.ABBREVIATION)], tree_numbers=("D01.268",)),
            make_concept("MESH:D009369", "Neoplasms", [Name("tumor", NameKind.ENTRY_TERM)], tree_numbers=("C04",)),
        ]
    )


def _ids_in_folds(folds: int, per_fold: int) -> list[list[str]]:
    """Document ids, ``per_fold`` in each fold: the test decides where each document sits."""
    placed: list[list[str]] = [[] for _ in range(folds)]
    number = 1000
    while min(map(len, placed)) < per_fold:
        number += 1
        bucket = placed[fold_of(str(number), folds)]
        if len(bucket) < per_fold:
            bucket.append(str(number))
    return placed


def _pubtator(path: Path, documents: list[tuple[str, str, list[tuple[str, str, str]]]]) -> Path:
    """documents: (id, text, [(mention text, type, id)]); each mention at its first place in the text."""
    lines = []
    for document_id, text, mentions in documents:
        lines += [f"{document_id}|t|{text}", f"{document_id}|a|"]
        for mention, kind, concept in mentions:
            start = text.index(mention)
            lines.append(f"{document_id}\t{start}\t{start + len(mention)}\t{mention}\t{kind}\t{concept}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory, terminology: Terminology) -> CorpusLexicon:
    (a, c), (b, d) = _ids_in_folds(2, 2)
    chemical = [("Cisplatin", "Chemical", "D002945")]
    path = _pubtator(
        tmp_path_factory.mktemp("lexicon") / "train.pubtator",
        [
            (a, "Cisplatin nephrotoxicity in patients.", [*chemical, ("nephrotoxicity", "Disease", "D007674")]),
            (b, "Nephrotoxicity of Cisplatin in patients.", [*chemical, ("Nephrotoxicity", "Disease", "D007674")]),
            (c, "Patients had nephrotoxicity and a dizzy spell.", [("nephrotoxicity", "Disease", "D007674")]),
            (d, "Patients were well; a dizzy spell.", [("dizzy spell", "Disease", "D004244")]),
        ],
    )
    source = LexiconSource("tiny", load_corpus(f"pubtator:{path}"), ("Chemical", "Disease"))
    return learn_corpus_lexicon([source], terminology, folds=2)


def test_forms_carry_their_count_and_out_of_fold_evidence(learned: CorpusLexicon, terminology: Terminology) -> None:
    forms = {(f.kind, f.key): f for f in learned.forms}
    nephro = forms[("Disease", terminology.normalizer("nephrotoxicity"))]
    assert (nephro.concepts, nephro.count, nephro.finds, nephro.hits) == (("MESH:D007674",), 3, 3, 3)
    dizzy = forms[("Disease", terminology.normalizer("dizzy spell"))]
    # annotated in one fold only (doc d): the other fold's document c has it too, unannotated, so it is found
    # there once out of fold and missed; doc d's own find has nothing to learn from in the other fold
    assert (dizzy.count, dizzy.finds, dizzy.hits) == (1, 1, 0)
    assert ("Chemical", terminology.normalizer("cisplatin")) in forms
    assert ("Disease", terminology.normalizer("cisplatin")) not in forms  # the kinds stay apart
    assert learned.sources == ("tiny (4 documents)",) and len(learned.documents) == 4


def test_names_seldom_marked_are_judged_per_kind(learned: CorpusLexicon, terminology: Terminology) -> None:
    patients = terminology.normalizer("patients")
    verdicts = {(s.kind, s.key): s for s in learned.seldom_marked}
    assert verdicts[("Disease", patients)].blocks and verdicts[("Chemical", patients)].blocks
    assert verdicts[("Disease", patients)].concepts == (PATIENTS,)
    assert not any(s.key == terminology.normalizer("cisplatin") for s in learned.seldom_marked)  # marked: kept
    lexicon = learned.lexicon(terminology, None, 0.4)
    assert patients in lexicon.blocked
    assert lexicon.concepts[terminology.normalizer("nephrotoxicity")] == (KIDNEY,)
    assert terminology.normalizer("dizzy spell") not in lexicon.concepts  # 0 of 1 out of fold: under the cut


def _form(key: str, concepts: tuple[str, ...], finds: int, hits: int, kind: str = "Disease") -> TaughtForm:
    return TaughtForm(kind, key, concepts, max(finds, 1), finds, hits)


def test_a_form_is_taught_only_over_the_cut_and_where_the_terminology_has_its_concept(
    terminology: Terminology,
) -> None:
    forms = (
        _form("nephrotoxicity", (KIDNEY,), 40, 38),
        _form("renal toxicity", (KIDNEY,), 10, 3),  # precision (3+1)/(10+2) = 0.33
        _form("omim disease", ("OMIM:123456",), 10, 10),  # a concept MeSH lacks
        _form("cisplatin", (KIDNEY,), 1, 1),  # a name of another concept, tested once: no
        _form("tumor", (KIDNEY,), 5, 5),  # a name of another concept, tested 5 times: yes
        _form("dioxygen", (OXYGEN,), 0, 0, kind="Chemical"),  # untested: 0.5
    )
    corpus = CorpusLexicon(forms, (), ("test",), frozenset())
    taught = corpus.lexicon(terminology, None, 0.4).concepts
    assert set(taught) == {"nephrotoxicity", "tumor", "dioxygen"}
    assert set(corpus.lexicon(terminology, None, 0.3).concepts) == {
        "nephrotoxicity",
        "renal toxicity",
        "tumor",
        "dioxygen",
    }
    assert set(corpus.lexicon(terminology, ("disease",), 0.4).concepts) == {"nephrotoxicity", "tumor"}
    assert corpus.lexicon(terminology, ("Gene",), 0.4).concepts == {}
    reason = corpus.lexicon(terminology, None, 0.4).reason("nephrotoxicity")
    assert "40 times" in reason and "right 38" in reason


def test_a_kind_that_marks_a_name_vetoes_its_block_and_a_foreign_vocabulary_is_not_judged(
    terminology: Terminology,
) -> None:
    seldom = (
        SeldomMarked("Chemical", "oxygen", (OXYGEN,), 13, 13),
        SeldomMarked("Disease", "oxygen", (OXYGEN,), 14, 0),
        SeldomMarked("Disease", "patient", (PATIENTS,), 50, 1),
        SeldomMarked("Disease", "included", ("OMIM:1",), 50, 0),  # not this terminology's name
    )
    corpus = CorpusLexicon((), seldom, ("test",), frozenset())
    assert corpus.lexicon(terminology, ("Disease",), 0.4).blocked == {"oxygen", "patient"}
    assert corpus.lexicon(terminology, None, 0.4).blocked == {"patient"}  # chemicals mark oxygen
    other = Terminology.from_concepts([make_concept("X:1", "Patient"), make_concept("X:2", "Oxygen")])
    assert corpus.lexicon(other, None, 0.4).blocked == frozenset()  # another vocabulary's patient


def test_a_users_training_documents_win_where_they_disagree() -> None:
    shipped = Lexicon({"ckd": ("A",), "flu": ("B",)}, frozenset({"patient", "drug"}), {"ckd": 5, "flu": 2})
    own = Lexicon({"ckd": ("C",), "drug": ("D",)}, frozenset({"flu"}), {"ckd": 1, "drug": 3})
    merged = shipped.under(own)
    assert dict(merged.concepts) == {"ckd": ("C",), "drug": ("D",)}
    assert merged.blocked == {"patient", "flu"}
    assert merged.reason("ckd") == "annotated so in the training documents (once)"


def test_the_file_round_trips_and_a_damaged_one_is_refused_by_name(learned: CorpusLexicon, tmp_path: Path) -> None:
    path = tmp_path / "corpus-lexicon.json.gz"
    learned.save(path)
    assert read_corpus_lexicon(path) == learned
    assert not list(tmp_path.glob(".*partial"))
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(path.read_bytes()[:100])
    with pytest.raises(MedlinkError, match=r"broken\.json\.gz: not a readable corpus lexicon"):
        read_corpus_lexicon(broken)
    foreign = tmp_path / "foreign.json.gz"
    foreign.write_bytes(gzip.compress(b'{"format": "other"}'))
    with pytest.raises(MedlinkError, match=r"foreign\.json\.gz: a corpus lexicon of format 'other'"):
        read_corpus_lexicon(foreign)
    malformed = tmp_path / "malformed.json.gz"
    text = path.read_bytes()
    malformed.write_bytes(gzip.compress(gzip.decompress(text).replace(b'"forms":[[', b'"forms":[[1,', 1)))
    with pytest.raises(MedlinkError, match=r"malformed\.json\.gz: a corpus lexicon with a malformed entry"):
        read_corpus_lexicon(malformed)


def test_a_copy_leaves_the_terminologies_it_was_applied_to_behind(
    learned: CorpusLexicon, terminology: Terminology
) -> None:
    learned.lexicon(terminology, None, 0.4)
    copy = pickle.loads(pickle.dumps(learned))
    assert copy == learned and copy._made == {}
    assert copy.lexicon(terminology, None, 0.4) == learned.lexicon(terminology, None, 0.4)


def test_annotation_uses_it_unless_switched_off(learned: CorpusLexicon, terminology: Terminology) -> None:
    linker = Linker(terminology)
    text = "Cisplatin nephrotoxicity in patients."
    config = with_span_sources(AnnotatorConfig(branches=("C",)), None, learned, "Disease")
    assert [a.text for a in linker.annotate(text, config)] == ["nephrotoxicity"]
    assert "public corpora" in linker.annotate(text, config)[0].reason
    off = replace(config, corpus_lexicon=False)
    assert lexicon_in_use(terminology, off) == Lexicon()
    assert linker.annotate(text, off) == []  # "nephrotoxicity" is no name of the terminology


def test_the_packaged_lexicon_teaches_what_mesh_lacks() -> None:
    if choose_tagger("auto") is None:
        pytest.skip("medlink-span-tagger is not installed")
    packaged = packaged_corpus_lexicon()
    assert packaged is not None, "medlink-span-tagger is installed without its corpus lexicon"
    assert {"Disease", "Chemical"} <= set(packaged.kinds) and len(packaged.documents) > 1000
    linker = Linker.load()
    config = with_span_sources(AnnotatorConfig(), None, packaged, "Disease")
    found = linker.annotate("Cisplatin toxicity and nephrotoxicity were seen in the patients.", config)
    assert {a.text for a in found} >= {"toxicity", "nephrotoxicity"}
    assert all("public corpora" in a.reason for a in found if a.text == "toxicity")


def test_a_linker_with_branches_keeps_taught_spans_to_them(learned: CorpusLexicon, terminology: Terminology) -> None:
    text = "Cisplatin nephrotoxicity in patients."
    config = with_span_sources(AnnotatorConfig(), None, learned)  # every kind the lexicon has
    assert [a.text for a in Linker(terminology).annotate(text, config)] == ["Cisplatin", "nephrotoxicity"]
    diseases_only = Linker(terminology, config=LinkerConfig(branches=("Disease",)))
    assert [a.text for a in diseases_only.annotate(text, config)] == ["nephrotoxicity"]


DRY_EYE, DES = "MESH:D015352", "MESH:D004054"


def test_a_short_form_the_text_defines_is_read_as_defined_not_as_taught() -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept(
                DRY_EYE, "Dry Eye Syndromes", [Name("dry eye syndrome", NameKind.ENTRY_TERM)], tree_numbers=("C11.1",)
            ),
            make_concept(DES, "Diethylstilbestrol", tree_numbers=("D04.1",)),
        ]
    )
    config = AnnotatorConfig(lexicon=Lexicon({"des": (DES,)}))
    linker = Linker(terminology)
    defined = linker.annotate("Dry eye syndrome (DES) was common. DES worsened.", config)
    assert [(a.text, a.concepts) for a in defined] == [
        ("Dry eye syndrome", (DRY_EYE,)),
        ("DES", (DRY_EYE,)),
        ("DES", (DRY_EYE,)),
    ]
    assert [a.concepts for a in linker.annotate("Prenatal DES exposure.", config)] == [(DES,)]  # not defined: taught


def test_a_form_annotated_only_in_capitals_teaches_only_capitals(terminology: Terminology) -> None:
    lexicon = Lexicon({"pan": (KIDNEY,)}, cased=frozenset({"pan"}))
    linker = Linker(terminology)
    assert linker.annotate("The pan was hot.", AnnotatorConfig(lexicon=lexicon)) == []
    assert [a.text for a in linker.annotate("PAN was given.", AnnotatorConfig(lexicon=lexicon))] == ["PAN"]


def test_the_learned_lexicon_marks_forms_seen_only_in_capitals(tmp_path: Path, terminology: Terminology) -> None:
    (a,), (b,) = _ids_in_folds(2, 1)
    path = _pubtator(
        tmp_path / "caps.pubtator",
        [
            (a, "PAN nephrosis; the pan.", [("PAN", "Chemical", "D011692")]),
            (b, "PAN again, and a pan.", [("PAN", "Chemical", "D011692")]),
        ],
    )
    learned = learn_corpus_lexicon(
        [LexiconSource("caps", load_corpus(f"pubtator:{path}"), ("Chemical",))], terminology, 2
    )
    (pan,) = [form for form in learned.forms if form.key == terminology.normalizer("PAN")]
    assert pan.cased and (pan.finds, pan.hits) == (2, 2)  # the lowercase "pan"s are no finds: the lesson skips them


def test_a_corpus_lexicon_that_is_off_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from medlink.linking.annotation import corpus_lexicon

    def damaged() -> None:
        raise MedlinkError("corpus-lexicon.json.gz: not a readable corpus lexicon")

    monkeypatch.setattr(corpus_lexicon, "packaged_corpus_lexicon", damaged)
    config = packaged_span_sources(AnnotatorConfig(corpus_lexicon=False), "none")
    assert config.corpus is None and config.tagger is None
    with pytest.raises(MedlinkError, match="not a readable corpus lexicon"):
        packaged_span_sources(AnnotatorConfig(), "none")


def test_a_users_documents_over_rule_a_form_they_never_mark(
    tmp_path: Path, learned: CorpusLexicon, terminology: Terminology
) -> None:
    text = "Nephrotoxicity was absent. No nephrotoxicity, said the nephrotoxicity panel."
    path = _pubtator(tmp_path / "mine.pubtator", [("1", text, [])])
    config = with_span_sources(AnnotatorConfig(branches=("C",)), None, learned, "Disease")
    own = learn_from_corpus(load_corpus(f"pubtator:{path}"), terminology, config)
    nephrotoxicity = terminology.normalizer("nephrotoxicity")
    assert nephrotoxicity in own.blocked
    assert nephrotoxicity not in lexicon_in_use(terminology, replace(config, lexicon=own)).concepts
    assert Linker(terminology).annotate("Cisplatin nephrotoxicity.", replace(config, lexicon=own)) == []


def test_an_entity_type_means_the_kinds_with_its_branches() -> None:
    assert kinds_of("Drug", ("Chemical", "Disease")) == ("Chemical",)
    assert kinds_of("disease", ("Chemical", "Disease")) == ("Disease",)
    assert kinds_of("Gene", ("Chemical", "Disease")) == ()


def test_the_service_takes_its_annotation_settings(learned: CorpusLexicon, terminology: Terminology) -> None:
    from medlink.serve.work import annotator_config

    linker = Linker(terminology)
    on = annotator_config(linker, with_span_sources(AnnotatorConfig(), None, learned), True, None)
    off = annotator_config(linker, AnnotatorConfig(corpus_lexicon=False, corpus=learned), False, None)
    assert lexicon_in_use(terminology, on).concepts and not lexicon_in_use(terminology, off).concepts
    assert on.context and not off.context


def test_a_capitals_only_lesson_says_nothing_in_a_note_written_in_capitals(terminology: Terminology) -> None:
    lexicon = Lexicon({"hit": (KIDNEY,)}, cased=frozenset({"hit"}))
    linker = Linker(terminology)
    assert linker.annotate("PT FELL AND HIT HEAD. NO LOSS OF CONSCIOUSNESS.", AnnotatorConfig(lexicon=lexicon)) == []
    found = linker.annotate("After heparin, HIT was suspected.", AnnotatorConfig(lexicon=lexicon))
    assert [a.text for a in found] == ["HIT"]


def test_a_short_form_never_tested_is_not_taught(terminology: Terminology) -> None:
    forms = (TaughtForm("Chemical", "ca", (OXYGEN,), 30, 0, 0), TaughtForm("Chemical", "li", (OXYGEN,), 30, 4, 4))
    taught = CorpusLexicon(forms, (), ("test",), frozenset()).lexicon(terminology, None, 0.3).concepts
    assert set(taught) == {"li"}  # "ca." is circa; a short form tested out of fold may teach


def test_untagged_kinds_are_kinds() -> None:
    with pytest.raises(MedlinkError, match="untagged_kinds: no kind 'Diseases'"):
        AnnotatorConfig(untagged_kinds=("Diseases",))
    assert AnnotatorConfig(untagged_kinds=("Drug", "disease")).untagged_kinds == ("Drug", "disease")


def test_a_composite_mention_teaches_every_part_or_nothing(tmp_path: Path, terminology: Terminology) -> None:
    (a, c), (b, _) = _ids_in_folds(2, 2)
    both = [("nephrotoxicity and tumor", "Disease", "D007674|D009369")]
    path = _pubtator(
        tmp_path / "composite.pubtator",
        [
            (a, "Cisplatin: nephrotoxicity and tumor.", both),
            (b, "Again nephrotoxicity and tumor.", both),
            (c, "Kidney and OMIM disease.", [("Kidney and OMIM disease", "Disease", "D007674|OMIM:123456")]),
        ],
    )
    learned = learn_corpus_lexicon(
        [LexiconSource("composite", load_corpus(f"pubtator:{path}"), ("Disease",))], terminology, 2
    )
    key, half = terminology.normalizer("nephrotoxicity and tumor"), terminology.normalizer("kidney and omim disease")
    forms = {form.key: form for form in learned.forms}
    assert (forms[key].concepts, forms[key].finds, forms[key].hits) == (("MESH:D007674|MESH:D009369",), 2, 2)
    lexicon = learned.lexicon(terminology, None, 0.3)
    assert lexicon.concepts[key] == (KIDNEY, "MESH:D009369")
    assert half in forms and half not in lexicon.concepts  # MeSH lacks the OMIM part: half an answer is wrong
    config = with_span_sources(AnnotatorConfig(context=False), None, learned)
    found = Linker(terminology).annotate("Nephrotoxicity and tumor were seen.", config)
    assert [(a.text, a.concepts) for a in found] == [("Nephrotoxicity and tumor", (KIDNEY, "MESH:D009369"))]


@pytest.mark.parametrize(("finds", "taught"), [(1, None), (5, (KIDNEY, "MESH:D009369"))])
def test_a_composite_over_a_name_needs_the_evidence_of_any_form_over_a_name(
    terminology: Terminology, finds: int, taught: tuple[str, ...] | None
) -> None:
    # "tumor" names Neoplasms: a composite adding Kidney Diseases to it must have been found 3 times out of fold
    corpus = CorpusLexicon((_form("tumor", (f"{KIDNEY}|MESH:D009369",), finds, finds),), (), ("test",), frozenset())
    assert corpus.lexicon(terminology, None, 0.3).concepts.get("tumor") == taught
