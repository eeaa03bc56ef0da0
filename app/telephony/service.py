"""The telephony services one application holds, built by the ``Services`` bundle.

Route handlers reach them as ``svc.telephony.<part>``:

* ``resource`` — the settings resource; ``lines`` — registered numbers;
  ``calls`` — the call log and outcomes; ``readiness`` — the eleven checks;
* ``carrier`` and ``pbx`` — the two transports' signalling;
* ``tickets`` — minting and :meth:`Telephony.redeem`, which the media WebSocket and
  the AudioSocket listener call with what a connection presents;
* ``listener`` — whether this process listens for audio connections now;
* ``leases`` — this process's lease on the calls it runs, and the ending of calls no
  process runs any more (``app.telephony.leases``).
"""

from __future__ import annotations

from app.crypto import SecretBox
from app.services.audit import AuditLog
from app.services.settings import Settings
from app.telephony.admission import Admissions
from app.telephony.calls import CallLog
from app.telephony.features import FeatureFlags
from app.telephony.leases import CallLeases
from app.telephony.lines import Lines
from app.telephony.listener_state import ListenerState
from app.telephony.process_listeners import process_listeners
from app.telephony.readiness import Readiness
from app.telephony.limits import RedeemedCall, TicketStore
from app.telephony.settings_resource import TelephonySettings
from app.telephony.signalling import CarrierSignalling, PbxSignalling
from core.process_listeners import ProcessListener


class Telephony:
    def __init__(self, settings: Settings, box: SecretBox, audit: AuditLog,
                 features: FeatureFlags, listener: ListenerState) -> None:
        self.settings = settings
        self.listener = listener
        self.resource = TelephonySettings(settings, box, listener)
        self.lines = Lines(audit, settings)
        self.calls = CallLog()
        self.leases = CallLeases(listener)
        self.tickets = TicketStore(owner=self.leases.instance_id)
        self.admissions = Admissions(settings, features, self.tickets, audit)
        self.carrier = CarrierSignalling(settings, self.admissions, self.calls, audit)
        self.pbx = PbxSignalling(settings, self.admissions, self.calls)
        self.readiness = Readiness(settings, box, self._listeners)

    async def _listeners(self) -> list[ProcessListener]:
        return await process_listeners(self.leases)

    async def surface_open(self) -> bool:
        """spec: telephony.md "Endpoints" — the carrier and pbx paths exist only while
        the feature is on and a provider is named; decided per request."""
        snapshot = await self.settings.snapshot()
        return bool(snapshot["features.telephony"]) and snapshot["telephony.provider"] is not None

    async def redeem(self, token: str) -> RedeemedCall | None:
        """Admit one audio connection: the call for a valid ticket, once, within 30 s."""
        return await self.tickets.redeem(token)
