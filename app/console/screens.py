"""The console's screens: where each lives, what it is called, and who is offered it.

Every gate here mirrors the gate of the JSON API the screen calls (``app.http.guards``
and the spec's "Authentication" tables), so the console never offers what the API
would refuse. A screen whose gate fails is left out of the navigation and its page
answers 404, as the API answers 404 for what the caller may not see.
"""

from __future__ import annotations

from typing import Callable

from app.bundle import Services
from app.services.accounts import Identity
from core.records import frozen


@frozen
class Audience:
    """What a gate may look at: who is signed in and the switches in force for them."""

    identity: Identity
    public_api: bool
    telephony: bool


async def audience_of(svc: Services, identity: Identity) -> Audience:
    snapshot = await svc.settings.snapshot()
    telephony = await svc.features.feature_on("features.telephony", identity.account_id,
                                              snapshot)
    return Audience(identity, bool(snapshot["features.public_api"]), telephony)


Gate = Callable[[Audience], bool]


def anyone(audience: Audience) -> bool:
    return True


def key_holders(audience: Audience) -> bool:
    # spec: public-api.md "Errors" — with features.public_api off, key management is 404.
    return audience.public_api


def administrators(audience: Audience) -> bool:
    return audience.identity.is_admin


def configuration_readers(audience: Audience) -> bool:
    # app.routes.admin_settings: an administrator or the holder of any permission.
    return audience.identity.is_admin or bool(audience.identity.permissions)


def line_managers(audience: Audience) -> bool:
    # spec: telephony.md "Authentication" — telephony.manage covers lines and the log.
    return audience.identity.has("telephony.manage")


def line_owners(audience: Audience) -> bool:
    # Owner-or-administrator resources: any account may keep its own diary and lists,
    # offered once the telephone feature is on for that account.
    return audience.telephony or audience.identity.is_admin


@frozen
class Screen:
    path: str
    template: str
    title: str
    section: str
    summary: str
    gate: Gate


SECTIONS = ("Chat", "Profile", "Owner", "Setup", "Admin")

SCREENS: tuple[Screen, ...] = (
    Screen("/chat", "chat", "Chat", "Chat",
           "Ask one of your agents, with its sources.", anyone),
    Screen("/profile/keys", "api_keys", "API keys", "Profile",
           "Keys for the chat-completions API under /v1.", key_holders),
    Screen("/profile/provider-keys", "provider_keys", "Provider keys", "Profile",
           "Your own keys for a model provider.", anyone),
    Screen("/profile/password", "password", "Password", "Profile",
           "Change the password you sign in with.", anyone),
    Screen("/owner/diary", "diary", "Diary", "Owner",
           "Opening hours, closures and upcoming appointments.", line_owners),
    Screen("/owner/appointments", "appointments", "Appointments", "Owner",
           "A day or a week of appointments; book, move and cancel.", line_owners),
    Screen("/owner/screening", "screening", "Screening list", "Owner",
           "Names a person must check before a caller is put through.", line_owners),
    Screen("/owner/notify-targets", "notify_targets", "Notification targets", "Owner",
           "Where news of messages and appointments is sent.", line_owners),
    Screen("/owner/enquiries", "enquiries", "Enquiries", "Owner",
           "Messages taken on your lines.", line_owners),
    Screen("/owner/compliance", "compliance", "Compliance", "Owner",
           "What your lines record and keep, and for how long.", line_owners),
    Screen("/owner/talk", "talk", "Talk to a line", "Owner",
           "Type to a line's agent as a caller would, under the rules of a call.", line_owners),
    Screen("/agents", "agents", "Agents", "Setup",
           "Create agents and attach Libraries.", anyone),
    Screen("/libraries", "libraries", "Libraries", "Setup",
           "Libraries and their documents.", anyone),
    Screen("/projects", "projects", "Projects", "Setup",
           "Share agents and Libraries; invitations waiting for you.", anyone),
    Screen("/admin/providers", "providers", "Providers", "Setup",
           "Model servers the agents and the API use.", administrators),
    Screen("/admin/accounts", "accounts", "Accounts", "Admin",
           "Accounts, their roles and permissions, features and API keys.", administrators),
    Screen("/admin/usage", "usage", "Usage", "Admin",
           "Requests and tokens by day, source, user, key and model.", administrators),
    Screen("/admin/configuration", "configuration", "Configuration", "Admin",
           "Runtime settings with their boot and current values.", configuration_readers),
    Screen("/admin/telephone", "telephone", "Telephone", "Admin",
           "Telephone settings, readiness checks and lines.", line_managers),
    Screen("/admin/telephone/calls", "calls", "Call log", "Admin",
           "Calls on every line, with transcripts and recordings.", line_managers),
    Screen("/admin/telephone/messages", "messages", "Messages", "Admin",
           "Messages taken on every line.", line_managers),
    Screen("/audit", "audit", "Audit trail", "Admin",
           "Who changed what, and what was refused, by actor, action and time.",
           administrators),
)

def call_readers(audience: Audience) -> bool:
    # Its log entry needs telephony.manage; its recording is the line's account's too
    # (spec: telephony.md "Authentication"), so a line's owner may open the page.
    return line_managers(audience) or line_owners(audience)


#: a call's page is reached from the call log or a message, not the navigation
CALL_SCREEN = Screen("/calls/{call_id}", "call", "Call", "Admin",
                     "One call: its transcript and recording.", call_readers)


#: a document's page is reached from a citation in a chat; the API decides who may read it
DOCUMENT_SCREEN = Screen("/libraries/{library_id}/documents/{document_id}", "document",
                         "Document", "Setup", "One document of a Library.", anyone)


def offered(audience: Audience) -> list[Screen]:
    return [screen for screen in SCREENS if screen.gate(audience)]


def navigation(audience: Audience) -> list[tuple[str, list[Screen]]]:
    """The sections with at least one screen this caller may use, in a fixed order."""
    mine = offered(audience)
    sections = [(section, [s for s in mine if s.section == section]) for section in SECTIONS]
    return [(section, screens) for section, screens in sections if screens]
