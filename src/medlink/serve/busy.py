"""Why the service cannot take some work now: each is answered with 503 and ``Retry-After``."""

from __future__ import annotations


class Busy(Exception):
    """The service cannot take this work now (503 with Retry-After); the message says why."""


class Saturated(Busy):
    """Too many mentions are waiting already: try again shortly."""


class OverBudget(Busy):
    """The request was not answered within its time budget; its remaining work was dropped."""
