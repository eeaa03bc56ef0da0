"""Long-run fuzzing of the AudioSocket connection: any bytes, split anywhere, give
events or ``RemoteProtocolError``."""

from _harness import allowed, instrumented, run

(audiosocket, errors) = instrumented("core.audiosocket", "core.errors")


def one_input(fdp):
    connection = audiosocket.AudioSocketConnection()
    with allowed(errors.RemoteProtocolError):
        while fdp.remaining_bytes():
            connection.receive_data(fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 400)))
            connection.events_received()
        connection.receive_data(b"")
    connection.data_to_send()


if __name__ == "__main__":
    run(one_input)
