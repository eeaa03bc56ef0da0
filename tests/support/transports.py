"""A stand-in for an asyncio transport, for unit tests of what a protocol writes."""

from __future__ import annotations


class RecordedTransport:
    """Keeps each write; closing only marks it closed."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass
