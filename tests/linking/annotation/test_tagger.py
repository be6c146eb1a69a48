"""The span tagger (windows, BIO decoding, training targets, a real training run exported to ONNX, the packaged
tagger's real weights) and approximate names (against a brute-force Jaccard)."""

from __future__ import annotations

import pickle
import re
import shutil
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medlink.errors import MedlinkError
from medlink.linking import Linker
from medlink.linking.annotation.annotator import AnnotatorConfig, with_span_sources
from medlink.linking.annotation.approximate import ApproximateNames, trigrams
from medlink.linking.annotation.spans import Span, tagged_spans, without_overlaps
from medlink.linking.annotation.tagger import SpanTagger, TaggedSpan, TaggerCard, choose_tagger, decode, windows_of
from medlink.linking.annotation.witnesses import TaggingInBackground, tagged_spans_of
from medlink.terminology import Terminology
from medlink.terminology.records import Name, NameKind, make_concept
from medlink.training.span_tagger_fit import TaggedDocument, bio_labels, token_targets

LABELS = bio_labels(["Chemical", "Disease"])  # O, B-Chemical, I-Chemical, B-Disease, I-Disease


@given(st.integers(1, 2000), st.integers(8, 300), st.integers(0, 7))
def test_windows_are_few_equal_and_cover_every_token_sharing_the_overlap(length: int, body: int, overlap: int) -> None:
    windows = windows_of(length, body, overlap)
    covered = np.zeros(length, dtype=bool)
    for start, end in windows:
        covered[start:end] = True
        assert 0 <= start < end <= length and end - start <= body
    assert covered.all()
    assert len({end - start for start, end in windows}) == 1
    assert all(second[0] < first[1] - overlap + 1 for first, second in pairwise(windows))  # share ≥ overlap
    fewest = 1 if length <= body else -(-(length - body) // (body - overlap)) + 1
    assert len(windows) == fewest


def test_a_document_a_little_longer_than_a_window_is_read_in_two_halves() -> None:
    assert windows_of(300, 254, 32) == [(0, 166), (134, 300)]


def _logits(labels: list[str]) -> np.ndarray:
    scores = np.full((len(labels), len(LABELS)), -5.0, dtype=np.float32)
    for row, label in enumerate(labels):
        scores[row, LABELS.index(label)] = 5.0
    return scores


def test_decode_makes_whole_word_spans_from_bio_tags() -> None:
    text = "Cisplatin nephrotoxicity and heart failure."
    # word pieces: Cis|platin nephro|toxicity and heart failure .
    offsets = [(0, 3), (3, 9), (10, 16), (16, 24), (25, 28), (29, 34), (35, 42), (42, 43)]
    tags = ["B-Chemical", "O", "B-Disease", "O", "O", "I-Disease", "I-Disease", "O"]  # pieces' own tags are ignored
    spans = decode(LABELS, _logits(tags), offsets, text)
    assert [(text[s.start : s.end], s.entity_type) for s in spans] == [
        ("Cisplatin", "Chemical"),
        ("nephrotoxicity", "Disease"),
        ("heart failure", "Disease"),
    ]
    assert all(0.99 < s.score <= 1 for s in spans)


def test_a_type_change_inside_a_run_starts_a_new_span() -> None:
    text = "lithium toxicity"
    spans = decode(LABELS, _logits(["B-Chemical", "I-Disease"]), [(0, 7), (8, 16)], text)
    assert [(s.start, s.end, s.entity_type) for s in spans] == [(0, 7, "Chemical"), (8, 16, "Disease")]


def test_training_targets_teach_only_what_the_corpus_annotates() -> None:
    text = "Cisplatin nephrotoxicity"
    offsets = [(0, 3), (3, 9), (10, 16), (16, 24)]
    ncbi = TaggedDocument(text, ((10, 24, "Disease"),), frozenset({"Disease"}))
    allowed = token_targets(ncbi, offsets, LABELS)
    assert set(np.flatnonzero(allowed[0])) == {0, 1, 2}  # outside for diseases; a chemical is not taught either way
    assert not allowed[1].any() and not allowed[3].any()  # later pieces of a word are not taught
    assert np.flatnonzero(allowed[2]).tolist() == [LABELS.index("B-Disease")]
    cdr = TaggedDocument(text, ((0, 9, "Chemical"), (10, 24, "Disease")), frozenset({"Chemical", "Disease"}))
    assert np.flatnonzero(token_targets(cdr, offsets, LABELS)[0]).tolist() == [LABELS.index("B-Chemical")]


def test_overlapping_spans_keep_the_best_ranked_in_text_order() -> None:
    text = "acute lithium toxicity was seen"
    tagged = tagged_spans([TaggedSpan(0, 22, "Disease", 0.9)], text, str.lower)
    dictionary = [Span(6, 13, "lithium", key="lithium"), Span(26, 30, "seen", key="seen")]
    kept = without_overlaps([*tagged, *dictionary])
    assert [(s.text, s.tagged) for s in kept] == [("acute lithium toxicity", "Disease, 0.90"), ("seen", None)]
    assert [s.text for s in without_overlaps([dictionary[0], *tagged])] == ["lithium"]


def _brute_force(names: list[str], key: str, threshold: float) -> float:
    query = trigrams(key)
    best = max((len(query & trigrams(n)) / len(query | trigrams(n)) for n in names), default=0.0)
    return best if best >= threshold else 0.0


WORDS = st.text(alphabet="abcdeior ", min_size=1, max_size=14).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=30, unique=True), WORDS, st.sampled_from([0.5, 0.7, 0.8, 1.0]))
def test_approximate_names_find_what_brute_force_jaccard_finds(names: list[str], key: str, threshold: float) -> None:
    found = ApproximateNames(names, threshold).nearest(key)
    expected = _brute_force(names, key, threshold)
    assert (found.similarity if found else 0.0) == pytest.approx(expected)


