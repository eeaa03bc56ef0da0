"""The services one running application holds, built once at start by ``app.main``.

Route handlers receive this bundle by dependency injection (``svc: Services``) and
call the use cases on it; nothing else keeps global state.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.config import BootConfig
from app.crypto import SecretBox
from app.services.accounts import Accounts
from app.services.audit import AuditLog
from app.services.sessions import Sessions
from app.services.settings import Settings


@dataclass
class Services:
    boot: BootConfig
    box: SecretBox
    audit: AuditLog
    accounts: Accounts
    sessions: Sessions
    settings: Settings

    @classmethod
    def build(cls, boot: BootConfig) -> "Services":
        box = SecretBox(boot["message_encryption_key"])
        audit = AuditLog()
        return cls(boot=boot, box=box, audit=audit, accounts=Accounts(audit),
                   sessions=Sessions(), settings=Settings(boot, box, audit))

    @property
    def max_body_bytes(self) -> int:
        return self.boot["server.max_body_bytes"]
