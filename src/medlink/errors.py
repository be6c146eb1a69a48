"""The one error type medlink reports to users: a message that says what is wrong and what to do, shown without a
traceback by the CLI, the service and the Spark jobs. Every room of medlink raises it or a subclass."""

from __future__ import annotations


class MedlinkError(Exception):
    """Base class of the errors medlink reports to users without a traceback."""


def shown(value: object, width: int = 80) -> str:
    """``value`` as an error message quotes it: its ``repr``, cut to ``width`` characters (a hostile file's value
    may be megabytes)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
