"""Instructions to the carrier: the four TwiML answers the carrier webhooks give.

* :func:`connect_stream` — answer and open the audio connection, with the single-use
  ticket as a stream parameter, and come back to the continue path when it ends
  (DESIGN.md "Carrier");
* :func:`reject` — turn the call away before answering. Unknown and disabled lines
  get the very same document (spec: telephony.md "Line": "turned away identically");
* :func:`dial` — put the caller through to a number once the service side finished;
* :func:`hangup` — end the call;
* :func:`empty` — nothing to do, for the status callbacks.

Every document is built with ``xml.etree`` so attribute values and text are escaped;
a value cannot close an element or inject another verb. Pure: strings in, bytes out.
"""

from __future__ import annotations

__all__ = ["CONTENT_TYPE", "connect_stream", "dial", "empty", "hangup", "reject"]

import xml.etree.ElementTree as ET
from typing import Mapping

CONTENT_TYPE = "text/xml; charset=utf-8"


def _document(response: ET.Element) -> bytes:
    return ET.tostring(response, encoding="utf-8", xml_declaration=True)


def _response(*children: ET.Element) -> bytes:
    response = ET.Element("Response")
    response.extend(children)
    return _document(response)


def empty() -> bytes:
    """``<Response/>``: nothing to do (the answer to a status callback)."""
    return _response()


def reject() -> bytes:
    """``<Response><Reject/></Response>``: the call is refused before it is answered."""
    return _response(ET.Element("Reject"))


def hangup() -> bytes:
    """``<Response><Hangup/></Response>``: end the call."""
    return _response(ET.Element("Hangup"))


def dial(number: str) -> bytes:
    """``<Response><Dial>+number</Dial></Response>``: put the caller through."""
    verb = ET.Element("Dial")
    verb.text = number
    return _response(verb)


def connect_stream(action: str, stream_url: str, parameters: Mapping[str, str]) -> bytes:
    """Answer the call and connect its audio to ``stream_url`` (a ``wss://`` address).

    Each parameter becomes ``<Parameter name=… value=…/>``; the carrier hands them to
    the audio connection in its ``start`` message. When the stream ends the carrier
    asks ``action`` what to do next.
    """
    connect = ET.Element("Connect", {"action": action})
    stream = ET.SubElement(connect, "Stream", {"url": stream_url})
    for name, value in parameters.items():
        ET.SubElement(stream, "Parameter", {"name": name, "value": value})
    return _response(connect)
