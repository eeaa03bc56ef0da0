"""A peer for the call-load benchmark: asterisk-ai-voice-agent with instant speech.

asterisk-ai-voice-agent (PyPI) answers AudioSocket calls with a speech-to-text, model,
text-to-speech loop, one asyncio task pacing each call's frames. It runs here as its
own ``main()`` serves it, with three changes so that the figures are its own work and
none of an engine's, as svc's are in ``benchmarks/call_load_server.py``:

- its Piper synthesiser returns ``MS_PER_CHARACTER`` of the same tone at once (the
  rest of its synthesis path, cutting into 320-byte frames and pacing, is its own);
- its recogniser is its own (WebRTC VAD on every caller frame), with a key that is
  never used: the callers are silent, so no utterance is sent out;
- every identifier is taken as pre-registered: its dialplan registers the call over
  HTTP, which the callers replace by svc's question, answered here with a new
  identifier (as the floor, ``benchmarks/audiosocket_floor.py``, answers it).

It runs in ``.venv-voice-agent`` (``tools/bench-setup-voice-agent``), never in the
project's environment. Run by ``benchmarks/call_load.py --peer``:
``.venv-voice-agent/bin/python -m benchmarks.voice_agent_peer --port P --pbx-port Q
--notice TEXT [--cpu 0]``; prints ``peer is serving``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path

from benchmarks.call_load_server import MS_PER_CHARACTER, TONE
from tests.support.listener import free_port


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The dialplan's question, answered with a new identifier on a kept-alive
    connection (the callers' client keeps its connections)."""
    try:
        while await reader.readuntil(b"\r\n\r\n"):
            body = str(uuid.uuid4()).encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _instant_speech() -> None:
    import numpy as np

    from asterisk_ai_voice_agent import agent, tts

    tone = np.frombuffer(TONE, dtype=np.int16)

    class InstantTTS(tts.StreamingTTS):
        async def start(self) -> None:
            self._native_sr = 8000

        async def _piper_pcm(self, text: str):
            samples = len(text) * MS_PER_CHARACTER * 8
            return np.resize(tone, samples)

    agent.StreamingTTS = InstantTTS
    agent.Registry.take = lambda self, uid: {"persona": "demo", "caller": "+440000000000"}


def _configure(workdir: Path, pbx_port: int, notice: str) -> None:
    register_port = free_port()
    (workdir / "config.yaml").write_text(
        "listen:\n  host: 127.0.0.1\n"
        f"  register_port: {register_port}\n  audiosocket_port: {pbx_port}\n"
        "limits:\n  max_concurrent_calls: 100000\n"
        "providers:\n  openai:\n    api_key: unused\n  anthropic:\n    api_key: unused\n")
    (workdir / "personas.yaml").write_text(
        f"demo:\n  greeting: \"{notice}\"\n  system_prompt: You answer the telephone.\n")
    os.environ.update(AI_AGENT_CONFIG=str(workdir / "config.yaml"),
                      AI_AGENT_PERSONAS=str(workdir / "personas.yaml"))


async def _serve(port: int) -> None:
    from asterisk_ai_voice_agent import agent

    await asyncio.start_server(_answer, "127.0.0.1", port)
    serving = asyncio.create_task(agent.main())
    await asyncio.sleep(1)  # its servers bind at once; a failure to start shows here
    if serving.done():
        serving.result()
    print("peer is serving", flush=True)
    await serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pbx-port", type=int, required=True)
    parser.add_argument("--notice", required=True)
    parser.add_argument("--cpu", type=int, help="pin the server to this CPU")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    os.environ.setdefault("AI_AGENT_LOG", "WARNING")  # as svc's benchmark server logs
    with tempfile.TemporaryDirectory(prefix="voice-agent-peer-") as workdir:
        _configure(Path(workdir), args.pbx_port, args.notice)
        _instant_speech()
        try:
            asyncio.run(_serve(args.port))
        except KeyboardInterrupt:
            sys.exit(0)


if __name__ == "__main__":
    main()
