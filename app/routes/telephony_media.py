"""The carrier's audio connection: the media WebSocket ``GET /api/telephony/carrier/media``.

Absent while the telephone surface is dormant (spec: telephony.md "Endpoints"): the
handshake is answered 404 like the other telephone paths (through the ASGI server's
``websocket.http.response`` extension; a server without it refuses the handshake).
Otherwise the socket is accepted and handed to ``adapters.voice.carrier``: the
single-use ticket must arrive in the start event within 5 seconds, else the socket
closes without a word; the call then runs through ``svc.call_voice``.

``_Socket`` wraps BlackSheep's WebSocket in the small ``TextSocket`` protocol the
adapter accepts, so the adapter never sees the framework.
"""

from __future__ import annotations

import json

from blacksheep import Router, WebSocket
from blacksheep.server.websocket import WebSocketDisconnectError, WebSocketState

from adapters.voice.carrier import serve_carrier_stream
from app.bundle import Services
from app.telephony.signalling import MEDIA_PATH


class _Socket:
    """An accepted BlackSheep WebSocket as ``adapters.voice.carrier.TextSocket``."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.closed = False

    async def receive(self) -> str | bytes | None:
        if self.closed:
            return None
        try:
            message = await self.websocket.receive()
        except WebSocketDisconnectError:
            self.closed = True
            return None
        text = message.get("text")
        return text if text is not None else message.get("bytes") or b""

    async def send_text(self, text: str) -> None:
        await self.websocket.send_text(text)

    async def close(self, code: int = 1000) -> None:
        if self.closed or self.websocket.client_state is WebSocketState.DISCONNECTED:
            return
        self.closed = True
        await self.websocket.close(code)


async def _not_found(websocket: WebSocket) -> None:
    # The handshake is still open: answer it as an HTTP 404 with our error shape.
    message = await websocket._receive()  # the ASGI "websocket.connect" message
    if message.get("type") != "websocket.connect":
        return
    if "websocket.http.response" not in websocket.scope.get("extensions", {}):
        await websocket.close()
        return
    body = json.dumps({"error": {"code": "not_found", "message": f"No resource at {MEDIA_PATH}.",
                                 "field": None}}).encode()
    await websocket._send({"type": "websocket.http.response.start", "status": 404,
                           "headers": [(b"content-type", b"application/json"),
                                       (b"content-length", str(len(body)).encode())]})
    await websocket._send({"type": "websocket.http.response.body", "body": body})


async def media(websocket: WebSocket, svc: Services) -> None:
    if not await svc.telephony.surface_open():
        await _not_found(websocket)
        return
    await websocket.accept()
    voice = svc.call_voice
    await serve_carrier_stream(_Socket(websocket), voice.redeem, voice.answer)


def register(router: Router) -> None:
    router.add_ws(MEDIA_PATH, media)
