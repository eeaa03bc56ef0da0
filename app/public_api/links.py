"""The address that links in ``/v1`` answers start with.

``server.public_url`` when it was configured; otherwise the origin the request itself
came to (its scheme and ``Host``), so a citation link works for whoever asked even
when the service listens on another address than the one it is reached by. What sits
in front (a proxy the service trusts) is reflected in the request's scheme and host
before it gets here.
"""

from __future__ import annotations

__all__ = ["public_base"]

from blacksheep import Request

from app.config import BootConfig


def public_base(request: Request, boot: BootConfig) -> str:
    """The scheme and authority (no trailing slash) that absolute links use."""
    configured = boot.values.get("server.public_url")
    if configured:
        return str(configured).rstrip("/")
    return f"{request.scheme or 'http'}://{request.host}"
