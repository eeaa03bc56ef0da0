"""End of the caller's speech to the first audio of the reply, with instant engines.

One call's voice session (``adapters.voice.session.run_call``) over an in-memory
transport, with the instant fake engines and agent of the tests: the caller speaks
a turn of speech-like audio at −26 dBFS every few seconds, sending a 20 ms frame every
20 ms as a line does; for each turn the time from the end of its last frame of speech
to the first frame of the reply is measured. The configured pause is the telephone
default (900 ms) with turn detection off; what is left past it is the pipeline's own
share: the detector, recognition, the agent, synthesis and the playback clock.

Goal: the pipeline's own share ≤ 50 ms past the configured pause.

Run from the repository root: ``.venv/bin/python -m benchmarks.reply_delay [--turns 12]``.
"""

from __future__ import annotations

import argparse
import statistics

import anyio

from adapters.voice.session import CallSetup, run_call
from core.voice import PhoneDials
from tests.fakes.voice import FakeAgent, FakeEngines, MemoryTransport
from tests.support.speech_signals import speechlike

FRAME_BYTES = 320
DIALS = PhoneDials(turn_detection=False)


async def measure(turns: int) -> list[float]:
    transport = MemoryTransport()
    written = transport._write_frame
    first_reply_at: list[float] = []

    def stamped(pcm: bytes) -> bool:
        now = anyio.current_time()
        if len(first_reply_at) < len(ends):  # the first frame after a turn ended
            first_reply_at.append(now)
        return written(pcm)

    transport._write_frame = stamped  # type: ignore[method-assign]
    ends: list[float] = []
    delays: list[float] = []
    speech = speechlike(0.8, -26, seed=11)
    engines = FakeEngines()
    agent = FakeAgent(answers=["Certainly."] * turns)

    async def caller() -> None:
        clock = anyio.current_time()
        await transport.until(lambda: transport.count("end_of_speech") >= 1)  # the opening
        for turn in range(turns):
            frames = [speech[i:i + FRAME_BYTES] for i in range(0, len(speech), FRAME_BYTES)]
            frames += [bytes(FRAME_BYTES)] * 150  # three seconds of quiet line
            clock = anyio.current_time()
            for index, frame in enumerate(frames):
                if len(frame) < FRAME_BYTES:
                    continue
                await transport.to_session.send(frame)
                if index == len(speech) // FRAME_BYTES - 1:
                    ends.append(anyio.current_time() + 0.02)  # this frame's audio ends
                clock += 0.02
                await anyio.sleep(max(0.0, clock - anyio.current_time()))
            if len(first_reply_at) > turn:
                delays.append(first_reply_at[turn] - ends[turn] - DIALS.pause_seconds)
        await transport.to_session.aclose()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(caller)
        await run_call(transport, engines, agent, CallSetup("Hi.", DIALS, 16000))
    return delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=12)
    args = parser.parse_args()
    delays = [d * 1000 for d in anyio.run(measure, args.turns)]
    print(f"turns answered: {len(delays)} of {args.turns}")
    print("ms past the configured pause, per turn: " + " ".join(f"{d:.0f}" for d in delays))
    if delays:
        print(f"p50 {statistics.median(delays):.0f} ms, max {max(delays):.0f} ms")


if __name__ == "__main__":
    main()
