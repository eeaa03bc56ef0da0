"""A call's recording and transcript, and the compliance view: owner or administrator.

spec: telephony.md endpoint table — ``GET``/``DELETE /api/telephony/calls/{id}/recording``
("PCM audio / deletion; every listen audited"), ``DELETE
/api/telephony/calls/{id}/transcript`` ("Removes conversation and recording"), and
``GET /api/telephony/compliance``. Anyone but the call's account or an administrator
gets 404 (``app.telephony.erasure``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from blacksheep import Request, Response, Router
from blacksheep.contents import StreamedContent

from app.bundle import Services
from app.http.errors import json_response
from app.http.guards import addressed_account, query_value, signed_in


async def play_recording(request: Request, svc: Services, call_id: str) -> Response:
    identity = await signed_in(request, svc)
    recording = await svc.call_erasure.play(identity, call_id)

    async def pcm_wav() -> AsyncIterator[bytes]:  # BlackSheep wants a generator function
        async with recording:
            async for chunk in recording.chunks():
                yield chunk

    return Response(200, [(b"Cache-Control", b"no-store"),
                          (b"Content-Disposition",
                           f'inline; filename="{call_id}.wav"'.encode())],
                    StreamedContent(b"audio/wav", pcm_wav, recording.content_length))


async def delete_recording(request: Request, svc: Services, call_id: str) -> None:
    identity = await signed_in(request, svc)
    await svc.call_erasure.delete_recording(identity, call_id)


async def delete_transcript(request: Request, svc: Services, call_id: str) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await svc.call_erasure.delete_transcript(identity, call_id))


async def compliance(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    if identity.is_admin and query_value(request, "account_id") is None:
        account_id = None  # an administrator's view covers every line
    else:
        account_id = await addressed_account(request, svc, identity)
    return json_response(200, await svc.compliance.view(identity, account_id))


def register(router: Router) -> None:
    router.add_get("/api/telephony/calls/{call_id}/recording", play_recording)
    router.add_delete("/api/telephony/calls/{call_id}/recording", delete_recording)
    router.add_delete("/api/telephony/calls/{call_id}/transcript", delete_transcript)
    router.add_get("/api/telephony/compliance", compliance)
