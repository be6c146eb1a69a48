"""Settings that describe their own command-line option: a dataclass field made with :func:`setting` carries its
help text (and flag, choices, bounds, path rules), so ``cli/dataclass_options.py`` builds the option from the field
and each default is written once, in the settings dataclass. Free of click and of every other medlink room."""

from __future__ import annotations

from dataclasses import field
from typing import Any


def setting(
    default: Any,
    help: str,
    flag: str | None = None,
    choices: tuple[str, ...] | None = None,
    *,
    minimum: float | None = None,
    path: dict[str, bool] | None = None,
    metavar: str | None = None,
) -> Any:
    """A field with what its command-line option needs: help text; a flag when it is not ``--field-name`` (for a
    boolean that defaults to true, ``--name/--no-name``); the values it may take (``choices``, ``minimum``); for a
    path, click's rules (``{"exists": True, "file_okay": False}``)."""
    option = {"help": help, "flag": flag, "choices": choices, "minimum": minimum, "path": path, "metavar": metavar}
    return field(default=default, metadata=option)
