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
    batch_chars: the batcher hands the linker batches of about this many characters, one mention from each waiting
        request in turn (serve/batching.py): a large request is linked over many batches, and a small one that
        arrives meanwhile waits for one batch, not for the large request. Documents to annotate are also taken
        this many characters at a time (one longer document alone), between two looks at the time budget.
    batch_wait_seconds: how long the batcher waits for more requests before linking what it has; a small wait
        fills encoder batches under load and costs an idle request almost nothing.
    request_seconds: a request not answered within this time gets 503 with the reason, and its remaining work is
        dropped.
    max_queued_mentions: a request that would make more mentions wait than this gets 503 with ``Retry-After``.
    max_concurrent_trials: trial requests (normalize, match) and annotations run at most this many at a time (with
        several worker processes, at most one fewer than there are: one is always left to link); more get 503.
    max_document_chars, max_note_chars: longer documents and patient notes get 422 naming the limit (a mention's
        limit is the linker's ``max_mention_chars``).
    workers: worker processes that do the requests' work (serve/workers.py); work past its request's budget is
        stopped by killing its worker, which is replaced. ``None``: one per core; ``0``: threads of the service's
        own process, where work once begun cannot be stopped.
    worker_restarts_per_minute: killed or dead workers replaced per minute at most; beyond, requests get 503
        until the minute passes.
    allowed_hosts: without an API key, the host names requests may be addressed to besides ``localhost`` and IP
        addresses (a web page elsewhere that makes its own name resolve to this machine must not read answers:
        DNS rebinding), and POST requests from a browser must come from this service's own pages.
    """

    api_key: str | None = None
    max_body_bytes: int = setting(2 * 1024 * 1024, "Largest request body.", minimum=1)
    max_batch: int = setting(1000, "Most mentions (or trial records) in one request.", minimum=1)
    batch_chars: int = 16_000
    batch_wait_seconds: float = 0.002
    request_seconds: float = setting(
        10.0, "Seconds a request may take before it gets 503 and its work is dropped.", minimum=0.1
    )
    max_queued_mentions: int = setting(
        20_000, "Most mentions waiting to be linked; a request beyond gets 503.", minimum=1
    )
    max_concurrent_trials: int = setting(2, "Trial requests (normalize, match) run at once; more get 503.", minimum=1)
    max_document_chars: int = setting(100_000, "Longest document (context of mentions) a request may send.", minimum=1)
    max_note_chars: int = setting(50_000, "Longest patient note a request may send.", minimum=1)
    workers: int | None = setting(
        None,
        "Worker processes doing the requests' work; one past its request's budget is killed and replaced "
        "(0: threads of the service's process, which cannot be stopped). Default: one per core.",
        minimum=0,
    )
    allowed_hosts: tuple[str, ...] = setting(
        (),
        "Without MEDLINK_API_KEY, a host name requests may use besides localhost and IP addresses (repeatable).",
        flag="--allowed-host",
    )
    worker_restarts_per_minute: int = setting(
        10, "Workers replaced per minute at most; beyond, requests get 503 until the minute passes.", minimum=1
    )

    def __post_init__(self) -> None:
        if self.api_key is not None and not self.api_key.strip():
            raise ValueError(f"{API_KEY_VARIABLE} is set but empty: unset it or give a key")
        for name in (
            "max_body_bytes",
            "max_batch",
            "batch_chars",
            "max_queued_mentions",
            "max_concurrent_trials",
            "max_document_chars",
            "max_note_chars",
            "worker_restarts_per_minute",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.workers is not None and self.workers < 0:
            raise ValueError(f"workers must not be negative, not {self.workers}")
        if self.request_seconds <= 0:
            raise ValueError(f"request_seconds must be positive, not {self.request_seconds}")
        if self.batch_wait_seconds < 0:
            raise ValueError(f"batch_wait_seconds must not be negative, not {self.batch_wait_seconds}")

    @property
    def worker_count(self) -> int:
        """How many worker processes: ``workers``, or one per core."""
        return self.workers if self.workers is not None else max(1, os.cpu_count() or 1)

    @classmethod
    def from_environment(cls, **overrides: object) -> ServiceSettings:
        """Settings with the API key from ``MEDLINK_API_KEY`` (when set) and ``overrides``."""
        key = os.environ.get(API_KEY_VARIABLE)
        return cls(api_key=key, **overrides)  # type: ignore[arg-type]
