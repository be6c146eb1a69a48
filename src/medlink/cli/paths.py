"""The path type of every medlink command option (and ``--terminology``, which many commands take): click's, refusing an
empty string, which ``pathlib`` would read as ``.`` (the current folder) and which then fails deep inside a command
instead of at the option."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


class PathOption(click.Path):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path: give a file or folder name", param, ctx)
        return super().convert(value, param, ctx)


def terminology_option(help: str) -> Callable[[Callable], Callable]:
    """``--terminology``: an existing compiled terminology folder, handed to the command as ``terminology_dir``."""
    return click.option(
        "--terminology", "terminology_dir", type=PathOption(path_type=Path, exists=True, file_okay=False), help=help
    )
