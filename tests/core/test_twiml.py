"""Our TwiML answers mean what the carrier's own library (``twilio.twiml``) builds."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st
from twilio.twiml.voice_response import Connect, Stream, VoiceResponse

from core import twiml


def tree(document) -> tuple:
    def walk(element: ET.Element) -> tuple:
        return (element.tag, dict(element.attrib), (element.text or "").strip(),
                tuple(walk(child) for child in element))
    return walk(ET.fromstring(document))


def test_reject_hangup_dial_and_empty_match_the_library():
    for ours, build in ((twiml.reject(), lambda r: r.reject()),
                        (twiml.hangup(), lambda r: r.hangup()),
                        (twiml.dial("+441632960999"), lambda r: r.dial("+441632960999")),
                        (twiml.empty(), lambda r: None)):
        theirs = VoiceResponse()
        build(theirs)
        assert tree(ours) == tree(str(theirs))


def test_connect_stream_with_its_ticket_matches_the_library():
    ours = twiml.connect_stream("https://h.org/api/telephony/carrier/continue",
                                "wss://h.org/api/telephony/carrier/media", {"ticket": "t-1"})
    response = VoiceResponse()
    connect = Connect(action="https://h.org/api/telephony/carrier/continue")
    stream = Stream(url="wss://h.org/api/telephony/carrier/media")
    stream.parameter(name="ticket", value="t-1")
    connect.append(stream)
    response.append(connect)
    assert tree(ours) == tree(str(response))


def test_documents_declare_utf8_xml():
    assert twiml.reject().startswith(b"<?xml version='1.0' encoding='utf-8'?>")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_values_are_escaped_and_cannot_inject_verbs(value):
    document = twiml.connect_stream(value, value, {"ticket": value})
    parsed = ET.fromstring(document)
    stream = parsed.find("./Connect/Stream")
    assert [child.tag for child in parsed] == ["Connect"]
    assert parsed.find("./Connect").attrib["action"] == value
    assert [child.tag for child in stream] == ["Parameter"]
    assert stream.attrib["url"] == value and stream.find("Parameter").attrib["value"] == value
    dialled = ET.fromstring(twiml.dial(value))
    assert [child.tag for child in dialled] == ["Dial"] and list(dialled[0]) == []
    assert (dialled[0].text or "") == value