def test_approximate_spans_link_as_the_name_they_resemble() -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept(
                "MESH:D009203",
                "Myocardial Infarction",
                [Name("heart attack", NameKind.ENTRY_TERM)],
                tree_numbers=("C14.280.647.500",),
            )
        ]
    )
    linker = Linker(terminology)
    typo = "She had a myocardal infarction last year."
    assert linker.annotate(typo, AnnotatorConfig()) == []
    config = AnnotatorConfig(approximate=ApproximateNames(terminology.normalized_names(), 0.7))
    [found] = linker.annotate(typo, config)
    assert (found.text, found.concepts) == ("myocardal infarction", ("MESH:D009203",))
    assert "approximate match of the name 'myocardial infarction'" in found.reason
    with pytest.raises(ValueError, match="threshold"):
        ApproximateNames(["x"], 0)


def test_a_tagger_folder_is_checked() -> None:
    with pytest.raises(MedlinkError, match="no such folder"):
        choose_tagger("/nonexistent/tagger")
    assert choose_tagger("none") is None


@pytest.fixture(scope="module")
def packaged() -> SpanTagger:
    tagger = choose_tagger("auto")
    if tagger is None:
        pytest.skip("medlink-span-tagger is not installed (pip install -e packages/medlink-span-tagger)")
    return tagger


def test_the_packaged_tagger_finds_diseases_and_chemicals_with_real_weights(packaged: SpanTagger) -> None:
    text = "Cisplatin-induced nephrotoxicity was ruled out, but the patient developed congestive heart failure."
    spans = {(text[s.start : s.end], s.entity_type) for s in packaged.tag([text])[0]}
    assert ("nephrotoxicity", "Disease") in spans
    assert ("congestive heart failure", "Disease") in spans
    assert ("Cisplatin", "Chemical") in spans
    assert packaged.tag([""]) == [[]]
    odd = text.replace(", but", ",\ud800but")  # a lone surrogate (JSON allows one) is read as U+FFFD, not a crash
    assert packaged.tag([odd]) == packaged.tag([text.replace(", but", ",\ufffdbut")])
    copy = pickle.loads(pickle.dumps(packaged))  # as a Spark worker gets it: it opens its own session
    assert copy.tag([text]) == packaged.tag([text])


def test_a_long_document_is_read_in_windows_with_the_same_spans(packaged: SpanTagger) -> None:
    sentence = "The patient developed congestive heart failure after doxorubicin. "
    long = sentence * 60  # about 700 word pieces: three windows
    spans = packaged.tag([long])[0]
    ends = {(s.end, s.entity_type) for s in spans}
    # every sentence, in every window, edges included: a disease ending at "failure", a chemical at "doxorubicin"
    assert all((m.end(), "Disease") in ends for m in re.finditer("failure", long))
    assert all((m.end(), "Chemical") in ends for m in re.finditer("doxorubicin", long))


