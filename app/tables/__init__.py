"""Piccolo tables: the data svc keeps, one module per area.

The tables mirror the SQL in ``app/piccolo_migrations``; a test compares both so they
cannot drift. ``ALL_TABLES`` lists every table for Piccolo's app registry.
"""

from app.tables.accounts import Account, AuditEntry, AuthSession, LoginFailure, RuntimeSetting
from app.tables.api_keys import ApiKey
from app.tables.diary import Appointment, Diary, DiaryClosure, Enquiry, ScreeningName
from app.tables.notify import NotifyAttempt, NotifyOutbox, NotifyTarget
from app.tables.telephony import (
    FeatureOverride,
    TelephonyCall,
    TelephonyLease,
    TelephonyLine,
    TelephonyRing,
    TelephonySignatureFailure,
    TelephonyTicket,
    TelephonyTurn,
)
from app.tables.platform import (
    Agent,
    AgentLibrary,
    Chat,
    ChatMessage,
    Chunk,
    Document,
    HttpTool,
    HttpToolOffer,
    Library,
    Project,
    ProjectInvitation,
    ProjectMember,
    Provider,
    ProviderKey,
    UsageEvent,
)

ALL_TABLES = (
    Account, AuthSession, LoginFailure, RuntimeSetting, AuditEntry,
    Project, ProjectMember, ProjectInvitation, Provider, ProviderKey, Library, Document, Chunk,
    Agent, AgentLibrary, HttpTool, HttpToolOffer, Chat, ChatMessage, UsageEvent,
    ApiKey,
    FeatureOverride, TelephonyLine, TelephonyCall, TelephonyTicket, TelephonyRing,
    TelephonySignatureFailure, TelephonyLease, TelephonyTurn,
    NotifyTarget, NotifyOutbox, NotifyAttempt,
    Diary, DiaryClosure, Appointment, ScreeningName, Enquiry,
)

__all__ = [table.__name__ for table in ALL_TABLES] + ["ALL_TABLES"]
