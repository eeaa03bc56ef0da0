"""A synthesiser that answers 200 but says nothing cannot skip the opening notice.

spec: telephony.md "Opening of every call" — fail-closed: the notice must be heard.
A remote synthesiser (the loopback fake speech server) that answers with an empty body,
or with silence only, ends the call ``notice_failed`` with our hangup, exactly as one
that is down does.
"""

from __future__ import annotations

import pytest

from app.tables import TelephonyCall
from tests.app.telephony.deployment import deployment
from tests.app.telephony.test_call_voice_transports import heard_until_closed
from tests.fakes.speech import PCM_RATE, FakeSpeech, SpeechBehaviour
from tests.support.settings import allow_loopback

pytestmark = pytest.mark.anyio

SILENCE = bytes(2 * PCM_RATE)  # one second of all-zero PCM16


@pytest.mark.parametrize("audio", [b"", SILENCE], ids=["no audio", "silence only"])
async def test_an_opening_without_sound_ends_the_call_notice_failed(api, services, audio):
    found = await deployment(api, services, provider="pbx", line_provider="pbx")
    await allow_loopback(services)
    async with FakeSpeech(behaviour=SpeechBehaviour(
            garbage=audio, garbage_content_type="audio/pcm")) as speech:
        await found.setting("voice_live.tts_stream_url", speech.base_url)
        _, asterisk = await heard_until_closed(found, 20)
        assert [request.path for request in speech.requests] == ["/v1/audio/speech"]
    assert asterisk.frames()[-1] == (0x00, b"")  # our hangup, then the socket closed
    assert (await TelephonyCall.select().first())["outcome"] == "notice_failed"
