"""Old names kept working for one release: a renamed command or option answers to its old name too, hidden from
``--help``."""

from __future__ import annotations

import copy
from typing import Any

import click


def hidden_alias(command: click.Command, old_name: str) -> click.Command:
    """``command`` under ``old_name``, left out of ``--help`` listings."""
    alias = copy.copy(command)
    alias.name = old_name
    alias.hidden = True
    return alias


class OptionWithOldName(click.Option):
    """An option that still answers to its old flag (``old_name``, one of its declarations), which ``--help``
    leaves out."""

    def __init__(self, *declarations: Any, old_name: str, **attributes: Any) -> None:
        super().__init__(*declarations, **attributes)
        self.old_name = old_name

    def get_help_record(self, context: click.Context) -> tuple[str, str] | None:
        shown = self.opts
        self.opts = [name for name in shown if name != self.old_name]
        try:
            return super().get_help_record(context)
        finally:
            self.opts = shown
