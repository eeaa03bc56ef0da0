"""A loopback listener that never answers and tells whether anyone connected.

The kernel completes a TCP connection to a listening socket before the program
accepts it, so a connection made by the code under test waits in the backlog;
``connections()`` takes every one that is waiting. A test of the egress gate points
a request at the listener (in whatever notation it tries) and asserts it saw none.
"""

from __future__ import annotations

__all__ = ["SilentListener", "free_port", "ipv6_loopback"]

import socket
from types import TracebackType


def ipv6_loopback() -> bool:
    """Whether this machine can listen on ``::1`` (some containers have no IPv6)."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


def free_port() -> int:
    """A loopback port nobody listens on once this returns: free for a server the test
    starts, and refused to anyone who connects before one does."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SilentListener:
    """Listens on ``host`` (an ephemeral port) until the block ends."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family)
        self._socket.bind((host, 0))
        self._socket.listen(16)
        self._socket.setblocking(False)
        self.port: int = self._socket.getsockname()[1]

    def connections(self) -> int:
        """How many connections arrived since the last call (each is closed)."""
        count = 0
        while True:
            try:
                accepted, _ = self._socket.accept()
            except BlockingIOError:
                return count
            accepted.close()
            count += 1

    def __enter__(self) -> SilentListener:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._socket.close()
