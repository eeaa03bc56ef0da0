"""``DiaryServices``: the diary's parts one application holds, built by the bundle.

Route handlers reach them as ``svc.diary.<part>``: ``diaries`` (settings, hours,
closures), ``appointments``, ``screening``, ``enquiries``. ``register_tools`` adds the
call tools to the tool registry; ``clock`` is the one "now" they all read.
"""

from __future__ import annotations

from app.diary.appointments import Appointments
from app.diary.call_tools import CallTools
from app.diary.clock import Clock
from app.diary.diaries import Diaries
from app.diary.enquiries import Enquiries
from app.diary.screening import ScreeningList
from app.services.audit import AuditLog
from app.services.tools import ToolRegistry


class DiaryServices:
    def __init__(self, audit: AuditLog) -> None:
        self.clock = Clock()
        self.diaries = Diaries(audit, self.clock)
        self.appointments = Appointments(audit, self.clock)
        self.screening = ScreeningList(audit)
        self.enquiries = Enquiries()
        self.call_tools = CallTools(self.appointments, self.enquiries, self.screening)

    def register_tools(self, registry: ToolRegistry) -> None:
        """The call tools, each handed the call it runs on."""
        for spec, handler in self.call_tools.handlers():
            registry.register(spec, handler, wants_call=True)
