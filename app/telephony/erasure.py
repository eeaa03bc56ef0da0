"""A call's recording and transcript: playing, erasing by hand, and tidying away.

spec: telephony.md "Recording" (``storage.recordings_dir/<call_id>.wav``; play
"served as ordinary PCM"; delete), "Retention periods" (manual erasure: ``DELETE
…/transcript`` "also removes the recording", ``DELETE …/recording`` "sound only"),
"Audit trail entries" (``telephony.recording.played``, each listen), and "Only the
account whose line took a call, or an administrator, may play or delete its
recording or transcript; anybody else receives 404."

The call's account is the one copied onto the call when it was answered
(``telephony_call.owner_id``). Removing a transcript deletes the call's conversation
(its chat and messages) and marks the call tidied away; the call stays in the log.
The retention sweep (``app.retention``) uses the same two removals.
A call still in progress keeps both until it ends (409 ``call_in_progress``): its
conversation and its file are still being written.
"""

from __future__ import annotations

__all__ = ["CallErasure", "recording_path", "recorded_call_ids", "remove_recording",
           "tidy_away"]

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio

from adapters.recording_playback import PlayableRecording, RecordingUnreadable, open_recording
from app import db
from app.errors import Conflict, NotFound
from app.services.access import owned_row
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.tables import TelephonyCall

_RECORDING_NAME = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.wav$")

_TIDY = """
WITH calls AS (
    UPDATE telephony_call SET tidied_at = coalesce(tidied_at, now())
    WHERE id = ANY($1::uuid[]) AND outcome <> 'in_progress'
    RETURNING chat_id
)
DELETE FROM chat WHERE id IN (SELECT chat_id FROM calls WHERE chat_id IS NOT NULL)
RETURNING id
"""


def recording_path(directory: str | Path, call_id: UUID) -> Path:
    return Path(directory) / f"{call_id}.wav"


async def remove_recording(directory: str | Path, call_id: UUID) -> bool:
    """Delete the call's recording file; False when there was none."""
    try:
        await anyio.Path(recording_path(directory, call_id)).unlink()
    except FileNotFoundError:
        return False
    return True


async def recorded_call_ids(directory: str | Path) -> list[UUID]:
    """The calls that have a recording file (files not named ``<call_id>.wav`` are
    not ours and are left alone)."""
    folder = anyio.Path(directory)
    if not await folder.is_dir():
        return []
    found = []
    async for entry in folder.iterdir():
        match = _RECORDING_NAME.match(entry.name)
        if match:
            found.append(UUID(match.group(1)))
    return found


async def tidy_away(call_ids: Iterable[UUID]) -> int:
    """Delete the conversations of these calls (not those in progress) and mark the
    calls tidied away; the number of conversations deleted."""
    ids = list(call_ids)
    if not ids:
        return 0
    async with db.connection() as connection:
        return len(await connection.fetch(_TIDY, ids))


class CallErasure:
    def __init__(self, audit: AuditLog, recordings_dir: str) -> None:
        self.audit = audit
        self.recordings_dir = recordings_dir

    async def _call(self, identity: Identity, call_id: str) -> dict[str, Any]:
        return await owned_row(identity, TelephonyCall, call_id, "call", "owner_id")

    def _ended(self, row: dict[str, Any]) -> None:
        if row["outcome"] == "in_progress":
            raise Conflict("The call is still in progress; erase it once it has ended.",
                           code="call_in_progress")

    async def play(self, identity: Identity, call_id: str) -> PlayableRecording:
        """The recording opened for playing; the listen is audited before a byte goes."""
        row = await self._call(identity, call_id)
        try:
            recording = await open_recording(recording_path(self.recordings_dir, row["id"]))
        except (FileNotFoundError, RecordingUnreadable):
            raise NotFound("This call has no recording.", code="no_recording") from None
        await self.audit.record("telephony.recording.played", actor=identity.account_id,
                                subject=str(row["id"]))
        return recording

    async def delete_recording(self, identity: Identity, call_id: str) -> None:
        row = await self._call(identity, call_id)
        self._ended(row)
        if not await remove_recording(self.recordings_dir, row["id"]):
            raise NotFound("This call has no recording.", code="no_recording")
        await self.audit.record("telephony.recording.deleted", actor=identity.account_id,
                                subject=str(row["id"]))

    async def delete_transcript(self, identity: Identity, call_id: str) -> dict[str, Any]:
        """Remove the conversation and the recording; the call stays, tidied away."""
        row = await self._call(identity, call_id)
        self._ended(row)
        conversations = await tidy_away([row["id"]])
        recordings = int(await remove_recording(self.recordings_dir, row["id"]))
        await self.audit.record("telephony.transcript.deleted", actor=identity.account_id,
                                subject=str(row["id"]),
                                data={"conversations": conversations, "recordings": recordings})
        return {"id": str(row["id"]), "tidied_away": True,
                "conversation_removed": bool(conversations),
                "recording_removed": bool(recordings)}
