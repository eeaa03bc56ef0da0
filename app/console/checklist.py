"""The first-run checklist on the console's home page: the steps that make a fresh
install useful, each ticked when the database shows it done for the signed-in account.

A step is offered only to an account that may use its screen (the screen's own gate),
so nobody is asked to do what they cannot. ``GET /api/me/checklist`` answers the same
list the home page renders.
"""

from __future__ import annotations

from typing import Any

from blacksheep import Request, Response, Router

from app import db
from app.bundle import Services
from app.console.screens import SCREENS, Audience, Screen, audience_of
from app.http.errors import json_response
from app.http.guards import signed_in
from core.records import frozen


@frozen
class Step:
    key: str
    title: str
    template: str  # the screen where the step is done
    # true once done; ``$1``, where the SQL has it, is the account's id (a provider and
    # a line are the server's, not an account's)
    done_sql: str


def _exists(table: str, where: str = "TRUE") -> str:
    """The SQL that is true once ``table`` holds a row matching ``where``."""
    return f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {where})"


STEPS: tuple[Step, ...] = (
    Step("password", "Change the password", "password",
         "SELECT NOT password_change_required FROM account WHERE id = $1"),
    Step("provider", "Add a model provider", "providers", _exists("provider")),
    Step("library", "Create a Library", "libraries", _exists("library", "owner_id = $1")),
    Step("agent", "Create an agent", "agents",
         _exists("agent", "owner_id = $1 AND archived_at IS NULL")),
    Step("api_key", "Mint an API key", "api_keys",
         _exists("api_key", "account_id = $1 AND revoked_at IS NULL")),
    Step("line", "Register a telephone line", "telephone", _exists("telephony_line")),
    Step("diary", "Set up your diary", "diary",
         _exists("diary", "account_id = $1 AND hours <> '[]'::jsonb")),
)

_SCREEN_OF = {screen.template: screen for screen in SCREENS}


def _screen(step: Step) -> Screen:
    return _SCREEN_OF[step.template]


async def checklist(audience: Audience) -> dict[str, Any]:
    """The steps this account may take, each with whether it is done."""
    offered = [step for step in STEPS if _screen(step).gate(audience)]
    steps = []
    async with db.connection() as connection:
        for step in offered:
            given = (audience.identity.account_id,) if "$1" in step.done_sql else ()
            done = await connection.fetchval(step.done_sql, *given)
            steps.append({"key": step.key, "title": step.title, "href": _screen(step).path,
                          "done": bool(done)})
    return {"steps": steps, "done": sum(step["done"] for step in steps), "total": len(steps)}


async def get_checklist(request: Request, svc: Services) -> Response:
    identity = await signed_in(request, svc)
    return json_response(200, await checklist(await audience_of(svc, identity)))


def register(router: Router) -> None:
    router.add_get("/api/me/checklist", get_checklist)