class _ChunksOfTwo(TaggingInBackground):
    chunk = 2


def test_a_documents_spans_do_not_depend_on_the_documents_beside_it(packaged: SpanTagger) -> None:
    # a dynamically quantized model scales activations by the batch's: read in batches, 11.5 % of NCBI-disease
    # test's spans changed with the neighbours
    texts = [
        "Cisplatin nephrotoxicity was ruled out.",
        "The patient developed congestive heart failure after doxorubicin. " * 8,
        "Lithium-induced polyuria and diabetes insipidus in a 40-year-old woman.",
        "Famotidine-associated delirium. A series of six cases of hypertension and hypokalemia.",
    ]
    assert packaged.tag(texts) == [packaged.tag([text])[0] for text in texts]
    assert packaged.tag(texts[::-1]) == packaged.tag(texts)[::-1]
    assert SpanTagger(packaged.folder, threads=1).tag(texts) == SpanTagger(packaged.folder, threads=3).tag(texts)


def test_the_tagger_counts_its_threads_where_the_os_cannot_say_which_cpus_it_may_use(
    packaged: SpanTagger, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # macOS, Windows
    assert SpanTagger(packaged.folder)._workers() == (os.cpu_count() or 1)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # a service's worker process, a Spark worker
    assert SpanTagger(packaged.folder)._workers() == 3 and SpanTagger(packaged.folder, threads=2)._workers() == 2


def test_tagging_in_background_gives_every_text_its_own_spans_in_order(packaged: SpanTagger) -> None:
    texts = ["Cisplatin nephrotoxicity.", "", "The patient denies chest pain.", "Heart failure after doxorubicin.", "x"]
    kinds = ("Chemical", "Disease")
    alone = [tagged_spans_of([text], packaged, kinds)[0] for text in texts]
    with _ChunksOfTwo(texts, packaged, kinds) as background:  # three chunks, read while this thread waits
        assert background.result() == alone
    with _ChunksOfTwo(texts, packaged, ("Chemical",)) as background:
        assert {s.entity_type for spans, _ in background.result() for s in spans} == {"Chemical"}
    with _ChunksOfTwo(texts, None, kinds) as background:  # no tagger: nothing read, every text said so
        assert background.result() == [([], False)] * len(texts)


def test_leaving_the_background_tagging_early_cancels_what_has_not_started(packaged: SpanTagger) -> None:
    texts = ["Cisplatin nephrotoxicity."] * 40
    background = _ChunksOfTwo(texts, packaged, ("Disease",))
    with pytest.raises(RuntimeError, match="the caller failed"), background:
        raise RuntimeError("the caller failed")
    assert any(chunk.cancelled() for chunk in background._chunks)  # twenty chunks: most never ran
    assert all(chunk.done() for chunk in background._chunks)  # and none is left running


def _embeddings_type(model: Path) -> int:
    import onnx

    graph = onnx.load(str(model)).graph
    vocabulary = max(int(dims[0]) for dims in (i.dims for i in graph.initializer) if len(dims) == 2)
    return next(i.data_type for i in graph.initializer if len(i.dims) == 2 and i.dims[0] == vocabulary)


def test_the_packaged_taggers_embeddings_are_8_bit(packaged: SpanTagger) -> None:
    import onnx

    assert _embeddings_type(packaged.folder / "model.onnx") == onnx.TensorProto.UINT8  # 16 MB where fp32 took 51


def test_a_tagger_knows_the_corpus_files_it_was_trained_on(packaged: SpanTagger) -> None:
    trained = packaged.card.trained_on[0]
    for name in (trained, f"{trained} [Disease]", f"{trained}.gz", trained.upper()):
        assert packaged.learned_from(name), name
    for name in ("unseen.PubTator.txt", f"x{trained}", f"{trained}.bak"):
        assert not packaged.learned_from(name), name


def test_tagger_and_dictionary_are_each_others_witness(packaged: SpanTagger, tmp_path: Path) -> None:
    terminology = Terminology.from_concepts(
        [
            make_concept(
                "MESH:D007674",
                "Kidney Diseases",
                [Name("nephrotoxicity", NameKind.ENTRY_TERM)],
                tree_numbers=("C12.777.419",),
            ),
            make_concept("MESH:D999999", "Daily Disorder", [Name("daily", NameKind.ENTRY_TERM)], tree_numbers=("C99",)),
        ]
    )
    linker = Linker(terminology)
    text = "Severe nephrotoxicity followed gentamicin; the patient was seen daily."
    assert [a.text for a in linker.annotate(text, AnnotatorConfig())] == ["nephrotoxicity", "daily"]  # no tagger
    tagged = linker.annotate(text, with_span_sources(AnnotatorConfig(), packaged, None, "Disease"))
    assert [a.text for a in tagged] == ["nephrotoxicity"]  # "daily" is a name, but no mention to the tagger
    assert "span found by the tagger (Disease" in tagged[0].reason
    both = linker.annotate(text, with_span_sources(AnnotatorConfig(), packaged, None))
    assert [a.text for a in both] == ["nephrotoxicity"]  # every kind: every name needs a witness
    assert [a.text for a in linker.annotate(text)] == ["nephrotoxicity"]  # the default: the packaged tagger, every kind
    # Kinds the packaged tagger is not used for (a research setting): their names stand alone, the others' do not
    untagged = with_span_sources(AnnotatorConfig(untagged_kinds=("Disease",)), packaged, None)
    assert [a.text for a in linker.annotate(text, untagged)] == ["nephrotoxicity", "daily"]
    chemical = Linker(Terminology.from_concepts([make_concept("MESH:D1", "Daily", tree_numbers=("D01",))]))
    assert chemical.annotate(text, untagged) == []  # a chemical name still needs the tagger's witness
    # ... also in a text where the tagger found a disease and no chemical at all
    assert chemical.annotate("Severe nephrotoxicity was seen daily.", untagged) == []
    # A tagger of one's own reads for every kind it knows: untagged kinds are the packaged one's
    own = tmp_path / "own-tagger"
    shutil.copytree(packaged.folder, own)
    mine = with_span_sources(AnnotatorConfig(untagged_kinds=("Disease",)), SpanTagger(own), None, "Disease")
    assert [a.text for a in linker.annotate(text, mine)] == ["nephrotoxicity"]


@pytest.mark.slow
@pytest.mark.parametrize("teacher_layers", [None, 2])
def test_training_a_tagger_exports_an_onnx_folder_that_learned(tmp_path: Path, teacher_layers: int | None) -> None:
    from medlink.encoders import packaged_minilm_path
    from medlink.training.span_tagger_fit import TaggerTrainingConfig, train_span_tagger

    texts = [
        "Aspirin caused gastric ulcer in two patients.",
        "Heparin led to thrombocytopenia.",
        "Gastric ulcer after aspirin is common.",
        "Thrombocytopenia was seen with heparin.",
    ]
    terms = {
        "Aspirin": "Chemical",
        "aspirin": "Chemical",
        "Heparin": "Chemical",
        "heparin": "Chemical",
        "gastric ulcer": "Disease",
        "Gastric ulcer": "Disease",
        "thrombocytopenia": "Disease",
        "Thrombocytopenia": "Disease",
    }
    documents = [
        TaggedDocument(
            text,
            tuple(sorted((text.index(t), text.index(t) + len(t), k) for t, k in terms.items() if t in text)),
            frozenset({"Chemical", "Disease"}),
        )
        for text in texts
    ]
    reports: list[str] = []
    folder = train_span_tagger(
        documents,
        str(packaged_minilm_path()),
        tmp_path / "tagger",
        ["toy"],
        TaggerTrainingConfig(
            epochs=30,
            batch_size=4,
            learning_rate=3e-4,
            layers=1,
            quantize="int8" if teacher_layers else "none",  # each export path once
            teacher_layers=teacher_layers,
        ),
        report=reports.append,
    )
    card = TaggerCard.load(folder)
    assert card.entity_types == ("Chemical", "Disease") and card.trained_on == ("toy",)
    assert ("distilled from 2 layers" in card.base) == (teacher_layers == 2)
    assert any("the teacher, 2 layers" in line for line in reports) == (teacher_layers == 2)
    if teacher_layers:
        import onnx

        assert _embeddings_type(folder / "model.onnx") == onnx.TensorProto.UINT8
    found = SpanTagger(folder).tag(["Heparin caused gastric ulcer."])[0]
    assert [(s.start, s.end, s.entity_type) for s in found] == [(0, 7, "Chemical"), (15, 28, "Disease")]
    (folder / "tagger.json").write_text('{"format": "other"}')
    with pytest.raises(MedlinkError, match="train it again"):
        SpanTagger(folder)


def test_auto_means_no_tagger_beside_training_documents(packaged: SpanTagger) -> None:
    from medlink.cli.span_options import span_config

    terminology = Terminology.from_concepts([make_concept("MESH:D007674", "Kidney Diseases")])
    assert span_config(AnnotatorConfig(), terminology, "auto", None, None).tagger is not None
    assert span_config(AnnotatorConfig(), terminology, "auto", None, None, trained=True).tagger is None
    forced = span_config(AnnotatorConfig(), terminology, str(packaged.folder), 0.8, "disease", trained=True)
    assert forced.tagger is not None and forced.tagged_kinds == ("Disease",) and forced.approximate is not None


def test_annotate_names_a_missing_tagger_folder() -> None:
    from click.testing import CliRunner

    from medlink.cli import main

    result = CliRunner().invoke(main, ["annotate", "--exact-only", "--tagger", "/nonexistent/tagger", "heart attack"])
    assert result.exit_code != 0 and "no such folder" in result.output


def test_the_distillation_loss_is_zero_only_where_the_student_agrees_and_ignores_untaught_tokens() -> None:
    import torch

    from medlink.training.span_tagger_fit import distillation_loss

    teacher = torch.tensor([[[4.0, 0.0, 1.0], [0.0, 3.0, 0.0], [9.0, -9.0, 0.0]]])
    taught = torch.tensor([[True, True, False]])
    assert float(distillation_loss(teacher.clone(), teacher, taught, 2.0)) == pytest.approx(0.0, abs=1e-6)
    disagreeing = teacher.clone()
    disagreeing[0, 0] = torch.tensor([0.0, 4.0, 1.0])
    assert float(distillation_loss(disagreeing, teacher, taught, 2.0)) > 0.1
    untaught_only = teacher.clone()
    untaught_only[0, 2] = torch.tensor([-9.0, 9.0, 0.0])  # the third token is not taught: no loss
    assert float(distillation_loss(untaught_only, teacher, taught, 2.0)) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.slow
def test_the_gpu_recipe_packs_trains_and_finishes_a_tagger_through_files_small_enough_to_travel(
    tmp_path: Path,
) -> None:
    """scripts/gpu_span_tagger.py as a GPU machine runs it, on the CPU: pack here, train from the packed folder
    alone, split the tensors into files of at most CHUNK_BYTES, and join them again into an ONNX tagger."""
    import argparse
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gpu_span_tagger", Path(__file__).parents[3] / "scripts" / "gpu_span_tagger.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    lines = []
    for number, (text, spans) in enumerate(
        [
            ("Aspirin caused gastric ulcer.", [(0, 7, "Aspirin", "Chemical"), (15, 28, "gastric ulcer", "Disease")]),
            (
                "Heparin led to thrombocytopenia.",
                [(0, 7, "Heparin", "Chemical"), (15, 31, "thrombocytopenia", "Disease")],
            ),
        ]
        * 2
    ):
        lines += [f"{number}|t|{text}", f"{number}|a|"]
        lines += [f"{number}\t{start}\t{end}\t{words}\t{kind}\tD00000{number}" for start, end, words, kind in spans]
        lines.append("")
    corpus = tmp_path / "toy.PubTator.txt"
    corpus.write_text("\n".join(lines) + "\n")
    packed, weights, output = tmp_path / "packed", tmp_path / "out", tmp_path / "tagger"
    script.pack(argparse.Namespace(corpus=[f"pubtator:{corpus}"], base="minilm", output=packed))
    script.train(argparse.Namespace(packed=packed, output=weights, epochs=25, layers=1, teacher_layers=1))
    files = sorted(weights.glob("part*.safetensors"))
    assert len(files) >= 2 and all(f.stat().st_size <= script.CHUNK_BYTES + 100_000 for f in files)
    script.finish(argparse.Namespace(packed=packed, weights=weights, output=output))
    card = TaggerCard.load(output)
    assert card.trained_on == ("toy.PubTator.txt",) and "distilled from 1 layers" in card.base
    found = SpanTagger(output).tag(["Heparin caused gastric ulcer."])[0]
    assert [(s.start, s.end, s.entity_type) for s in found] == [(0, 7, "Chemical"), (15, 28, "Disease")]
