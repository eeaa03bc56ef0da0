"""Long-run fuzzing of the carrier's media stream: any text or binary messages give
events or ``RemoteProtocolError``."""

from _harness import allowed, instrumented, run

(carrier_media, errors) = instrumented("core.carrier_media", "core.errors")


def one_input(fdp):
    connection = carrier_media.CarrierConnection()
    with allowed(errors.RemoteProtocolError):
        while fdp.remaining_bytes():
            if fdp.ConsumeIntInRange(0, 15) == 0:
                connection.receive_binary(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64)))
            else:
                connection.receive_text(fdp.ConsumeUnicodeNoSurrogates(
                    fdp.ConsumeIntInRange(0, 600)))
            connection.events_received()


if __name__ == "__main__":
    run(one_input)
