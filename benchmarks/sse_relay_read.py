"""The accounting cost of one relayed upstream read, in process: parsed or counted.

``RawRelay`` tallies each read of a streamed answer before relaying its bytes. This
times that step alone on reads of 1 to 3 content chunks shaped as OpenAI sends them
(``usage: null`` on each, as when usage was asked for), and on a whole 20-chunk stream
in one read (its finishing chunk, usage chunk and ``[DONE]`` included: what a relay
reads when the upstream was quicker than it): the parser path (``feed``,
``observe_event`` per event, the held-bytes split), the plain-prefix path
(``StreamTally.observe_plain_prefix``, then the parser for the rest) and a bare loop
that only hands the bytes on.

Run: ``python -m benchmarks.sse_relay_read [--reads N] [--repeat R]``; it prints the
best of R runs, in microseconds per read.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from core.sse import SSEParser, StreamTally


def _chunk(piece: str | None, finish: str | None = None, usage: dict | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": piece} if piece is not None else {},
              "logprobs": None, "finish_reason": finish}
    chunk = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000,
             "model": "bench", "usage": usage, "choices": [] if usage else [choice]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _whole_stream(i: int) -> bytes:
    return b"".join([*(_chunk(f" word{i}{j}") for j in range(20)), _chunk(None, "stop"),
                     _chunk(None, usage={"prompt_tokens": 9, "completion_tokens": 20}),
                     b"data: [DONE]\n\n"])


def _parsed(parser: SSEParser, tally: StreamTally, data: bytes) -> bytes:
    for event in parser.feed(data):
        tally.observe_event(event)
    pending = parser.pending_bytes
    return data if pending == 0 else data[:-pending]


def _plain_first(parser: SSEParser, tally: StreamTally, data: bytes) -> bytes:
    taken = tally.observe_plain_prefix(parser, data)
    if taken == len(data):
        return data
    return data[:taken] + _parsed(parser, tally, data[taken:])


def _bare(parser: SSEParser, tally: StreamTally, data: bytes) -> bytes:
    return data


def _per_read(step: Callable[[SSEParser, StreamTally, bytes], bytes], reads: list[bytes],
              repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        parser, tally = SSEParser(), StreamTally()
        started = time.perf_counter()
        for data in reads:
            step(parser, tally, data)
        best = min(best, time.perf_counter() - started)
    return best / len(reads) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("chunks/read  parsed µs  plain-first µs  bare µs")
    cases = [(str(per_read), [b"".join(_chunk(f" word{i}{j}") for j in range(per_read))
                              for i in range(args.reads)]) for per_read in (1, 2, 3)]
    cases.append(("20 + end", [_whole_stream(i) for i in range(args.reads // 10)]))
    for name, reads in cases:
        figures = [_per_read(step, reads, args.repeat) for step in (_parsed, _plain_first, _bare)]
        print(f"{name:>11}  {figures[0]:>9.2f}  {figures[1]:>14.2f}  {figures[2]:>7.2f}")


if __name__ == "__main__":
    main()
