"""Training with the real MiniLM: examples, positive batches, a few steps, resume after an interruption."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from medlink.terminology import Terminology
from medlink.terminology.records import Name, make_concept
from medlink.training.examples import training_examples
from medlink.training.registry import LOSSES, resolve
from medlink.training.samplers.positive_batches import PositiveBatchSampler
from medlink.training.trainer import TrainConfig, train


@pytest.fixture(scope="module")
def terminology() -> Terminology:
    return Terminology.from_concepts(
        [
            make_concept("MESH:D009203", "Myocardial Infarction", [Name("Heart Attack"), Name("MI")]),
            make_concept("MESH:D003424", "Crohn Disease", [Name("Regional Enteritis")]),
            make_concept("MESH:D007052", "Ibuprofen", [Name("Motrin"), Name("Advil")]),
            make_concept("MESH:D006973", "Hypertension", [Name("High Blood Pressure")]),
            make_concept("MESH:D003920", "Diabetes Mellitus"),  # one name: nothing to pair it with
        ]
    )


def test_examples_pair_names_and_repeat_mentions(terminology) -> None:
    examples = training_examples(terminology)
    assert len(examples) == 10 and len(examples.concepts) == 4  # 3 + 2 + 3 + 2 names
    assert "Diabetes Mellitus" not in examples.texts
    with_mentions = training_examples(terminology, [("heart atack", "MESH:D009203"), ("x", "MESH:NOPE")])
    assert len(with_mentions) == 10 + 3  # round(10 / 3) repeats of the one known mention
    assert with_mentions.texts[-3:] == ("heart atack",) * 3


def test_a_one_name_concept_with_a_mention_trains_its_name(terminology) -> None:
    """ICD-10 has one name per code: the mention is that name's positive, so the name joins the examples."""
    examples = training_examples(terminology, [("diabetes", "MESH:D003920"), ("heart atack", "MESH:D009203")])
    assert "Diabetes Mellitus" in examples.texts and "diabetes" in examples.texts
    label = examples.labels[examples.texts.index("Diabetes Mellitus")]
    assert examples.labels[examples.texts.index("diabetes")] == label
    assert len(examples.concepts) == 5


def test_every_batch_gives_every_anchor_a_positive(terminology) -> None:
    examples = training_examples(terminology)
    sampler = PositiveBatchSampler(examples.labels, batch_size=4, per_concept=2, seed=1)
    batches = list(sampler)
    assert len(batches) == len(sampler) == 2
    for batch in batches:
        labels = [examples.labels[row] for row in batch]
        assert all(labels.count(label) >= 2 for label in labels)
    assert batches != list(sampler)  # a new order every epoch
    again = PositiveBatchSampler(examples.labels, batch_size=4, per_concept=2, seed=1)
    assert list(again) == batches  # and the same order for the same seed


def test_training_moves_the_model_and_saves_a_loadable_folder(terminology, tmp_path: Path) -> None:
    from medlink.encoders import load_encoder

    examples = training_examples(terminology)
    config = TrainConfig(batch_size=8, lr=1e-4, max_steps=3, freeze_layers=4, warmup=0.0)
    result = train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert result.steps == 3 and np.isfinite(result.last_loss)
    trained = load_encoder(str(tmp_path / "model"), backend="torch")
    base = load_encoder(_minilm(), backend="torch")
    assert trained.identity.pooling == "mean" and trained.identity.weights_sha256 != base.identity.weights_sha256
    texts = ["heart attack", "motrin"]
    assert not np.allclose(trained.encode(texts), base.encode(texts), atol=1e-4)
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())


def test_interrupted_training_resumes_from_its_checkpoint(terminology, tmp_path: Path, monkeypatch) -> None:
    examples = training_examples(terminology)
    config = TrainConfig(batch_size=4, max_steps=3, checkpoint_every=1, warmup=0.0)
    real = resolve(LOSSES, "batch-hard", "loss")
    monkeypatch.setitem(LOSSES, "batch-hard", fails_on_third_call(real))
    with pytest.raises(KeyboardInterrupt):
        train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert not (tmp_path / "model").exists()
    monkeypatch.setitem(LOSSES, "batch-hard", real)
    result = train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert (result.resumed_from, result.steps) == (2, 3)


def fails_on_third_call(loss: type) -> type:
    """``loss`` whose third call is interrupted, as by Ctrl-C halfway through a run."""

    class FailsOnThirdCall(loss):
        calls = 0

        def forward(self, *args):
            FailsOnThirdCall.calls += 1
            if FailsOnThirdCall.calls == 3:
                raise KeyboardInterrupt
            return super().forward(*args)

    return FailsOnThirdCall


