"""Each loss on tiny tensors against values worked out by hand (the working is in the comments)."""

import math

import pytest
import torch

from medlink.training.losses import (
    BatchHardSoftMarginTripletLoss,
    CoderLoss,
    ConceptCountHead,
    EmbeddingDistillationLoss,
    MultiSimilarityLoss,
    MultiTaskLoss,
    RelationMultiSimilarityLoss,
    SupervisedContrastiveLoss,
    TripletLoss,
    count_class,
    multi_similarity,
    supervised_contrastive,
)


def t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def test_triplet_euclidean() -> None:
    # first triple: d(a,p) = 5, d(a,n) = 1 -> max(5 - 1 + 1, 0) = 5; second: d = 1 and 5 -> max(-3, 0) = 0
    anchor, positive, negative = t([[0, 0], [0, 0]]), t([[3, 4], [0, 1]]), t([[0, 1], [3, 4]])
    assert TripletLoss("euclidean", margin=1.0)(anchor, positive, negative).item() == pytest.approx(2.5)


def test_triplet_cosine() -> None:
    # cos(a,p) = 0 -> distance 1; cos(a,n) = 1 -> distance 0; 1 - 0 + 0.5
    loss = TripletLoss("cosine", margin=0.5)(t([[1, 0]]), t([[0, 1]]), t([[2, 0]]))
    assert loss.item() == pytest.approx(1.5)
    with pytest.raises(ValueError, match="distance must be"):
        TripletLoss("manhattan")


def test_batch_hard_soft_margin() -> None:
    # unit vectors; S01 = .6, S02 = .8, S03 = 0, S12 = .96, S13 = .8, S23 = .6; labels A A B B (+ a lone C)
    vectors = t([[1, 0], [0.6, 0.8], [0.8, 0.6], [0, 1], [-1, 0]])
    labels = torch.tensor([0, 0, 1, 1, 2])
    # anchor 0: p = 1 (.6), n = 2 (.8); anchor 1: p = 0 (.6), n = 2 (.96); anchor 2: p = 3 (.6), n = 1 (.96);
    # anchor 3: p = 2 (.6), n = 1 (.8); anchor 4 has no positive and is left out
    expected = (2 * softplus(0.2) + 2 * softplus(0.36)) / 4
    assert BatchHardSoftMarginTripletLoss()(vectors, labels).item() == pytest.approx(expected, abs=1e-5)


def test_batch_hard_without_positives_is_zero_with_a_graph() -> None:
    vectors = t([[1, 0], [0, 1]]).requires_grad_()
    loss = BatchHardSoftMarginTripletLoss()(vectors, torch.tensor([0, 1]))
    assert loss.item() == 0.0
    loss.backward()
    assert vectors.grad is not None


def test_multi_similarity_mining() -> None:
    similarity = t([[1.0, 0.9, 0.3, 0.7], [1.0, 0.6, 0.3, 0.7]])
    positive = torch.tensor([[False, True, False, False]] * 2)
    negative = torch.tensor([[False, False, True, True]] * 2)
    # row 0: easiest positive .9 -> negatives above .8: none; hardest negative .7 -> positives below .8: none -> 0
    # row 1: easiest positive .6 -> negative .7 mined; hardest negative .7 -> positive .6 mined
    row1 = math.log1p(math.exp(-2 * (0.6 - 0.5))) / 2 + math.log1p(math.exp(50 * (0.7 - 0.5))) / 50
    value = multi_similarity(similarity, positive, negative, alpha=2, beta=50, lam=0.5, epsilon=0.1)
    assert value.item() == pytest.approx(row1 / 2, abs=1e-5)


def test_multi_similarity_loss_on_vectors() -> None:
    # identical positives and orthogonal negatives: nothing is mined, the loss is 0
    vectors = t([[1, 0], [1, 0], [0, 1], [0, 1]])
    assert MultiSimilarityLoss()(vectors, torch.tensor([0, 0, 1, 1])).item() == pytest.approx(0.0)


def test_supervised_contrastive_by_hand() -> None:
    similarity = t([[1.0, 0.8, 0.2], [0.8, 1.0, 0.4], [0.2, 0.4, 1.0]])
    positive = torch.tensor([[True, True, False], [True, True, False], [False, False, True]])
    # row 0: -log(e^(2*.8) / (e^(2*.8) + e^(2*.2))); row 1: -log(e^1.6 / (e^1.6 + e^.8)); row 2 has no positive
    row0 = -math.log(math.exp(1.6) / (math.exp(1.6) + math.exp(0.4)))
    row1 = -math.log(math.exp(1.6) / (math.exp(1.6) + math.exp(0.8)))
    assert supervised_contrastive(similarity, positive, scale=2.0).item() == pytest.approx((row0 + row1) / 2, abs=1e-5)


