"""Old command names kept working: a renamed command answers to its old name too, hidden from the listing."""

from __future__ import annotations

import copy

import click


def hidden_alias(command: click.Command, old_name: str) -> click.Command:
    """``command`` under ``old_name``, left out of ``--help`` listings."""
    alias = copy.copy(command)
    alias.name = old_name
    alias.hidden = True
    return alias
