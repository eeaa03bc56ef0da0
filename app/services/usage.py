"""Usage of model calls: recorded off the request's hot path, summed for the dashboard.

``record`` never makes a caller wait: it buffers the row and returns; a writer task
inserts the buffer a moment later. The write still happens when the caller's own task
is being cancelled (a client disconnecting mid-stream), because it runs in a task of
its own; rows that meet an unreachable database wait for it to come back; ``drain``
writes what waits at shutdown so none is lost. Rows go through the fast connection
(``app.db.fast_connection``): usage is written on every call, and its commit
need not wait for the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from typing import Any, NamedTuple
from uuid import UUID

from app import db
from app.tables import ApiKey, TelephonyLine, UsageEvent

log = logging.getLogger("svc.usage")

OUTCOMES = ("ok", "error", "client_disconnected")
SOURCES = ("app", "api", "telephone")
# Rows that meet an unreachable database are written again, from half a second up to
# every ten, for at most ten minutes.
RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS, RETRY_FOR_SECONDS = 0.5, 10.0, 600.0


class UsageRecord(NamedTuple):
    """One model call's usage, as buffered for the batched insert. A named tuple, not a
    frozen dataclass: one is made per request, and a frozen dataclass sets each field
    through ``object.__setattr__``."""

    account_id: UUID | None
    model: str
    provider: str
    source: str
    outcome: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: int = 0
    api_key_id: UUID | None = None
    #: the telephone line the turn was answered on (None for the app and the API)
    line_id: UUID | None = None


#: The buffer goes in with one binary ``COPY``: each record's fields, in their order,
#: are the table's columns of the same names. An ``INSERT ... SELECT FROM unnest`` of
#: ten arrays cost the writer about four times the CPU a row.
_TABLE = UsageEvent._meta.tablename


class Usage:
    """Records go to a buffer that one writer task empties, ``flush_seconds`` after the
    first record it finds and then as long as rows keep coming, in one statement per
    batch: no insert sits between a request and its answer, and under load many
    requests share one round trip. ``drain`` writes whatever waits at once."""

    def __init__(self, flush_seconds: float = 0.2) -> None:
        self.flush_seconds = flush_seconds
        self._buffer: list[UsageRecord] = []
        self._writer: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()

    def record(self, entry: UsageRecord) -> None:
        assert entry.outcome in OUTCOMES and entry.source in SOURCES, entry
        self._buffer.append(entry)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        delay, waited = RETRY_FIRST_SECONDS, 0.0
        while self._buffer:
            if not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self.flush_seconds)
            batch, self._buffer = self._buffer, []
            try:
                async with db.fast_connection() as connection:
                    await connection.copy_records_to_table(
                        _TABLE, records=batch, columns=UsageRecord._fields)
                delay, waited = RETRY_FIRST_SECONDS, 0.0
            except db.UNAVAILABLE_ERRORS:
                # The calls were answered, so their usage is owed: keep the rows and
                # try again until the database is back (bounded, so a database that
                # never returns cannot grow the buffer without end).
                if waited >= RETRY_FOR_SECONDS:
                    log.error("usage not recorded: the database stayed unreachable",
                              extra={"rows": len(batch)})
                    continue
                log.warning("usage waits for the database", extra={"rows": len(batch)})
                self._buffer = batch + self._buffer
                await asyncio.sleep(delay)
                waited += delay
                delay = min(delay * 2, RETRY_MAX_SECONDS)
            except Exception:  # a lost usage row must never fail the call it describes
                log.exception("usage not recorded", extra={"rows": len(batch)})

    async def drain(self) -> None:
        """Write every recorded entry now and wait until it is written (shutdown, and
        tests before they assert)."""
        self._hurry.set()
        try:
            while self._writer is not None and not self._writer.done():
                await asyncio.wait({self._writer})
        finally:
            self._hurry.clear()

    async def totals(self, since: dt.datetime, until: dt.datetime,
                     by: str) -> list[dict[str, Any]]:
        """Sums per ``by`` (day, user, key, line, model, source, or day_source: one row
        per day and source, the source in ``source``) for ``since <= at < until``."""
        day = "date_trunc('day', at AT TIME ZONE 'UTC')::date::text"
        group = {
            "day": day,
            "user": "account_id::text",
            "key": "api_key_id::text",
            "line": "line_id::text",
            "model": "model",
            "source": "source",
            "day_source": f"{day} AS bucket, source",
        }[by]
        columns = group if by == "day_source" else f"{group} AS bucket"
        order = "1, 2" if by == "day_source" else "1"
        async with db.connection() as connection:
            rows = [dict(row) for row in await connection.fetch(
                f"SELECT {columns}, count(*) AS requests, "
                "coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
                "coalesce(sum(completion_tokens), 0) AS completion_tokens, "
                "count(*) FILTER (WHERE outcome = 'error') AS errors, "
                "count(*) FILTER (WHERE outcome = 'client_disconnected') AS disconnected, "
                "coalesce(round(avg(latency_ms)), 0)::int AS avg_latency_ms "
                f"FROM usage_event WHERE at >= $1 AND at < $2 GROUP BY {order} ORDER BY {order}",
                since, until)]
        if by == "key":
            await _name_keys(rows)
        if by == "line":
            await _name_lines(rows)
        return rows


async def _name_lines(rows: list[dict[str, Any]]) -> None:
    """Say which number and label each line has (a released line keeps its id only).
    App and API usage has no line: ``bucket`` None."""
    ids = [row["bucket"] for row in rows if row["bucket"] is not None]
    lines = await TelephonyLine.select(TelephonyLine.id, TelephonyLine.e164,
                                       TelephonyLine.label).where(
        TelephonyLine.id.is_in(ids)) if ids else []
    named = {str(line["id"]): line for line in lines}
    for row in rows:
        line = named.get(row["bucket"] or "")
        row["line_e164"] = line["e164"] if line else None
        row["line_label"] = line["label"] if line else None


async def _name_keys(rows: list[dict[str, Any]]) -> None:
    """Say whose each key is and what it is called (never its value: only the display
    prefix is stored). App and telephone usage has no key: ``bucket`` None."""
    ids = [row["bucket"] for row in rows if row["bucket"] is not None]
    keys = await ApiKey.select(ApiKey.id, ApiKey.name, ApiKey.prefix,
                               ApiKey.account_id.email).where(ApiKey.id.is_in(ids)) if ids else []
    named = {str(key["id"]): key for key in keys}
    for row in rows:
        key = named.get(row["bucket"] or "")
        row["key_name"] = key["name"] if key else None
        row["key_prefix"] = key["prefix"] if key else None
        row["owner_email"] = key["account_id.email"] if key else None
