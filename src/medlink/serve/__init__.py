"""medlink as a web service: ``medlink serve`` (FastAPI + uvicorn) around one linker.

``app.py`` assembles the routes; ``batching.py`` gathers concurrent requests into one encoder batch; ``guards.py``
holds the API key and body-size checks; ``metrics.py`` the Prometheus counters; ``schemas.py`` what requests and
responses look like; ``settings.py`` the limits, with defaults that work.
"""

from medlink.serve.settings import ServiceSettings

__all__ = ["ServiceSettings"]