def _minilm() -> str:
    from medlink.encoders import packaged_minilm_path

    return str(packaged_minilm_path())


def test_sibling_batches_put_concepts_of_one_parent_together() -> None:
    from medlink.training.samplers.sibling_batches import SiblingBatchSampler

    labels = [label for label in range(6) for _ in range(2)]  # six concepts, two texts each
    parents = [("A",), ("B",), ("A",), ("B",), ("A",), ("B",)]
    sampler = SiblingBatchSampler(labels, parents, batch_size=6, per_concept=2, seed=3)
    for _ in range(3):  # every epoch: a new order, still one parent per batch
        batches = list(sampler)
        groups = [{parents[labels[row]] for row in batch} for batch in batches]
        assert len(batches) == 2 and all(len(group) == 1 for group in groups)
        assert all(sorted(labels[row] for row in batch).count(labels[batch[0]]) == 2 for batch in batches)


def test_mined_batches_group_each_concept_with_its_confusions() -> None:
    from medlink.training.samplers.mined_batches import MinedBatchSampler

    labels = [label for label in range(6) for _ in range(2)]
    confusions = [[3, 1], [4], [5], [0], [1], [2]]  # 0~3, 1~4, 2~5
    calls = []

    def neighbours():
        calls.append(1)
        return confusions

    sampler = MinedBatchSampler(labels, neighbours, batch_size=4, per_concept=2, seed=0, group_size=2)
    for epoch in range(2):
        batches = list(sampler)
        assert len(calls) == epoch + 1  # mined again at every epoch
        pairs = sorted(tuple(sorted({labels[row] for row in batch})) for batch in batches)
        assert pairs == [(0, 3), (1, 4), (2, 5)]


def test_mined_training_runs_with_the_real_model(terminology, tmp_path: Path) -> None:
    from medlink.training.model import TermEncoderModel
    from medlink.training.samplers.model_negatives import model_neighbours

    examples = training_examples(terminology)
    config = TrainConfig(batch_size=4, max_steps=2, sampler="mined", negatives=1, warmup=0.0)
    result = train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert result.steps == 2
    nearest = model_neighbours(TermEncoderModel(tmp_path / "model"), examples, k=1)
    assert len(nearest) == 4 and all(len(n) == 1 for n in nearest)
    assert all(n[0] != label for label, n in enumerate(nearest))  # a concept is never its own negative


def test_in_batch_triplets_pick_a_positive_and_a_negative_per_anchor() -> None:
    import torch

    from medlink.training.losses import InBatchTripletLoss

    labels = torch.tensor([0, 0, 1, 1])
    apart = torch.tensor([[1.0, 0], [1, 0], [0, 1], [0, 1]])
    # synonyms identical, other concepts orthogonal: cosine distances 0 and 1, a margin of 0.5 is met -> 0
    assert InBatchTripletLoss(margin=0.5)(apart, labels).item() == 0.0
    collapsed = torch.ones((4, 2))
    # everything identical: every triplet costs exactly the margin
    assert InBatchTripletLoss(margin=0.5)(collapsed, labels).item() == pytest.approx(0.5)
    # a text without a positive in the batch is no anchor; a batch of one concept has no negative
    assert InBatchTripletLoss()(collapsed[:3], torch.tensor([0, 1, 2])).item() == 0.0
    assert InBatchTripletLoss()(collapsed[:2], torch.tensor([0, 0])).item() == 0.0


def test_relation_triples_and_parent_batches() -> None:
    from medlink.training.samplers.by_name import parent_sampler as parent_batches
    from medlink.training.samplers.relation_batches import RelationBatchSampler

    terminology = Terminology.from_concepts(
        [
            make_concept("T:1", "heart disease", [Name("cardiopathy")]),
            make_concept("T:2", "myocardial infarction", [Name("heart attack")], parents=("T:1",)),
            make_concept("T:3", "angina", [Name("angina pectoris")], parents=("T:1",)),
            make_concept("T:4", "fracture", [Name("broken bone")]),
        ]
    )
    examples = training_examples(terminology)
    label = {concept: i for i, concept in enumerate(examples.concepts)}
    assert set(examples.relations) == {(label["T:2"], "is_a", label["T:1"]), (label["T:3"], "is_a", label["T:1"])}
    sampler = RelationBatchSampler(examples, size=2, seed=0)
    batch = sampler.batch(7)
    assert batch == sampler.batch(7)  # the same draw on a resumed run
    assert [examples.labels[row] for row in batch.tail_rows] == batch.tail_labels == [label["T:1"]] * 2
    parents = parent_batches(TrainConfig(sampler="parents", batch_size=4, negatives=1), examples, None)  # type: ignore[arg-type]
    together = [{examples.concepts[examples.labels[row]] for row in batch} for batch in parents]
    assert any({"T:2", "T:1"} <= group or {"T:3", "T:1"} <= group for group in together)


def test_triplet_loss_with_relations_trains_and_stops_at_the_time_limit(terminology, tmp_path: Path) -> None:
    hierarchy = Terminology.from_concepts(
        [
            *terminology,
            make_concept("MESH:D002318", "Cardiovascular Diseases", [Name("heart and vessel disease")]),
            make_concept("MESH:D006331", "Heart Diseases", [Name("cardiopathy")], parents=("MESH:D002318",)),
        ]
    )
    examples = training_examples(hierarchy)
    assert examples.relations
    config = TrainConfig(
        loss="triplet", relation_weight=1.0, relation_batch=2, batch_size=4, max_steps=50, time_limit=0.0, warmup=0.0
    )
    result = train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert result.steps == 1 and np.isfinite(result.last_loss)  # out of time after the first step
    assert (tmp_path / "model" / "config.json").exists()


def test_mention_counts_mark_mentions_and_names_apart(terminology) -> None:
    mentions = [("heart attack and hypertension", "MESH:D009203"), ("heart atack", "MESH:D009203")]
    examples = training_examples(terminology, mentions, mention_counts=[2, 1])
    assert examples.counts[:10] == (0,) * 10  # terminology names: no mention, no count
    assert examples.counts[10:] == (2, 1, 2)  # the mentions repeated with their counts (round(10 / 3) = 3 rows)
    assert training_examples(terminology, mentions).counts == ()
    with pytest.raises(ValueError, match="2 mention counts for 1 mentions"):
        training_examples(terminology, mentions[:1], mention_counts=[1, 2])


def test_count_head_trains_with_the_encoder_and_reaches_the_linker(terminology, tmp_path: Path) -> None:
    from medlink.encoders import load_encoder
    from medlink.encoders.count_head import COUNT_HEAD_FILE
    from medlink.index import VectorIndex, build_index, ontology_entries
    from medlink.linking import LinkerConfig, Stage
    from support import dense_linker

    mentions = [("heart attack with high blood pressure", "MESH:D009203"), ("heart atack", "MESH:D009203")]
    examples = training_examples(terminology, mentions, mention_counts=[2, 1])
    config = TrainConfig(batch_size=8, lr=1e-4, max_steps=2, freeze_layers=6, warmup=0.0, count_weight=1.0)
    train(_minilm(), examples, tmp_path / "model", config, progress=False)
    assert (tmp_path / "model" / COUNT_HEAD_FILE).exists()
    with pytest.raises(ValueError, match="needs training mentions"):
        train(_minilm(), training_examples(terminology), tmp_path / "other", config, progress=False)

    encoder = load_encoder(str(tmp_path / "model"))  # ONNX: the export carries the head
    assert encoder.count_head is not None and encoder.count_head.dimension == encoder.dimension
    # A head that always answers "two concepts", to see the linker act on it.
    forced = type(encoder.count_head)(np.zeros_like(encoder.count_head.weights), np.array([0, 5, 0], np.float32))
    encoder.count_head = forced
    folder = build_index(ontology_entries(terminology), encoder, tmp_path / "index", terminology.fingerprint())
    config = LinkerConfig(split_composites=False)
    linker = dense_linker(terminology, VectorIndex.load(folder), encoder, sieves="exact,O-T", config=config)
    two, exact = linker.link_many(["heart attak plus hypertension", "heart attack"])
    assert two.stage is Stage.DENSE and two.several and len(two.concepts) == 2
    assert two.concepts == tuple(c.concept_id for c in two.candidates[:2])
    assert "the count head predicts 2 concepts" in two.reason
    assert exact.concepts == ("MESH:D009203",)  # an exact match is not retrieval: the head is not asked
    linker = dense_linker(
        terminology, VectorIndex.load(folder), encoder, sieves="exact,O-T", config=replace(config, count_head=False)
    )
    assert len(linker.link("heart attak plus hypertension").concepts) == 1


def test_tfidf_negatives_are_the_names_that_look_alike() -> None:
    from medlink.training.samplers.tfidf_negatives import tfidf_neighbours

    texts = ["myocardial infarction", "myocardial ischemia", "ibuprofen", "ibuprofen lysine", "hypertension"]
    nearest = tfidf_neighbours(texts, k=1, block=2)  # blocks smaller than the list: rows must not shift
    assert nearest[:4] == [[1], [0], [3], [2]]
    assert all(i not in row for i, row in enumerate(nearest))  # never its own negative
    assert tfidf_neighbours(texts, k=1) == nearest


