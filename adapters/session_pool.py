"""One pooled client session per object, made on first use and closed with it.

What belongs here: ``LazySession``, the lifecycle the HTTP clients of the adapters
share — the session is created inside the running event loop the first time it is
needed (so a client can be built before the loop starts), ``aclose()`` or ``async
with`` closes it, and a closed client refuses further use.
"""

from __future__ import annotations

__all__ = ["LazySession", "Pool"]

from abc import ABC, abstractmethod
from typing import Any, Protocol, Self


class Pool(Protocol):
    """What a client's session must offer here: an aiohttp ``ClientSession``, or the
    provider client's own connection pool (``adapters.providers.http1``)."""

    async def close(self) -> Any: ...


class LazySession(ABC):
    """Base of a client holding one pooled session; subclasses say how to make it."""

    _session: Any = None
    _closed: bool = False

    @abstractmethod
    def _new_session(self) -> Pool:
        """A new session configured for this client (its limits and timeouts)."""

    def _get_session(self) -> Any:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        if self._session is None:  # created on first use, bound to the running loop
            self._session = self._new_session()
        return self._session

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pool; the client cannot be used afterwards."""
        self._closed = True
        if self._session is not None:
            await self._session.close()
            self._session = None
