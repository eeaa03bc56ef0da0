"""Logging as one JSON object per line, on standard error.

Fields: ``at`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, plus whatever a call
passed in ``extra`` (request id, status, duration). Credentials never reach a log call,
and a database driver's error is logged by class and place, not message: it quotes the
values of the failed query (a chat's text, an email address). A line logged while a
request is served carries its ``request_id`` even when the code that logs it never saw
the request (an adapter logging the detail of a failure whose answer only says what
happened).
"""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
import logging
import sys
import threading
import time
import traceback
from collections import deque
from contextvars import ContextVar
from itertools import islice
from typing import Any, TextIO

import orjson

from asyncpg.exceptions import InterfaceError, PostgresError

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "color_message"}
_RECORD_OWN = len(vars(logging.LogRecord("", 0, "", 0, "", None, None)))


#: The id of the request being served (set by ``app.http.middleware``).
current_request_id: ContextVar[str | None] = ContextVar("current_request_id", default=None)

class RequestIdFilter(logging.Filter):
    """Stamps each record with the id of the request being served, when it has none:
    run as the record is emitted, in the task that logged it."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


_QUOTES_VALUES = (PostgresError, InterfaceError)


def _chain(error: BaseException | None):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def without_values(exc_info) -> str | None:
    """The traceback with every message left out, when a driver error is in the chain
    (else None: the usual rendering is safe)."""
    chain = list(_chain(exc_info[1]))
    if not any(isinstance(link, _QUOTES_VALUES) for link in chain):
        return None
    kinds = " <- ".join(f"{type(link).__module__}.{type(link).__qualname__}" for link in chain)
    return ("".join(traceback.format_tb(exc_info[2])) + kinds
            + " (messages left out: they quote the query's values)")


# One encoder for every line (``json.dumps`` with options builds one per call), for
# the lines orjson refuses (an integer beyond 64 bits, a key that is not a string).
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False, separators=(",", ":"))
# orjson writes datetimes and dataclasses its own way; ``str`` as before, instead.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _encoded(line: dict[str, Any]) -> str:
    """The line as JSON: orjson (the access line of every request is written here),
    else the standard library."""
    try:
        return orjson.dumps(line, default=str, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:  # a key not a string, an integer beyond 64 bits
        return _ENCODER.encode(line)


class JsonFormatter(logging.Formatter):
    """One JSON object per record; a busy server formats one per request, so the
    date part of ``at`` is worked out once a second, not for every line."""

    _second = -1
    _date_and_time = ""

    def _at(self, created: float) -> str:
        second = int(created)
        if second != self._second:
            self._date_and_time = dt.datetime.fromtimestamp(second, dt.UTC).strftime(
                "%Y-%m-%dT%H:%M:%S")
            self._second = second
        return f"{self._date_and_time}.{int((created - second) * 1000):03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "at": self._at(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        # A record's own attributes come first, in the order its constructor sets
        # them; ``extra`` (which may not replace them) and filters add theirs after.
        for name, value in islice(vars(record).items(), _RECORD_OWN, None):
            if name not in _STANDARD and not name.startswith("_"):
                line[name] = value
        if record.exc_info:
            line["error"] = without_values(record.exc_info) or self.formatException(
                record.exc_info)
        return _encoded(line)


class FixedRecords:
    """Records of one logger, level and message, logged once per request (the access
    line): what every such record shares is worked out once and copied, not made again
    by ``LogRecord.__init__`` each time (the path split, the level's name looked up),
    which was a third of the line's cost. The record is the one ``Logger.info`` would
    make, handled the same way; when records carry what differs from call to call (the
    thread, the process, the task, the caller's line) or come from a record factory of
    someone else's, ``Logger.log`` makes it as usual."""

    def __init__(self, logger: logging.Logger, level: int, message: str) -> None:
        self.logger, self.level, self.message = logger, level, message
        self._shared: dict[str, Any] = {}
        self._made_under: tuple[Any, ...] | None = None

    def _usable(self) -> bool:
        under = (logging.logThreads, logging.logProcesses, logging.logMultiprocessing,
                 logging._srcfile, logging.getLogRecordFactory(), logging._startTime)
        if under != self._made_under:
            # As ``Logger._log`` makes it when it does not look for the caller.
            made = self.logger.makeRecord(self.logger.name, self.level, "(unknown file)", 0,
                                          self.message, (), None, "(unknown function)")
            self._shared = vars(made).copy() if (
                type(made) is logging.LogRecord and not any(under[:4])
                and made.__dict__.get("taskName") is None) else {}
            self._made_under = under
        return bool(self._shared)

    def log(self, fields: dict[str, Any]) -> None:
        logger = self.logger
        if not logger.isEnabledFor(self.level):
            return
        if not self._usable():
            logger.log(self.level, self.message, extra=fields, stacklevel=2)
            return
        record = logging.LogRecord.__new__(logging.LogRecord)
        attributes = record.__dict__
        attributes.update(self._shared)
        created = time.time()  # as ``LogRecord.__init__`` works them out
        attributes["created"] = created
        attributes["msecs"] = int((created - int(created)) * 1000) + 0.0
        attributes["relativeCreated"] = (created - logging._startTime) * 1000
        attributes.update(fields)
        logger.handle(record)


class BatchedStreamHandler(logging.StreamHandler):
    """Records queued as they come, then formatted and written by a background thread
    every ``FLUSH_SECONDS``, a slice at a time; a warning or worse is written at once,
    after everything queued before it.

    A busy server logs an access line per request. Formatted and written in the
    request's own turn of the event loop, that line cost a /v1 passthrough request
    about as much CPU time as everything else it does outside the upstream call put
    together, several times what formatting the same line costs in a batch
    (docs/performance.md). Standard error is line-buffered besides, so each line was
    a ``write`` system call too. A crash may lose the last fraction of a second of
    info lines, never a warning or an error.

    The text of a queued record's message is fixed as it is queued (as the standard
    library's ``QueueHandler`` does), so arguments changed afterwards do not change
    it; values given in ``extra`` are read as the record is formatted.
    """

    FLUSH_SECONDS = 0.2
    #: Records formatted at a time: between slices the flushing thread lets the event
    #: loop's thread have the interpreter, so a second's lines never hold it up long.
    SLICE = 64

    def __init__(self, stream: TextIO) -> None:
        super().__init__(io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(stream.fileno(), "w", closefd=False), 1 << 16),
            encoding="utf-8", errors="backslashreplace"))
        self._queued: deque[logging.LogRecord] = deque()
        self._closing = threading.Event()
        threading.Thread(target=self._flush_often, name="log-flush", daemon=True).start()

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:
            try:
                self._queued.append(_message_fixed(record))
            except Exception:  # noqa: BLE001 - logging never raises into the caller
                self.handleError(record)
            return
        self._write_queued(record)
        self.flush()

    def flush(self) -> None:
        self._write_queued()
        super().flush()

    def _write_queued(self, last: logging.LogRecord | None = None) -> None:
        """Format and write the queued records in order, then ``last``."""
        while True:
            with self.lock:  # type: ignore[union-attr]  # made by Handler.__init__
                lines = [self._line(self._queued.popleft())
                         for _ in range(min(self.SLICE, len(self._queued)))]
                done = not self._queued
                if done and last is not None:
                    lines.append(self._line(last))
                if lines:
                    self.stream.write("".join(lines))
            if done:
                return
            time.sleep(0)  # let another thread have the interpreter between slices

    def _line(self, record: logging.LogRecord) -> str:
        try:
            return self.format(record) + self.terminator
        except Exception:  # noqa: BLE001 - logging never raises into the caller
            self.handleError(record)
            return ""

    def _flush_often(self) -> None:
        while not self._closing.wait(self.FLUSH_SECONDS):
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - a full or closed stream: keep trying
                self.handleError(logging.makeLogRecord({"msg": "log flush failed"}))

    def close(self) -> None:
        self._closing.set()
        self.flush()
        super().close()


def _message_fixed(record: logging.LogRecord) -> logging.LogRecord:
    """``record``, or when its message has arguments a copy whose message is the text
    they make now (other handlers get the record as it was)."""
    if not record.args:
        return record
    fixed = copy.copy(record)
    fixed.msg, fixed.args = record.getMessage(), None
    return fixed


def configure_logging(level: str = "info", stream=None) -> None:
    stream = stream or sys.stderr
    try:
        stream.fileno()
        handler: logging.Handler = BatchedStreamHandler(stream)
    except (AttributeError, OSError, io.UnsupportedOperation):  # not a file: as it is
        handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    for earlier in root.handlers:
        if isinstance(earlier, BatchedStreamHandler):  # ours from before: end its thread
            earlier.close()
    # What our lines never show, not worked out for each record (the logging docs'
    # "Optimization" section): the caller's source line, thread and process.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The access line is ours; uvicorn's own would repeat it without the request id.
    logging.getLogger("uvicorn.access").disabled = True
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # The embedded server's helper narrates each step at info; keep its warnings.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
