"""Settings that describe their own options: a dataclass field made with :func:`setting` carries its help text (and
flag, choices, bounds, path rules), so ``cli/dataclass_options.py`` builds the command-line option from the field,
:func:`settings_of` reads the same settings from a TOML file or a spaCy config, and each default is written once, in
the settings dataclass. Free of click and of every other medlink room but errors."""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import textwrap
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medlink.errors import MedlinkError, shown

NONE_WORD = "none"  # how a file or a command line says None for a setting whose default is a value


def setting(
    default: Any,
    help: str,
    flag: str | None = None,
    choices: tuple[str, ...] | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    path: dict[str, bool] | None = None,
    metavar: str | None = None,
    research: bool = False,
    old_flag: str | None = None,
) -> Any:
    """A field with what its option needs: help text; a flag when it is not ``--field-name`` (for a boolean that
    defaults to true, ``--name/--no-name``); the values it may take (``choices``, ``minimum``, ``maximum``); for a
    path, click's rules (``{"exists": True, "file_okay": False}``). ``research``: an ablation or tuning knob, left
    out of the everyday ``--help`` (still accepted; the linker's and annotator's are also read from ``--config``).
    ``old_flag``: the option's former name, still accepted for one release and left out of ``--help``."""
    option = {
        "help": help,
        "flag": flag,
        "choices": choices,
        "minimum": minimum,
        "maximum": maximum,
        "path": path,
        "metavar": metavar,
        "research": research,
        "old_flag": old_flag,
    }
    return dataclasses.field(default=default, metadata=option)


def declared_settings(settings: type) -> list[dataclasses.Field]:
    """The fields of ``settings`` made with :func:`setting`, in order."""
    return [spec for spec in dataclasses.fields(settings) if "help" in spec.metadata]


def base_type(hint: Any) -> Any:
    """``int`` for ``int`` and ``int | None``; ``tuple`` for ``tuple[str, ...]``."""
    if typing.get_origin(hint) is tuple:
        return tuple
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (base,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return base_type(base)
    return hint


def is_optional(hint: Any) -> bool:
    return (isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union) and type(
        None
    ) in typing.get_args(hint)


def settings_of(
    settings: type, values: Mapping[str, Any], *, where: str, base: Any = None, folder: Path | None = None
) -> Any:
    """``base`` (default: ``settings()``) with ``values`` (field name → value, as a TOML table or a spaCy config
    holds them) checked against the declarations: an unknown name, a value of the wrong kind or out of bounds is
    refused naming ``where``. A relative path is taken from ``folder`` (the file's own)."""
    hints = typing.get_type_hints(settings)
    declared = {spec.name: spec for spec in declared_settings(settings)}
    if not isinstance(values, Mapping):
        raise MedlinkError(f"{where}: expected a table of settings, found {shown(values)}")
    checked = {}
    for name, value in values.items():
        if name not in declared:
            close = difflib.get_close_matches(str(name), list(declared), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(declared)}"
            raise MedlinkError(f"{where}: no setting {shown(name)}{hint}")
        checked[name] = _checked_value(declared[name], hints[name], value, f"{where}: {name}", folder)
    return dataclasses.replace(base if base is not None else settings(), **checked)


def listed(values: Sequence[str]) -> tuple[str, ...]:
    """The items of ``values``, each of which may itself be a comma-separated list (``["C,F03", "D"]``), stripped,
    empty ones left out: how a list setting is read from a command line and from a file alike."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def is_none_word(value: object) -> bool:
    return isinstance(value, str) and value.strip().casefold() == NONE_WORD


def _checked_value(spec: dataclasses.Field, hint: Any, value: Any, where: str, folder: Path | None) -> Any:
    kind = base_type(hint)
    if is_optional(hint) and (value is None or is_none_word(value)):
        return None
    if kind is bool:
        if not isinstance(value, bool):
            raise MedlinkError(f"{where}: expected true or false, found {shown(value)}")
        return value
    if kind is tuple:
        parts = [value] if isinstance(value, str) else value
        if not isinstance(parts, list | tuple) or not all(isinstance(part, str) for part in parts):
            raise MedlinkError(f"{where}: expected a list of strings, found {shown(value)}")
        return listed(parts)
    if kind is Path:
        return _checked_path(value, spec.metadata.get("path") or {}, where, folder)
    if kind in (int, float):
        return _checked_number(value, kind, spec.metadata, where)
    if not isinstance(value, str):
        raise MedlinkError(f"{where}: expected text, found {shown(value)}")
    choices = spec.metadata.get("choices")
    if choices and value not in choices:
        raise MedlinkError(f"{where}: {shown(value)} is not one of {', '.join(choices)}")
    return value


def _checked_path(value: Any, rules: dict[str, bool], where: str, folder: Path | None) -> Path:
    """A path as the setting's rules (click's: ``exists``, ``dir_okay``, ``file_okay``) allow it; a file must be a
    regular one (a FIFO or a device would hang or never end)."""
    if not isinstance(value, str) or not value or "\0" in value:
        raise MedlinkError(f"{where}: expected a path, found {shown(value)}")
    path = Path(value).expanduser()
    path = folder / path if folder is not None and not path.is_absolute() else path
    if rules.get("exists") and not path.exists():
        raise MedlinkError(f"{where}: {path} does not exist")
    if path.exists() and rules.get("dir_okay") is False and not path.is_file():
        raise MedlinkError(f"{where}: {path} is not a regular file")
    if path.exists() and rules.get("file_okay") is False and not path.is_dir():
        raise MedlinkError(f"{where}: {path} is not a folder")
    return path


def _checked_number(value: Any, kind: type, rules: Mapping[str, Any], where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not isinstance(value, int)):
        raise MedlinkError(f"{where}: expected {'an integer' if kind is int else 'a number'}, found {shown(value)}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        finite = False
    if not finite:
        raise MedlinkError(f"{where}: expected a finite number of sensible size, found {shown(value, 40)}")
    minimum, maximum = rules.get("minimum"), rules.get("maximum")
    if minimum is not None and value < minimum:
        raise MedlinkError(f"{where}: {value} is below the least allowed, {minimum}")
    if maximum is not None and value > maximum:
        raise MedlinkError(f"{where}: {shown(value, 40)} is above the most allowed, {maximum}")
    return kind(value)


def settings_toml(settings: type, table: str) -> str:
    """Every declared setting of ``settings`` as a TOML table, each with its help as a comment and its default; a
    setting whose default is ``None`` is left commented out. What ``--print-config`` writes, to edit and hand back
    with ``--config``."""
    lines = [f"[{table}]"]
    for spec in declared_settings(settings):
        lines += [f"# {line}" for line in textwrap.wrap(spec.metadata["help"], 100)]
        value = _toml_value(spec.default)
        lines.append(f"{spec.name} = {value}" if value is not None else f"# {spec.name} =")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(part) for part in value) + "]"
    return json.dumps(str(value))
