"""Training term encoders: the papers' losses (one per module in ``losses/``); samplers and the trainer follow."""
