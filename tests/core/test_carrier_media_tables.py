"""Carrier media stream: every change of state is the transition table's.

The connection's one shortcut of its tables is the returned mark it never sent, which
it ignores where marks may come at all. Whatever the carrier sends, in any order, and
whatever we send, the state moves exactly as the tables say, and a mark is ignored
only where the inbound table lets marks in: anywhere else it is out of order.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.carrier_media import (
    CarrierConnection,
    ClearAudio,
    MarkReceived,
    MessageIgnored,
    SendMark,
    SendMedia,
    StreamState,
)
from core.carrier_media import _connection
from core.carrier_media._codec import MarkEcho
from core.errors import LocalProtocolError, RemoteProtocolError
from tests.core.test_carrier_media import SID, connected, dtmf, mark, media, start, stop


def test_marks_are_ignored_only_where_the_inbound_table_lets_marks_in():
    assert _connection._MARKS_RETURN_IN == {
        state for state, kind in _connection._INBOUND if kind is MarkEcho}
    assert _connection._MARKS_RETURN_IN == {StreamState.STREAMING}


def test_a_mark_after_stop_is_out_of_order_not_ignored():
    connection = CarrierConnection()
    for message in (connected(), start(), stop()):
        connection.receive_text(json.dumps(message))
    try:
        connection.receive_text(json.dumps(mark("never-sent")))
    except RemoteProtocolError as exc:
        assert "not allowed in state STOPPED" in str(exc)
    else:
        raise AssertionError("a mark after stop was accepted")


_inbound = st.one_of(
    st.sampled_from([connected(), start(), media(), dtmf("5"), stop(),
                     {"event": "mystery", "streamSid": SID},
                     dict(media(), streamSid="MZ-other"), dtmf("x")]).map(json.dumps),
    # Marks we sent (u0 … u2 are sent by the "mark" step) and one we never sent.
    st.sampled_from(["u0", "u1", "u2", "stranger"]).map(lambda name: json.dumps(mark(name))),
    st.just("{not json"),
)
_steps = st.lists(st.one_of(_inbound, st.sampled_from(["send_media", "send_mark", "clear"])),
                  max_size=30)


def _kind(event: object) -> type:
    return MarkEcho if isinstance(event, MarkReceived) else type(event)


@settings(max_examples=300)
@given(_steps)
def test_the_state_moves_only_as_the_tables_say(steps):
    connection = CarrierConnection()
    marks_sent = 0
    for step in steps:
        before = connection.state
        if step in ("send_media", "send_mark", "clear"):
            event = {"send_media": SendMedia(b"\xff"), "clear": ClearAudio(),
                     "send_mark": SendMark(f"u{marks_sent % 3}")}[step]
            try:
                connection.send(event)
            except LocalProtocolError:
                assert connection.state is before
                continue
            marks_sent += step == "send_mark"
            assert connection.state is _connection._OUTBOUND[(before, type(event))]
            continue
        try:
            connection.receive_text(step)
        except RemoteProtocolError:
            assert connection.state is StreamState.FAILED
            break
        events = connection.events_received()
        assert len(events) == 1
        [event] = events
        if isinstance(event, MessageIgnored):
            assert connection.state is before
            if "mark" in event.reason:
                assert before in _connection._MARKS_RETURN_IN
        else:
            assert connection.state is _connection._INBOUND[(before, _kind(event))]
