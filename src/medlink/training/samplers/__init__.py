"""Which training examples go into a batch; one sampler per module."""
