"""Command-line options made from a settings dataclass, so each setting's default, type and help live in one place
(the dataclass) and a command cannot drift from what it configures."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

import click

_TYPES: dict[Any, Any] = {int: int, float: float, str: str}


def dataclass_options(settings: type, skip: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorate a command with one option per field of ``settings`` that has help text (``setting(...)``)."""
    hints = typing.get_type_hints(settings)

    def decorate(command: Callable) -> Callable:
        for spec in reversed(dataclasses.fields(settings)):
            if spec.name in skip or "help" not in spec.metadata:
                continue
            flag = spec.metadata.get("flag") or f"--{spec.name.replace('_', '-')}"
            choices = spec.metadata.get("choices")
            kind = click.Choice(choices) if choices else _TYPES[_base_type(hints[spec.name])]
            shown = spec.default is not None
            command = click.option(flag, spec.name, type=kind, default=spec.default, show_default=shown,
                                   help=spec.metadata["help"])(command)  # fmt: skip
        return command

    return decorate


def settings_from(settings: type, values: dict[str, Any]) -> Any:
    """An instance of ``settings`` from the options :func:`dataclass_options` added, removed from ``values``."""
    names = [spec.name for spec in dataclasses.fields(settings) if spec.name in values]
    return settings(**{name: values.pop(name) for name in names})


def _base_type(hint: Any) -> Any:
    """``int`` for ``int`` and ``int | None``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (base,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return base
    return hint
