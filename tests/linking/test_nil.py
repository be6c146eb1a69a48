"""Nil by default: text that is not a term, generated negatives, the budget threshold, shipped and built
calibrations (issue 21, part 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from medlink import Linker, LinkerConfig, LinkResult, NilCause, Stage
from medlink.cli import main
from medlink.evaluation.calibration import budget_threshold, calibrate
from medlink.evaluation.corpus import Corpus, Gold, GoldMention
from medlink.evaluation.negatives import non_medical_negatives, random_string
from medlink.index import VectorIndex, build_index, ontology_entries
from medlink.linking.mentions.non_terms import control_characters, not_a_term, why_not_a_term
from medlink.linking.pipeline import exact_parts
from medlink.resources import default_nil_calibration
from medlink.terminology import Terminology, load_default_terminology
from medlink.terminology.records import Name, make_concept
from support import dense_linker


@pytest.fixture(scope="module")
def tiny() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack")]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure")]),
            make_concept("MESH:D014867", "Water"),
            make_concept("MESH:D000001", "A"),  # a one-letter name: a function word, but a name of this terminology
        ]
    )


@pytest.fixture(scope="module")
def tiny_index(tiny: Terminology, encoder, tmp_path_factory) -> VectorIndex:
    folder = build_index(ontology_entries(tiny), encoder, tmp_path_factory.mktemp("nil") / "i", tiny.fingerprint())
    return VectorIndex.load(folder)


def test_what_is_not_a_term() -> None:
    assert "function words" in not_a_term("of the")
    assert "no letters" in not_a_term("123 456")
    assert not_a_term("back pain") is None and not_a_term("back") is None  # content words among the stop words
    assert "U+0000, U+0001" in control_characters("x\0y\1")
    assert control_characters("line\tbreak\n") is None  # whitespace controls are ordinary text


def test_non_terms_are_nil_only_under_a_threshold(tiny: Terminology, tiny_index: VectorIndex, encoder) -> None:
    thresholded = dense_linker(tiny, tiny_index, encoder, config=LinkerConfig(nil_threshold=0.3))
    the, garbage, letter, real = thresholded.link_many(["the", "x\0y\1", "a", "heart attack"])
    assert the.stage is Stage.NIL and "function words" in the.reason
    assert garbage.stage is Stage.NIL and "control characters" in garbage.reason and garbage.mention == "x\0y\1"
    assert letter.stage is Stage.EXACT and real.concepts == ("MESH:D009203",)  # "a" is a name here
    assert why_not_a_term("a", tiny) is None and why_not_a_term("the", tiny) is not None
    off = dense_linker(tiny, tiny_index, encoder, config=LinkerConfig(nil_threshold=0))
    assert all(r.stage is not Stage.NIL for r in off.link_many(["the", "x\0y\1"]))  # 0 keeps every link


def test_negatives_halves_are_disjoint_deterministic_and_not_names(tiny: Terminology) -> None:
    calibration = non_medical_negatives(tiny, "calibration")
    held_out = non_medical_negatives(tiny, "held-out")
    assert calibration == non_medical_negatives(tiny, "calibration")
    words = {n.text for n in calibration if n.kind != "random string"}
    assert words and not words & {n.text for n in held_out}
    assert {n.kind for n in calibration} == {"stop word", "everyday noun", "random string"}
    assert "water" not in {n.text.lower() for n in calibration + held_out}  # a name of the terminology
    assert all(random_string(__import__("random").Random(seed)) for seed in range(50))
    with pytest.raises(ValueError, match="half must be"):
        non_medical_negatives(tiny, "test")


@pytest.mark.parametrize(
    ("tp", "nil", "n", "loss", "expected"),
    [
        ([0.5, 0.6, 0.7, 0.9], [0.65], 1000, 0.002, 0.65 + 1e-6),  # may lose 2: 0.7, capped at min-fp
        ([0.5, 0.6, 0.7, 0.9], [0.95], 1000, 0.002, 0.7),  # loses 0.5 and 0.6, keeps 0.7
        ([0.5, 0.6, 0.7, 0.9], [0.95], 100, 0.0, 0.5),  # nothing may be lost: max-tp
        ([], [0.9], 100, 0.01, None),
    ],
)
def test_budget_threshold(tp, nil, n, loss, expected) -> None:
    threshold = budget_threshold(tp, nil, n, loss)
    assert threshold == (pytest.approx(expected) if expected is not None else None)
    if threshold is not None:
        assert sum(s < threshold for s in tp) <= loss * n


def test_calibration_with_negatives_reports_what_each_threshold_catches(tiny, tiny_index, encoder) -> None:
    linker = dense_linker(tiny, tiny_index, encoder, "O-T")
    dev = Corpus(
        "dev",
        tuple(
            GoldMention(text, Gold.of([[concept]]))
            for text, concept in [
                ("myocardial infarct", "MESH:D009203"),
                ("blood pressure too high", "MESH:D006973"),
                ("cardiac infarction", "MESH:D009203"),
            ]
        ),
    )
    negatives = ["the", "x\0y\1", "umbrella stand", "qwerty uiop"]
    result = calibrate(linker, dev, negatives=negatives, max_loss=0.0)
    low, high = result.thresholds["max-tp"], result.thresholds["min-fp"]
    assert result.strategy == "budget" and result.threshold == min(low, high)  # 3 mentions: lose none
    assert result.negatives == 4 and result.negatives_nil is not None
    assert result.negatives_nil["budget"] >= 0.5  # the two refused before searching at least
    assert result.negatives_nil["min-fp"] == 1.0 and result.negatives_nil["none"] == 0.0


def test_a_term_model_makes_unlike_mentions_nil_only_under_a_threshold(tiny, tiny_index, encoder) -> None:
    from medlink.linking.mentions.term_model import TermJudge, TermModel
    from medlink.linking.sieves.dense import CachingEncoder

    shared = CachingEncoder(encoder)
    # weights that read only the best score: decision = score - 0.9, cut 0 -> nil below a score of 0.9
    model = TermModel((0.0,) * encoder.dimension + (1.0,), -0.9, 0.0, encoder.identity.fingerprint())
    assert TermModel.from_dict(model.to_dict()) == model
    linker = dense_linker(tiny, tiny_index, encoder, "O-T", LinkerConfig(nil_threshold=0.1))
    judged = Linker(linker.terminology, linker.sieves, linker.config, None, TermJudge(model, shared))
    close, far = judged.link_many(["myocardial infarction", "cardiac illness"])
    assert close.stage is Stage.DENSE and close.score >= 0.9
    assert far.stage is Stage.NIL and far.nil_cause is NilCause.TERM_TEST and "does not read as a term" in far.reason
    assert judged.with_config(LinkerConfig(nil_threshold=0)).link("cardiac illness").stage is Stage.DENSE
    with pytest.raises(ValueError, match="another encoder"):
        TermJudge(TermModel(model.weights, 0.0, 0.0, "other"), shared)
    with pytest.raises(ValueError, match="dimensions"):
        TermJudge(TermModel((1.0, 2.0), 0.0, 0.0, model.encoder), shared)


def test_calibration_fits_a_term_model_within_the_budget(tiny, tiny_index, encoder, tmp_path) -> None:
    from medlink.evaluation.nil_calibration import calibrate_with_negatives
    from medlink.index.update import update_manifest

    linker = dense_linker(tiny, tiny_index, encoder, "O-T")
    dev = Corpus(
        "dev",
        tuple(
            GoldMention(text, Gold.of([[concept]]))
            for text, concept in [
                ("myocardial infarct", "MESH:D009203"),
                ("blood pressure too high", "MESH:D006973"),
                ("cardiac infarction", "MESH:D009203"),
                ("hypertensive", "MESH:D006973"),
            ]
        ),
    )
    result = calibrate_with_negatives(linker, dev, max_loss=0.0, encoder=encoder)
    assert result.term_model is not None and result.threshold == result.thresholds["max-tp"]
    assert len(result.term_model["weights"]) == encoder.dimension + 1
    folder = build_index(ontology_entries(tiny), encoder, tmp_path / "judged", tiny.fingerprint())
    update_manifest(folder, nil_threshold=result.threshold, term_model=result.term_model)
    judged = dense_linker(tiny, VectorIndex.load(folder), encoder, "O-T")  # reads both from the manifest
    assert judged.term_test is not None and judged.term_test.cut == result.term_model["cut"]
    assert all(r.stage is Stage.DENSE for r in judged.link_many([m.text for m in dev]))  # no budget to lose any


def test_a_config_keeps_the_index_threshold_unless_it_sets_one(tiny, tiny_index, encoder, tmp_path) -> None:
    from medlink.index.update import update_manifest

    folder = tmp_path / "calibrated"
    build_index(ontology_entries(tiny), encoder, folder, tiny.fingerprint())
    update_manifest(folder, nil_threshold=0.99)
    index = VectorIndex.load(folder)
    assert dense_linker(tiny, index, encoder, config=LinkerConfig(cache_size=10)).config.nil_threshold == 0.99
    assert dense_linker(tiny, index, encoder, config=LinkerConfig(nil_threshold=0)).config.nil_threshold == 0
    linker = dense_linker(tiny, index, encoder)
    assert linker.link("cardiac illness").nil_cause is NilCause.THRESHOLD
    # other settings that set no threshold keep the index's (a linker made with it, or one changed afterwards)
    assert linker.with_config(LinkerConfig(cache_size=10)).link("cardiac illness").nil_cause is NilCause.THRESHOLD
    assert linker.with_config(LinkerConfig(nil_threshold=0)).link("cardiac illness").stage is Stage.DENSE


@pytest.mark.slow
def test_the_embedded_default_says_no_concept() -> None:
    shipped = default_nil_calibration()
    assert shipped is not None and 0 < shipped["threshold"] < 1
    assert shipped["terminology"] == load_default_terminology().fingerprint()
    linker = Linker.load()
    assert linker.config.nil_threshold == pytest.approx(shipped["threshold"]) and linker.term_test is not None
    # nearest name 'Round Window, Ear', 0.62: above the threshold, unlike a term ("umbrella" was the example until
    # MeSH 2024 named a plant "Umbrella Tree": docs/accuracy.md)
    window = linker.link("window")
    assert window.nil_cause is NilCause.TERM_TEST and "does not read as a term" in window.reason
    garbage, the, control, real = linker.link_many(["qwerty uiop", "the", "x\0y\1", "myocardial infarctoin"])
    assert garbage.nil_cause is NilCause.THRESHOLD
    assert f"below the nil threshold {shipped['threshold']:.3f}" in garbage.reason
    assert the.nil_cause is NilCause.NOT_A_TERM and control.nil_cause is NilCause.NOT_A_TERM
    assert real.concept_id == "MESH:D009203" and real.nil_cause is None
    assert Linker.load(config=LinkerConfig(nil_threshold=0)).link("qwerty uiop").stage is Stage.DENSE
    # the trap of issue 56: new settings that set no threshold kept the default's calibrated one nowhere
    assert linker.with_config(LinkerConfig()).link("qwerty uiop").nil_cause is NilCause.THRESHOLD
    assert linker.with_config(LinkerConfig(nil_threshold=0)).link("qwerty uiop").stage is Stage.DENSE


def test_every_nil_says_its_cause_as_data(tiny: Terminology, tiny_index: VectorIndex, encoder) -> None:
    linker = dense_linker(tiny, tiny_index, encoder, "O-T", LinkerConfig(nil_threshold=0.99, max_mention_chars=50))
    weak, long, binary, stop = linker.link_many(["cardiac illness", "x" * 51, "a\0b", "the"])
    assert [r.nil_cause for r in (weak, long, binary, stop)] == [
        NilCause.THRESHOLD,
        NilCause.TOO_LONG,
        NilCause.NOT_A_TERM,
        NilCause.NOT_A_TERM,
    ]
    exact = Linker.from_parts(exact_parts(tiny))
    assert exact.link("cardiac illness").nil_cause is NilCause.NO_CANDIDATE
    mesh = Linker.load(exact_only=True, embedded="descriptors", config=LinkerConfig(branches=("D",)))
    assert mesh.link("heart attack").nil_cause is NilCause.OUT_OF_SCOPE  # a disease, asked among chemicals
    found = linker.with_config(LinkerConfig(nil_threshold=0)).link("heart attack")
    assert found.nil_cause is None and LinkResult.from_dict(weak.to_dict()) == weak  # it travels as JSON
    assert weak.to_dict()["nil_cause"] == "threshold"


def test_index_build_with_training_mentions_calibrates(fixtures: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    terminology, index = tmp_path / "term", tmp_path / "index"
    compiled = runner.invoke(
        main,
        ["terminology", "compile", f"mesh-desc-tsv:{fixtures / 'mesh_descriptors_tiny.tsv'}", "-o", str(terminology)],
    )
    assert compiled.exit_code == 0, compiled.output
    train = tmp_path / "train.tsv"
    train.write_text("heart attack\tMESH:D009203\ncardiac illness\tMESH:D006331\nmyocardial infarct\tMESH:D009203\n")
    built = runner.invoke(
        main, ["index", "build", "--terminology", str(terminology), "--train", f"tsv:{train}", "-o", str(index)]
    )
    assert built.exit_code == 0, built.output
    assert "nil: threshold" in built.output and "term model" in built.output
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["calibration"]["strategy"] == "max-tp + term model" and 0 < manifest["nil_threshold"] <= 1
    assert len(manifest["term_model"]["weights"]) == 385 and "term_model" not in manifest["calibration"]
    VectorIndex.load(index)  # the manifest change keeps the files' checksums valid
    linked = json.loads(runner.invoke(main, ["link", "--index", str(index), "--format", "json", "the"]).output)
    assert linked["stage"] == "nil"
    plain = tmp_path / "plain"
    runner.invoke(
        main,
        [
            "index",
            "build",
            "--terminology",
            str(terminology),
            "--train",
            f"tsv:{train}",
            "--no-calibrate",
            "-o",
            str(plain),
        ],
    )
    assert "nil_threshold" not in json.loads((plain / "manifest.json").read_text())


@pytest.mark.slow
def test_calibrate_fits_a_form_test_for_an_index_of_ones_own(tmp_path: Path) -> None:
    """A terminology of 3,000 MeSH diseases and drugs: calibrate stores a form test fitted on the corpus's right
    decisions against the look-alikes its held-out concepts give (too few drug names to invent from); the linker
    uses it."""
    from medlink.linking.mentions.form import FEATURES
    from medlink.terminology import Terminology, load_default_terminology
    from medlink.terminology.store import save_terminology

    mesh = load_default_terminology()
    chosen = [c for c in mesh if any(t.startswith(("C", "D")) for t in c.tree_numbers)][::5][:3_000]
    terminology = Terminology.from_concepts(chosen, normalizer=mesh.normalizer)
    save_terminology(terminology, tmp_path / "term")
    runner = CliRunner()
    built = runner.invoke(main, ["index", "build", "--terminology", str(tmp_path / "term"), "-o", str(tmp_path / "i")])
    assert built.exit_code == 0, built.output
    misspelled = [
        (name[:2] + name[3] + name[2] + name[4:], c.id)
        for c in chosen[::10]
        if len(name := c.preferred_name) > 8 and " " not in name
    ]
    corpus = tmp_path / "dev.tsv"
    corpus.write_text("".join(f"{text}\t{concept}\n" for text, concept in misspelled), encoding="utf-8")
    result = runner.invoke(main, ["calibrate", "--index", str(tmp_path / "i"), "--corpus", f"tsv:{corpus}"])
    assert result.exit_code == 0, result.output
    assert "look-alikes caught: " in result.output and "stored the form test" in result.output
    manifest = json.loads((tmp_path / "i" / "manifest.json").read_text())
    assert len(manifest["form_model"]["weights"]) == len(FEATURES)
    assert set(manifest["form_calibration"]["examples"]) == {"corpus", "held-out concepts"}
    assert Linker.load(tmp_path / "i").form_test is not None
