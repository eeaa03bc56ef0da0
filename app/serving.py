"""How uvicorn serves the application: one configuration for ``svc serve`` and tests.

The limits on slow and numerous clients come from boot settings (``server.*``):
headers and body each have a deadline (``app.http.slow_clients``), an idle kept-alive
connection is closed, and past ``server.max_connections`` connections and requests at
once new requests are answered 503.
"""

from __future__ import annotations

from typing import Any

import uvicorn

from app.config import BootConfig
from app.http.slow_clients import deadline_protocol
from core.carrier_media import MAX_MESSAGE_BYTES


def server_config(app: Any, boot: BootConfig, **options: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app, lifespan="on", log_config=None, access_log=False,
        http=deadline_protocol(boot["server.header_timeout_seconds"],
                               boot["server.body_timeout_seconds"]),
        timeout_keep_alive=boot["server.keep_alive_seconds"],
        limit_concurrency=boot["server.max_connections"],
        # spec: "Limits" — a media message is at most 32 KiB; a bigger one is refused
        # by the server before it is buffered whole.
        ws_max_size=MAX_MESSAGE_BYTES,
        # Forwarded headers are judged by the application alone, against
        # ``server.trusted_proxies`` (``app.http.front_door``), never by uvicorn.
        proxy_headers=False,
        **options)
