"""Writing a call's recording to disk while the call runs.

What belongs here: ``CallRecorder`` — the file of one call, opened at answer, fed one
step of audio of both sides at a time, closed where the service's side of the call
ends — and ``RecordingFailed``, the one error it raises. The file layout (header,
interleaving) is ``core.wav``; companding is ``kernels.ulaw``.

spec: telephony.md "Recording": ``storage.recordings_dir/<call_id>.wav``, two channels
(caller left, line right), 8 kHz μ-law; a failed write does not end the call — the
caller of ``write`` catches ``RecordingFailed``, marks the call ``recording_failed``
and carries on without the recorder.

Writes are plain file writes on the event loop's thread: a 20 ms step is 320 bytes,
collected in memory and written once a second (``FLUSH_EVERY_FRAMES``), which is
cheaper than any thread hop. Each of those writes is followed by the header with the
sizes so far, so a file left by a crash or a full disk is a valid WAV missing at most
its last second.
"""

from __future__ import annotations

__all__ = ["RATE", "CallRecorder", "RecordingFailed"]

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn
from uuid import UUID

from core.wav import MAX_ULAW_DATA_BYTES, ULAW_HEADER_BYTES, interleave, ulaw_header
from kernels.ulaw import lin2ulaw

RATE = 8000  #: samples per second of each channel
#: How often what was collected goes to the disk, header included: one second.
FLUSH_EVERY_FRAMES = RATE
# Exclusive: a call id is unique, so an existing file is someone else's. No O_APPEND:
# on Linux it would make the header's pwrite append instead of overwrite.
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class RecordingFailed(Exception):
    """The recording could not be created or written; the message says where and why.
    The recorder is closed: write no more to it."""


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "permission denied"
    return exc.strerror or type(exc).__name__


class CallRecorder:
    """The recording of one call. ``CallRecorder.create(directory, call_id)``, then
    ``write(caller, line)`` for every step of the call, then ``close()``.

    Both sides are 16-bit PCM at 8 kHz covering the same span of time; a side that said
    nothing in that span may pass ``b""`` (or a shorter chunk): it is padded with
    silence to the other side's length, so the channels stay aligned.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self._pending = bytearray()  # interleaved frames not yet on disk
        self.frames = 0  #: sample frames written so far (on disk or pending)

    @classmethod
    def create(cls, directory: Path | str, call_id: UUID) -> CallRecorder:
        """Create ``directory/<call_id>.wav`` (and the directory), header first."""
        path = Path(directory) / f"{call_id}.wav"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _CREATE_FLAGS, 0o640)
        except OSError as exc:
            raise RecordingFailed(f"cannot create the recording {path}: {_reason(exc)}") from exc
        recorder = cls(path, fd)
        # os.write moves the file position past the header, where the frames go;
        # later headers overwrite it in place with pwrite, which leaves the position be.
        recorder._guard(lambda: _write_all(fd, ulaw_header(0)), "write")
        return recorder

    @property
    def closed(self) -> bool:
        return self._fd is None

    @property
    def seconds(self) -> float:
        return self.frames / RATE

    def write(self, caller: bytes, line: bytes) -> None:
        """Append one step of both sides (16-bit PCM, 8 kHz, even lengths)."""
        if self._fd is None:
            raise RecordingFailed(f"the recording {self.path} is closed")
        if len(caller) % 2 or len(line) % 2:
            raise ValueError("16-bit PCM needs an even number of bytes")
        length = max(len(caller), len(line))
        if 2 * (self.frames + length // 2) > MAX_ULAW_DATA_BYTES:
            self._fail(f"the recording {self.path} reached the largest size a WAV holds")
        left = lin2ulaw(caller.ljust(length, b"\0"))
        right = lin2ulaw(line.ljust(length, b"\0"))
        self._pending += interleave(left, right)
        self.frames += length // 2
        if len(self._pending) >= 2 * FLUSH_EVERY_FRAMES:
            self._guard(self._flush, "write")

    def close(self) -> None:
        """Write what is pending, bring the header up to date and close the file.
        Closing twice is harmless; a failure raises ``RecordingFailed`` like a write."""
        if self._fd is None:
            return
        self._guard(self._flush, "finish")
        fd, self._fd = self._fd, None
        try:
            os.close(fd)
        except OSError as exc:
            message = f"cannot finish the recording {self.path}: {_reason(exc)}"
            raise RecordingFailed(message) from exc

    def _flush(self) -> None:
        assert self._fd is not None
        _write_all(self._fd, bytes(self._pending))
        self._pending.clear()
        os.pwrite(self._fd, ulaw_header(self.frames), 0)

    def _guard(self, action: Callable[[], None], doing: str) -> None:
        try:
            action()
        except OSError as exc:
            self._fail(f"cannot {doing} the recording {self.path}: {_reason(exc)}", exc)

    def _fail(self, message: str, cause: OSError | None = None) -> NoReturn:
        """Close the file, leaving it as readable as the disk allows, and raise."""
        fd, self._fd = self._fd, None
        self._pending = bytearray()
        if fd is not None:
            _salvage(fd)
        raise RecordingFailed(message) from cause


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)  # short only when the disk fills up
        if not written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _salvage(fd: int) -> None:
    """Best effort after a failure: a header for the whole frames that did reach the
    disk (overwriting costs no space), then close."""
    try:
        written = max(0, os.fstat(fd).st_size - ULAW_HEADER_BYTES)
        os.pwrite(fd, ulaw_header(written // 2), 0)
    except OSError:
        pass
    try:
        os.close(fd)
    except OSError:
        pass
