"""Liveness and database health."""

from blacksheep import Router

from app import db
from app.http.errors import json_response


async def healthz():
    database = await db.ping()
    return json_response(200 if database else 503,
                         {"status": "ok" if database else "degraded", "database": database})


def register(router: Router) -> None:
    router.add_get("/healthz", healthz)
