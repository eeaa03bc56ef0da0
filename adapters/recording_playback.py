"""Reading a call's recording back as ordinary PCM, for playing it.

What belongs here: ``open_recording`` and ``PlayableRecording`` — the μ-law recording
(``adapters/recorder.py``) served as a 16-bit PCM WAV piece by piece, so a long call
is never held in memory whole and its length is known before the first byte (spec:
telephony.md "Recording": "Play ... served as ordinary PCM"). A recording still being
written plays up to the length its header gives at the moment it is opened.
"""

from __future__ import annotations

__all__ = ["PlayableRecording", "RecordingUnreadable", "open_recording"]

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from anyio.abc import AsyncResource

from core.wav import FORMAT_MULAW, WavError, pcm16_header, read_wav_header
from kernels.ulaw import ulaw2lin

_HEADER_READ = 4096  # our header is 58 bytes; other writers may put chunks before data
_CHUNK = 64 * 1024


class RecordingUnreadable(Exception):
    """The file is there but is not a μ-law recording; the message says why."""


class PlayableRecording(AsyncResource):
    """An open recording: ``content_length`` bytes of PCM WAV come out of ``chunks()``.
    Close it (``async with``) when done, whether or not everything was read."""

    def __init__(self, file: anyio.AsyncFile[bytes], data_offset: int, data_bytes: int,
                 channels: int, sample_rate: int) -> None:
        self._file = file
        self._data_offset = data_offset
        self._data_bytes = data_bytes
        self.header = pcm16_header(2 * data_bytes, sample_rate, channels)
        self.content_length = len(self.header) + 2 * data_bytes
        self.channels = channels
        self.sample_rate = sample_rate

    async def chunks(self) -> AsyncIterator[bytes]:
        """The PCM WAV: its header, then the samples decoded a piece at a time."""
        yield self.header
        await self._file.seek(self._data_offset)
        left = self._data_bytes
        while left:
            data = await self._file.read(min(_CHUNK, left))
            if not data:  # cut short since it was opened: keep the promised length
                data = b"\xff" * left  # μ-law silence
            left -= len(data)
            yield ulaw2lin(data)

    async def aclose(self) -> None:
        await self._file.aclose()


async def open_recording(path: Path | str) -> PlayableRecording:
    """Open ``path`` for playing. FileNotFoundError when there is no recording;
    ``RecordingUnreadable`` when the file is not one."""
    file = await anyio.open_file(path, "rb")
    try:
        start = await file.read(_HEADER_READ)
        size = (await anyio.Path(path).stat()).st_size
        try:
            found = read_wav_header(start, size)
        except WavError as exc:
            raise RecordingUnreadable(f"{path} is not a recording: {exc}") from exc
        if found.format_tag != FORMAT_MULAW or found.bits_per_sample != 8:
            raise RecordingUnreadable(f"{path} is not μ-law audio")
        return PlayableRecording(file, found.data_offset, found.data_bytes, found.channels,
                                 found.sample_rate)
    except BaseException:
        await file.aclose()
        raise
