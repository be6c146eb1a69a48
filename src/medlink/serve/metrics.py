"""Prometheus metrics of one service, in a registry of its own (two apps in one process never mix counts)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class ServiceMetrics:
    """Requests by route and status, request latency, mentions linked, the sizes of linker batches, and worker
    processes killed and restarted; the process collector adds resident memory, CPU time and open files (of the
    service's own process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.requests = Counter(
            "medlink_requests", "HTTP requests answered", ["route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "medlink_request_seconds",
            "Time to answer a request",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.mentions = Counter("medlink_mentions_linked", "Mentions linked", registry=self.registry)
        self.batches = Histogram(
            "medlink_link_batch_mentions",
            "Mentions per linker batch (requests gathered)",
            buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096),
            registry=self.registry,
        )

        self.worker_kills = Counter(
            "medlink_worker_kills", "Worker processes killed: their work ran past its budget", registry=self.registry
        )
        self.worker_restarts = Counter(
            "medlink_worker_restarts",
            "Worker processes started in the place of killed or dead ones",
            registry=self.registry,
        )

    def observe_request(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def observe_batch(self, size: int) -> None:
        self.mentions.inc(size)
        self.batches.observe(size)

    def render(self) -> bytes:
        return generate_latest(self.registry)
