"""What the Telephone screen gives an operator to copy into their telephone system:
the carrier's webhook addresses and the Asterisk dialplan, filled in with this
deployment's public address, HTTP address and AudioSocket listen address (the
dialplan is the one of docs/telephony.md "Dialplan").

Rendered into the page rather than read by its script: the settings resource these
values come from is break-glass only, while the screen is for every telephony
manager. Nothing secret is shown: the dialplan names the shared secret's place only.
"""

from __future__ import annotations

from typing import Any

from app.bundle import Services
from app.telephony.settings_resource import effective_public_base, media_url, public_url
from core.records import frozen

#: Where the dialplan's key goes; the secret itself is write-only.
SECRET_PLACEHOLDER = "the-shared-secret"
#: Shown in place of a listen address not set yet.
LISTEN_PLACEHOLDER = "host:port"


@frozen
class Webhook:
    purpose: str
    method: str
    url: str
    #: False: the voice answer tells the carrier this one itself.
    entered: bool


def webhooks(snapshot) -> list[Webhook]:
    """The carrier's four addresses (docs/telephony.md "Carrier transport")."""
    return [
        Webhook("A call comes in", "POST", public_url(snapshot, "/api/telephony/carrier/voice"),
                True),
        Webhook("Call status changes", "POST",
                public_url(snapshot, "/api/telephony/carrier/status"), True),
        Webhook("Audio connection", "GET", media_url(snapshot, "/api/telephony/carrier/media"),
                False),
        Webhook("Where the call goes next", "POST",
                public_url(snapshot, "/api/telephony/carrier/continue"), False),
    ]


def dialplan(http_address: str, listen: str | None) -> str:
    """The ``[globals]`` and ``[from-trunk]`` of docs/telephony.md, filled in."""
    return f"""[globals]
SVC={http_address}          ; the deployment's HTTP address on your network
SVC_AUDIO={listen or LISTEN_PLACEHOLDER}           ; telephony.pbx_listen
SVC_KEY={SECRET_PLACEHOLDER}         ; the same value as shared_secret

[from-trunk]
exten => _X.,1,NoOp(Call for ${{EXTEN}} from ${{CALLERID(num)}})
 same => n,Set(CURLOPT(conntimeout)=2)
 same => n,Set(CURLOPT(httptimeout)=4)
 same => n,Set(CURLOPT(httpheader)=x-service-telephony-key: ${{SVC_KEY}})
 ; 1. Ask: the answer is a one-off identifier (a UUID); empty means hang up.
 same => n,Set(ID=${{CURL(${{SVC}}/api/telephony/pbx/answer?from=${{URIENCODE(${{CALLERID(num)}})}}&to=${{URIENCODE(${{EXTEN}})}})}})
 same => n,GotoIf($[${{LEN(${{ID}})}} != 36]?refused)
 ; 2. Answer and hand the audio over, presenting the identifier (within 30 seconds).
 same => n,Answer()
 same => n,AudioSocket(${{ID}},${{SVC_AUDIO}})
 ; 3. When the connection ends, ask where to go next; empty means hang up.
 same => n,Set(NEXT=${{CURL(${{SVC}}/api/telephony/pbx/continue?call=${{ID}})}})
 same => n,GotoIf($[${{LEN(${{NEXT}})}} = 0]?done)
 same => n,Dial(PJSIP/${{NEXT}}@trunk,60)
 same => n(done),Hangup()
 same => n(refused),Hangup(21)
"""


async def telephone_context(svc: Services) -> dict[str, Any]:
    """The Telephone screen's filled-in connection details."""
    # Read past the cache: after a save on another worker, the guide must already show
    # the new listen address and public address.
    snapshot = await svc.settings.fresh_snapshot()
    listen = snapshot["telephony.pbx_listen"]
    http_address = f"http://{svc.boot['server.host']}:{svc.boot['server.port']}"
    return {"public_base": effective_public_base(snapshot), "webhooks": webhooks(snapshot),
            "dialplan": dialplan(http_address, listen), "pbx_listen": listen,
            "http_address": http_address}
