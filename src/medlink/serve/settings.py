"""The service's limits and options; the defaults suit one 2-core machine serving a team."""

from __future__ import annotations

import os
from dataclasses import dataclass

from medlink.options import setting

API_KEY_VARIABLE = "MEDLINK_API_KEY"


@dataclass(frozen=True)
class ServiceSettings:
    """
    api_key: required of every request but ``/health`` (``Authorization: Bearer KEY`` or ``X-API-Key: KEY``) when
        set; ``from_environment`` reads it from ``MEDLINK_API_KEY``. ``None`` serves anyone who can reach the port
        (the default binds to localhost only).
    max_body_bytes: larger request bodies get 413 before they are parsed.
    max_batch: most mentions (or trial records) in one request; more get 413.
    batch_mentions: the batcher hands the linker at most this many mentions at a time, gathered from concurrent
        requests.
    batch_wait_seconds: how long the batcher waits for more requests before linking what it has; a small wait
        fills encoder batches under load and costs an idle request almost nothing.
    """

    api_key: str | None = None
    max_body_bytes: int = setting(2 * 1024 * 1024, "Largest request body.", minimum=1)
    max_batch: int = setting(1000, "Most mentions (or trial records) in one request.", minimum=1)
    batch_mentions: int = 4096
    batch_wait_seconds: float = 0.002

    def __post_init__(self) -> None:
        if self.api_key is not None and not self.api_key.strip():
            raise ValueError(f"{API_KEY_VARIABLE} is set but empty: unset it or give a key")
        for name in ("max_body_bytes", "max_batch", "batch_mentions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.batch_wait_seconds < 0:
            raise ValueError(f"batch_wait_seconds must not be negative, not {self.batch_wait_seconds}")

    @classmethod
    def from_environment(cls, **overrides: object) -> ServiceSettings:
        """Settings with the API key from ``MEDLINK_API_KEY`` (when set) and ``overrides``."""
        key = os.environ.get(API_KEY_VARIABLE)
        return cls(api_key=key, **overrides)  # type: ignore[arg-type]