def test_supervised_contrastive_averages_over_positives_and_trains() -> None:
    vectors = t([[1, 0], [1, 0], [1, 0.1], [0, 1]]).requires_grad_()
    # anchor 0 has two positives at cos 1 and ~0.995 among three candidates: the loss is above log(3/2) > 0
    loss = SupervisedContrastiveLoss(scale=1.0)(vectors, torch.tensor([0, 0, 0, 1]))
    assert loss.item() > 0
    loss.backward()
    assert vectors.grad is not None and vectors.grad.abs().sum() > 0
    # orthogonal, well-separated concepts at a high scale: the loss vanishes
    separated = t([[1, 0], [1, 0], [0, 1], [0, 1]])
    value = SupervisedContrastiveLoss(scale=50.0)(separated, torch.tensor([0, 0, 1, 1])).item()
    assert value == pytest.approx(0, abs=1e-6)


def test_relation_loss_uses_one_matrix_per_relation() -> None:
    loss = RelationMultiSimilarityLoss(relations=2, dimension=2)
    heads, tails = t([[1, 0], [0, 1]]), t([[1, 0], [0, 1]])
    tail_concepts = torch.tensor([0, 1])
    assert loss(heads, torch.tensor([0, 0]), tails, tail_concepts).item() == pytest.approx(0.0)  # M = I
    with torch.no_grad():
        loss.matrices[1] = t([[0, 1], [-1, 0]])  # (M_r)^T h rotates [1,0] to [0,1] and [0,1] to [-1,0]
    # row 0: S = [0, 1]; positive (own tail) 0 is mined below 1.1, negative 1 is mined above -0.1
    # row 1: S = [-1, 0]; negative -1 is not above 0 - 0.1, positive 0 is not below -1 + 0.1 -> 0
    row0 = math.log1p(math.exp(-2 * (0 - 0.5))) / 2 + math.log1p(math.exp(50 * (1 - 0.5))) / 50
    value = loss(heads, torch.tensor([1, 1]), tails, tail_concepts)
    assert value.item() == pytest.approx(row0 / 2, abs=1e-4)
    value.backward()
    assert loss.matrices.grad is not None and loss.matrices.grad[1].abs().sum() > 0
    assert loss.matrices.grad[0].abs().sum() == 0  # relation 0 was not in the batch


def test_coder_loss_adds_the_relation_term_weighted_by_mu() -> None:
    torch.manual_seed(0)
    heads, tails = torch.randn(4, 8), torch.randn(4, 8)
    relation_ids, head_concepts, tail_concepts = (
        torch.tensor([0, 1, 0, 1]),
        torch.tensor([0, 1, 0, 1]),
        torch.tensor([2, 3, 2, 3]),
    )
    coder = CoderLoss(relations=2, dimension=8, mu=0.5)
    terms = MultiSimilarityLoss()(torch.cat([heads, tails]), torch.cat([head_concepts, tail_concepts]))
    relation = coder.relations(heads, relation_ids, tails, tail_concepts)
    total = coder(heads, relation_ids, tails, head_concepts, tail_concepts)
    assert total.item() == pytest.approx((terms + 0.5 * relation).item(), abs=1e-6)


def test_multi_task_loss_and_count_head() -> None:
    assert count_class(torch.tensor([1, 2, 3, 7])).tolist() == [0, 1, 2, 2]
    head = ConceptCountHead(2)
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.zero_()
    anchor, positive, negative = t([[0, 0], [0, 0]]), t([[3, 4], [0, 1]]), t([[0, 1], [3, 4]])
    # triplet part 2.5 (as above); uniform logits over 3 classes -> cross-entropy ln 3
    value = MultiTaskLoss(head)(anchor, positive, negative, torch.tensor([1, 3]))
    assert value.item() == pytest.approx(2.5 + math.log(3), abs=1e-5)
    with torch.no_grad():
        head.linear.bias.copy_(t([0, 5, 0]))
    assert head.predict(t([[1, 1]])).tolist() == [2]


def test_distillation_matches_vectors_and_in_batch_similarities_by_hand() -> None:
    teacher = t([[1, 0], [1, 0], [0, 1]])
    student = t([[1, 0], [0.6, 0.8], [0, 1]])
    # vector term: 1 - cos per row = 0, 0.4, 0 -> 0.4 / 3
    assert EmbeddingDistillationLoss(relation_weight=0)(student, teacher).item() == pytest.approx(0.4 / 3, abs=1e-6)

    def softmax(values):
        total = sum(math.exp(v) for v in values)
        return [math.exp(v) / total for v in values]

    def kl(p, q):
        return sum(a * math.log(a / b) for a, b in zip(p, q, strict=True))

    # rows of similarities to the other two texts (scale 1): teacher [1, 0], [1, 0], [0, 0];
    # student [0.6, 0], [0.6, 0.8], [0, 0.8]
    relation = (
        kl(softmax([1, 0]), softmax([0.6, 0]))
        + kl(softmax([1, 0]), softmax([0.6, 0.8]))
        + kl(softmax([0, 0]), softmax([0, 0.8]))
    ) / 3
    value = EmbeddingDistillationLoss(relation_weight=2.0, scale=1.0)(student, teacher).item()
    assert value == pytest.approx(0.4 / 3 + 2.0 * relation, abs=1e-5)
    # a student that reproduces the teacher (at any length) has nothing left to learn
    assert EmbeddingDistillationLoss()(3 * teacher, teacher).item() == pytest.approx(0, abs=1e-6)
