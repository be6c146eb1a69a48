"""``medlink trials``: the group; its commands live in two files, one per family — records normalized to concepts
(trials_normalization_commands.py) and patients matched to trials (trials_matching_commands.py)."""

from __future__ import annotations

import click

from medlink.cli import trials_matching_commands, trials_normalization_commands


@click.group()
def trials() -> None:
    """Clinical trial records: normalize conditions and interventions, evaluate against NLM's MeSH terms, and match
    patients to trials."""


trials_normalization_commands.register(trials)
trials_matching_commands.register(trials)
