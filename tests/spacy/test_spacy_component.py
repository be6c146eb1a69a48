"""The spaCy component on a blank English pipeline with an EntityRuler and real weights (the embedded default)."""

from __future__ import annotations

import subprocess
import sys

import pytest

spacy = pytest.importorskip("spacy", reason="the spaCy component needs the [spacy] extras")

from spacy.tokens import DocBin  # noqa: E402

from medlink.errors import MedlinkError  # noqa: E402

PATTERNS = [
    {"label": "DISEASE", "pattern": text} for text in ("heart attack", "WD", "Wilson disease", "myocardial infarctoin")
] + [{"label": "DRUG", "pattern": "aspirin"}]


@pytest.fixture(scope="module")
def nlp():
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(PATTERNS)
    pipeline.add_pipe("medlink_linker")  # found through the entry point; the embedded default, exact → dense
    return pipeline


@pytest.mark.slow
def test_entities_get_results_and_concepts(nlp) -> None:
    doc = nlp("Patients with Wilson disease (WD) had a heart attack or a myocardial infarctoin.")
    linked = {span.text: span for span in doc.ents}
    assert linked["heart attack"]._.concepts == ("MESH:D009203",)
    assert linked["myocardial infarctoin"]._.medlink.stage.value == "dense"
    assert linked["myocardial infarctoin"]._.concepts == ("MESH:D009203",)
    assert linked["WD"]._.concepts == ("MESH:D006527",)  # expanded from the document
    assert "abbreviation expanded" in linked["WD"]._.medlink.reason


@pytest.mark.slow
def test_pipe_with_two_processes_matches_one(nlp) -> None:
    texts = [
        "She had a heart attack.",
        "WD, that is Wilson disease (WD).",
        "No entity here.",
        "A myocardial infarctoin after aspirin.",
    ] * 6
    single = [[(span.text, span._.concepts) for span in doc.ents] for doc in nlp.pipe(texts, batch_size=4)]
    double = [[(span.text, span._.concepts) for span in doc.ents] for doc in nlp.pipe(texts, batch_size=4, n_process=2)]
    assert double == single
    assert single[0] == [("heart attack", ("MESH:D009203",))]


@pytest.mark.slow
def test_docs_keep_their_results_through_docbin(nlp) -> None:
    doc = nlp("She had a heart attack.")
    restored = next(iter(DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab)))
    assert restored.ents[0]._.medlink.concepts == ("MESH:D009203",)


def test_labels_and_exact_only_config() -> None:
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(PATTERNS)
    pipeline.add_pipe("medlink_linker", config={"exact_only": True, "labels": ["DRUG"]})
    doc = pipeline("A heart attack after aspirin.")
    concepts = {span.text: span._.concepts for span in doc.ents}
    assert concepts["heart attack"] == ()  # not a DRUG: left alone
    assert concepts["aspirin"] == ("MESH:D001241",)


def test_factory_is_registered_by_the_entry_point_alone() -> None:
    code = (
        "import spacy; nlp = spacy.blank('en'); nlp.add_pipe('medlink_linker', config={'exact_only': True}); "
        "print(nlp.pipe_names)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "medlink_linker" in completed.stdout


@pytest.mark.slow
def test_nil_threshold_config_reaches_the_linker() -> None:
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(PATTERNS)
    pipeline.add_pipe("medlink_linker", config={"nil_threshold": 0.99})
    [span] = pipeline("A myocardial infarctoin.").ents
    assert span._.medlink.stage.value == "nil" and span._.concepts == ()
    assert "below the nil threshold" in span._.medlink.reason


def test_the_annotator_component_needs_no_upstream_ner() -> None:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("medlink_annotator", config={"exact_only": True, "entity_type": "Disease"})
    doc = nlp("No evidence of myocardial infarction; possible pneumonia.")
    assert [(e.text, e.label_, e._.concepts, e._.negated, e._.uncertain) for e in doc.ents] == [
        ("myocardial infarction", "DISEASE", ("MESH:D009203",), True, False),
        ("pneumonia", "DISEASE", ("MESH:D011014",), False, True),
    ]
    assert doc.ents[0]._.medlink.stage.value == "exact"


def test_the_linker_table_sets_any_linker_setting_and_is_checked() -> None:
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(PATTERNS)
    pipeline.add_pipe("medlink_linker", config={"exact_only": True, "linker": {"branches": ["D"]}})
    concepts = {span.text: span._.concepts for span in pipeline("A heart attack after aspirin.").ents}
    assert concepts == {"heart attack": (), "aspirin": ("MESH:D001241",)}  # only chemicals and drugs (D) may link
    with pytest.raises(MedlinkError, match="config 'linker': no setting 'branch' \\(did you mean 'branches'"):
        spacy.blank("en").add_pipe("medlink_linker", config={"exact_only": True, "linker": {"branch": ["D"]}})


def test_a_pipeline_with_the_linker_saves_and_loads_with_its_settings(tmp_path) -> None:
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(PATTERNS)
    pipeline.add_pipe("medlink_linker", config={"exact_only": True, "linker": {"branches": ["Chemical"]}})
    pipeline.to_disk(tmp_path / "nlp")  # every label linked: spaCy's meta lists none
    loaded = spacy.load(tmp_path / "nlp")
    concepts = {span.text: span._.concepts for span in loaded("A heart attack after aspirin.").ents}
    assert concepts == {"heart attack": (), "aspirin": ("MESH:D001241",)}
    assert loaded.get_pipe("medlink_linker").labels == ()
