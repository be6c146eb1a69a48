"""Command-line options made from a settings dataclass, so each setting's default, type and help live in one place
(the dataclass, its fields made with :func:`medlink.options.setting`) and a command cannot drift from what it
configures."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from medlink.cli.paths import PathOption

_TYPES: dict[Any, Any] = {int: int, float: float, str: str}
_RANGES: dict[Any, Any] = {int: click.IntRange, float: click.FloatRange}


def dataclass_options(settings: type, skip: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorate a command with one option per field of ``settings`` that has help text; the command receives each
    as a keyword named after its field (:func:`settings_from` gathers them back)."""
    hints = typing.get_type_hints(settings)

    def decorate(command: Callable) -> Callable:
        for spec in reversed(dataclasses.fields(settings)):
            if spec.name in skip or "help" not in spec.metadata:
                continue
            command = _option(spec, _base_type(hints[spec.name]))(command)
        return command

    return decorate


def with_settings(settings: type, argument: str, skip: tuple[str, ...] = (), **fixed: Any) -> Callable:
    """Like :func:`dataclass_options`, but the command receives one ``settings`` instance as ``argument``;
    ``fixed`` are fields the command does not offer."""

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def with_instance(**values: Any) -> Any:
            instance = settings_from(settings, values, **fixed)
            return command(**{argument: instance}, **values)

        return dataclass_options(settings, skip)(with_instance)

    return decorate


def settings_from(settings: type, values: dict[str, Any], **fixed: Any) -> Any:
    """An instance of ``settings`` from the options :func:`dataclass_options` added, removed from ``values``."""
    names = [spec.name for spec in dataclasses.fields(settings) if spec.name in values]
    return settings(**{name: values.pop(name) for name in names}, **fixed)


def _option(spec: dataclasses.Field, kind: Any) -> Callable[[Callable], Callable]:
    meta = spec.metadata
    flag = meta.get("flag") or f"--{spec.name.replace('_', '-')}"
    extra: dict[str, Any] = {"help": meta["help"], "default": spec.default}
    if meta.get("metavar"):
        extra["metavar"] = meta["metavar"]
    if kind is bool:
        if spec.default is True and "/" not in flag:
            flag = f"{flag}/--no-{flag.removeprefix('--')}"
        if "/" in flag:
            return click.option(flag, spec.name, show_default=True, **extra)
        return click.option(flag, spec.name, is_flag=True, **extra)
    if kind is tuple:  # a tuple of strings: the option repeated
        return click.option(flag, spec.name, multiple=True, help=meta["help"], default=spec.default)
    if kind is Path:
        click_type: Any = PathOption(path_type=Path, **(meta.get("path") or {}))
    elif meta.get("choices"):
        click_type = click.Choice(meta["choices"])
    elif meta.get("minimum") is not None:
        click_type = _RANGES[kind](min=meta["minimum"])
    else:
        click_type = _TYPES[kind]
    return click.option(flag, spec.name, type=click_type, show_default=spec.default is not None, **extra)


def _base_type(hint: Any) -> Any:
    """``int`` for ``int`` and ``int | None``; ``tuple`` for ``tuple[str, ...]``."""
    if typing.get_origin(hint) is tuple:
        return tuple
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (base,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return base
    return hint
