"""Command-line options made from a settings dataclass, so each setting's default, type and help live in one place
(the dataclass, its fields made with :func:`medlink.options.setting`) and a command cannot drift from what it
configures."""

from __future__ import annotations

import dataclasses
import functools
import math
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from medlink.cli.aliases import OptionWithOldName
from medlink.cli.paths import PathOption
from medlink.options import NONE_WORD, base_type, declared_settings, is_none_word, is_optional, listed

_TYPES: dict[Any, Any] = {int: click.INT, float: click.FLOAT, str: click.STRING}
_RANGES: dict[Any, Any] = {int: click.IntRange, float: click.FloatRange}


def dataclass_options(settings: type, skip: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorate a command with one option per field of ``settings`` made with ``setting()``; the command receives
    each as a keyword named after its field (:func:`settings_from` gathers them back)."""
    hints = typing.get_type_hints(settings)

    def decorate(command: Callable) -> Callable:
        for spec in reversed(declared_settings(settings)):
            if spec.name not in skip:
                command = _option(spec, hints[spec.name])(command)
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


def given_settings(settings: type, values: dict[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The options of ``settings`` (less ``skip``, which the command offers otherwise) the user gave on the command
    line (not left at their default), removed from ``values`` with the ones left alone: what a settings file or an
    index's calibration must not override."""
    context = click.get_current_context()
    given = {}
    for spec in dataclasses.fields(settings):
        if spec.name in values and spec.name not in skip:
            value = values.pop(spec.name)
            if context.get_parameter_source(spec.name) not in (ParameterSource.DEFAULT, None):
                given[spec.name] = value
    return given


def _option(spec: dataclasses.Field, hint: Any) -> Callable[[Callable], Callable]:
    meta = spec.metadata
    kind = base_type(hint)
    flag = meta.get("flag") or f"--{spec.name.replace('_', '-')}"
    extra: dict[str, Any] = {"help": meta["help"], "default": spec.default, "hidden": meta.get("research", False)}
    if meta.get("metavar"):
        extra["metavar"] = meta["metavar"]
    if kind is bool:
        if spec.default is True and "/" not in flag:
            flag = f"{flag}/--no-{flag.removeprefix('--')}"
        if "/" in flag:
            return click.option(flag, spec.name, show_default=True, **extra)
        return click.option(flag, spec.name, is_flag=True, **extra)
    if kind is tuple:  # a tuple of strings: the option repeated, or one comma-separated value
        return click.option(flag, spec.name, multiple=True, callback=_comma_separated, **extra)
    if kind is Path:
        click_type: Any = PathOption(path_type=Path, **(meta.get("path") or {}))
    elif meta.get("choices"):
        click_type = click.Choice(meta["choices"])
    elif meta.get("minimum") is not None or meta.get("maximum") is not None:
        click_type = _RANGES[kind](min=meta.get("minimum"), max=meta.get("maximum"))
    else:
        click_type = _TYPES[kind]
    if kind is float:
        click_type = _Finite(click_type)
    if is_optional(hint):  # "none" says None: turns a setting off, or takes a file's value back
        click_type = _OrNone(click_type)
    names = [flag]
    if meta.get("old_flag"):  # still answers to it, left out of --help
        names.append(meta["old_flag"])
        extra.update(cls=OptionWithOldName, old_name=meta["old_flag"])
    return click.option(*names, spec.name, type=click_type, show_default=spec.default is not None, **extra)


def _comma_separated(context: click.Context, parameter: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    return listed(values)


class _OrNone(click.ParamType):
    """``inner``'s values, or the word ``none``."""

    def __init__(self, inner: click.ParamType) -> None:
        self.inner = inner
        self.name = f"{inner.name}|{NONE_WORD}"

    def convert(self, value: Any, parameter: click.Parameter | None, context: click.Context | None) -> Any:
        if value is None or is_none_word(value):
            return None
        return self.inner.convert(value, parameter, context)


class _Finite(click.ParamType):
    """``inner``'s numbers, less nan and the infinities (a nan threshold would silently never say nil)."""

    def __init__(self, inner: click.ParamType) -> None:
        self.inner = inner
        self.name = inner.name

    def convert(self, value: Any, parameter: click.Parameter | None, context: click.Context | None) -> Any:
        number = self.inner.convert(value, parameter, context)
        if number is not None and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", parameter, context)
        return number
