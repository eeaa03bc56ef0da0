"""Long-run fuzzing of the upstream stream reader: the SSE parser on any bytes split
anywhere, then each event through the chat-chunk decoder and the usage tally. Events
or ``RemoteProtocolError``; the parser never holds more than its cap."""

from _harness import allowed, instrumented, run

(sse, errors) = instrumented("core.sse", "core.errors")

CAP = 4096


def one_input(fdp):
    parser = sse.SSEParser(max_event_bytes=CAP)
    tally = sse.StreamTally()
    with allowed(errors.RemoteProtocolError):
        while fdp.remaining_bytes():
            for event in parser.feed(fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 300))):
                with allowed(errors.RemoteProtocolError):
                    sse.decode_chat_event(event)
                tally.observe_event(event)
            assert parser.pending_bytes <= CAP + 300, parser.pending_bytes
        parser.feed_eof()
    sse.upstream_error_message(fdp.ConsumeBytes(200), 502)


if __name__ == "__main__":
    run(one_input)
