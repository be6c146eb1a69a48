"""Evaluation: corpus readers, the strict scorer, evaluation setups and significance tests."""
