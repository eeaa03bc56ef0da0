"""Whether this process listens for the telephone system's audio connections now.

``telephony.pbx_listen`` is bound only at process start (spec: telephony.md "Setup:
own-telephone-system transport", step 4). The AudioSocket listener, when it binds,
calls :meth:`ListenerState.bound`, and :meth:`ListenerState.closed` when it stops;
the settings resource and the readiness check read it. A process that never bound
reports not listening, whatever the setting says now — which is exactly the symptom
"set but not listening usually means no restart since".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ListenerState:
    """The address this process bound for audio connections, or None."""

    address: str | None = None

    @property
    def listening(self) -> bool:
        return self.address is not None

    def listening_on(self, configured: str | None) -> bool:
        """Listening, and on the address configured now (not an older one)."""
        return self.address is not None and self.address == configured

    def bound(self, address: str) -> None:
        self.address = address

    def closed(self) -> None:
        self.address = None
