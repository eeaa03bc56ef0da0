"""Never unbounded memory: whatever a peer sends, the bytes a parser holds back while
waiting for the rest of a frame stay under the protocol's cap (spec: telephony.md
"Limits" — media frame and message, 32 KiB), and a frame announcing more is refused
from its header."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.audiosocket import MAX_PAYLOAD_BYTES, AudioSocketConnection
from core.audiosocket._wire import HEADER
from core.errors import RemoteProtocolError

IDENTIFIER = HEADER.pack(0x01, 16) + bytes(16)
# Headers that announce lengths around the cap, then any amount of payload.
headers = st.builds(lambda kind, length: HEADER.pack(kind, length),
                    st.sampled_from([0x10, 0x12, 0x18, 0x03, 0x00, 0xFF, 0x42]),
                    st.integers(MAX_PAYLOAD_BYTES - 4, 0xFFFF) | st.integers(0, 400))
chunks = st.lists(st.one_of(headers, st.binary(max_size=4096),
                            st.integers(1, 40).map(lambda n: bytes(1024 * n))), max_size=12)


@settings(max_examples=150)
@given(chunks)
def test_bytes_held_back_never_pass_one_frame_at_the_cap(pieces):
    connection = AudioSocketConnection()
    try:
        for piece in [IDENTIFIER, *pieces]:
            if piece:
                connection.receive_data(piece)
            # What waits for the rest of a frame is at most one frame at the cap.
            assert len(connection._buffer) <= HEADER.size + MAX_PAYLOAD_BYTES
            connection.events_received()
    except RemoteProtocolError:
        assert len(connection._buffer) == 0  # a refused connection lets go of it all
