"""The loss and sampler names ``medlink train`` accepts. Kept apart from the trainer, which imports torch, so that
the CLI can list them while ``medlink --help`` stays instant; the trainer maps each name to its implementation."""

LOSS_NAMES = ("batch-hard", "ms", "contrastive", "triplet")
SAMPLER_NAMES = ("random", "siblings", "parents", "mined", "tfidf", "code-prefix")