def test_code_prefix_negatives_share_the_category() -> None:
    from medlink.training.samplers.code_prefix_negatives import code_prefix_neighbours

    codes = ["ICD10CM:E11.9", "ICD10CM:E11.65", "ICD10CM:E11.21", "ICD10CM:I10", "ICD10CM:E10.9"]
    nearest = code_prefix_neighbours(codes, k=1, length=3, seed=0)
    assert nearest[0][0] in (1, 2) and nearest[1][0] in (0, 2) and nearest[2][0] in (0, 1)
    assert nearest[3] == [] and nearest[4] == []  # alone in their category
    assert code_prefix_neighbours(codes, k=1, length=3, seed=0) == nearest
    assert code_prefix_neighbours(codes, k=5, length=2)[4] == [0, 1, 2]  # "E1": all diabetes codes
    with pytest.raises(ValueError, match="at least one character"):
        code_prefix_neighbours(codes, k=1, length=0)


def test_static_negative_samplers_batch_each_concept_with_its_negatives(terminology) -> None:
    from medlink.training.registry import SAMPLERS

    for registry, what in ((LOSSES, "loss"), (SAMPLERS, "sampler")):  # every registered name resolves
        assert all(callable(resolve(registry, name, what)) for name in registry)
    with pytest.raises(ValueError, match="sampler must be one of random, siblings"):
        resolve(SAMPLERS, "nearest", "sampler")
    examples = training_examples(terminology)
    for name in ("tfidf", "code-prefix"):
        config = TrainConfig(sampler=name, batch_size=4, negatives=1, code_prefix=2)
        batches = list(resolve(SAMPLERS, name, "sampler")(config, examples, None))
        assert len(batches) == 2 and all(len(batch) == 4 for batch in batches)  # 4 concepts, 2 texts each
        for batch in batches:
            labels = [examples.labels[row] for row in batch]
            assert all(labels.count(label) == 2 for label in labels)  # every anchor keeps a positive


def test_keep_layers_cuts_a_model_that_saves_and_loads_shallower(tmp_path: Path) -> None:
    import json

    from medlink.encoders import load_encoder
    from medlink.training.distill import keep_layers
    from medlink.training.model import TermEncoderModel

    for bad in [(), (5, 0), (0, 6), (1, 1)]:
        with pytest.raises(ValueError, match="layers must be increasing"):
            keep_layers(TermEncoderModel(_minilm()), bad)
    keep_layers(TermEncoderModel(_minilm()), (0, 5)).save(tmp_path / "cut")
    assert json.loads((tmp_path / "cut" / "config.json").read_text())["num_hidden_layers"] == 2
    vectors = load_encoder(str(tmp_path / "cut"), backend="torch").encode(["heart attack", "motrin"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


def test_distillation_brings_the_student_towards_the_teacher(terminology, tmp_path: Path) -> None:
    from medlink.encoders import load_encoder
    from medlink.training.distill import DistillConfig, distill, keep_layers
    from medlink.training.model import TermEncoderModel

    examples = training_examples(terminology)
    teacher = load_encoder(_minilm(), backend="torch")
    keep_layers(TermEncoderModel(_minilm()), (0, 5)).save(tmp_path / "cut")
    config = DistillConfig(layers=(0, 5), batch_size=10, per_concept=2, lr=5e-4, warmup=0.0, max_steps=12)
    result = distill(teacher, _minilm(), examples, tmp_path / "student", config, progress=False)
    assert result.steps == 12 and result.layers == 2 and np.isfinite(result.last_loss)
    texts = list(examples.texts)
    target = teacher.encode(texts)

    def agreement(folder: Path) -> float:
        return float((load_encoder(str(folder), backend="torch").encode(texts) * target).sum(1).mean())

    assert agreement(tmp_path / "student") > agreement(tmp_path / "cut") + 0.05


def test_interrupted_distillation_resumes_from_its_checkpoint(terminology, tmp_path: Path, monkeypatch) -> None:
    from medlink.encoders import load_encoder
    from medlink.training import distill as distillation

    real = distillation.EmbeddingDistillationLoss
    teacher = load_encoder(_minilm(), backend="torch")
    config = distillation.DistillConfig(layers=(0, 5), batch_size=4, max_steps=3, checkpoint_every=1)
    examples = training_examples(terminology)
    monkeypatch.setattr(distillation, "EmbeddingDistillationLoss", fails_on_third_call(real))
    with pytest.raises(KeyboardInterrupt):
        distillation.distill(teacher, _minilm(), examples, tmp_path / "student", config, progress=False)
    assert not (tmp_path / "student").exists()
    monkeypatch.setattr(distillation, "EmbeddingDistillationLoss", real)
    result = distillation.distill(teacher, _minilm(), examples, tmp_path / "student", config, progress=False)
    assert (result.resumed_from, result.steps) == (2, 3)
