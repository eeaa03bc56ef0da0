"""Long-run fuzzing of the carrier's media stream: any text or binary messages give
events or ``RemoteProtocolError``; a message the stream ignores changes nothing."""

import json

from _harness import allowed, instrumented, json_value, run

(carrier_media, errors) = instrumented("core.carrier_media", "core.errors")


def one_input(fdp):
    connection = carrier_media.CarrierConnection()
    with allowed(errors.RemoteProtocolError):
        while fdp.remaining_bytes():
            before = connection.state
            choice = fdp.ConsumeIntInRange(0, 15)
            if choice == 0:
                connection.receive_binary(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64)))
            elif choice < 10:  # JSON shaped like the carrier's messages
                connection.receive_text(json.dumps(json_value(fdp)))
            else:
                connection.receive_text(fdp.ConsumeUnicodeNoSurrogates(
                    fdp.ConsumeIntInRange(0, 600)))
            events = connection.events_received()
            if any(isinstance(event, carrier_media.MessageIgnored) for event in events):
                assert connection.state is before


if __name__ == "__main__":
    run(one_input)
