"""Long-run fuzzing of the AudioSocket connection: any bytes, split anywhere, give
events or ``RemoteProtocolError``; whatever rate the caller's audio came at, a 20 ms
frame at that rate can be answered in the caller's kind."""

from _harness import allowed, instrumented, run

(audiosocket, errors) = instrumented("core.audiosocket", "core.errors")


def one_input(fdp):
    connection = audiosocket.AudioSocketConnection()
    with allowed(errors.RemoteProtocolError):
        while fdp.remaining_bytes():
            connection.receive_data(fdp.ConsumeBytes(fdp.ConsumeIntInRange(1, 400)))
            connection.events_received()
            if connection.state is audiosocket.ConnectionState.OPEN:
                connection.send(audiosocket.SendAudio(
                    bytes(audiosocket.frame_bytes(connection.rate))))
                kind = connection.data_to_send()[0]
                assert audiosocket.AUDIO_KIND_RATES[kind] == connection.rate
        connection.receive_data(b"")
    connection.data_to_send()


if __name__ == "__main__":
    run(one_input)
