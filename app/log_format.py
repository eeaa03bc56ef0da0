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

import asyncio
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
from typing import Any, Iterable, TextIO

import orjson

from asyncpg.exceptions import InterfaceError, PostgresError

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "color_message"}
_RECORD_OWN = len(vars(logging.LogRecord("", 0, "", 0, "", None, None)))


#: A line queued without its record: when, the level's name, the logger's name, the
#: message, and the fields ``extra`` would have given (``FixedRecords``).
QueuedFields = tuple[float, str, str, str, dict[str, Any]]

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
        # A record's own attributes come first, in the order its constructor sets
        # them; ``extra`` (which may not replace them) and filters add theirs after.
        line = self._line(record.created, record.levelname, record.name,
                          record.getMessage(), islice(vars(record).items(), _RECORD_OWN, None))
        if record.exc_info:
            line["error"] = without_values(record.exc_info) or self.formatException(
                record.exc_info)
        return _encoded(line)

    def format_fields(self, entry: QueuedFields) -> str:
        """The line ``format`` makes of the record ``FixedRecords`` would have made."""
        created, level_name, logger_name, message, fields = entry
        return _encoded(self._line(created, level_name, logger_name, message, fields.items()))

    def _line(self, created: float, level_name: str, logger_name: str, message: str,
              extra: Iterable[tuple[str, Any]]) -> dict[str, Any]:
        line = {"at": self._at(created), "level": level_name.lower(), "logger": logger_name,
                "message": message}
        for name, value in extra:
            if name not in _STANDARD and not name.startswith("_"):
                line[name] = value
        return line


class FixedRecords:
    """Records of one logger, level and message, logged once per request (the access
    line): what every such record shares is worked out once and copied, not made again
    by ``LogRecord.__init__`` each time (the path split, the level's name looked up),
    which was a third of the line's cost. The record is the one ``Logger.info`` would
    make, handled the same way; when records carry what differs from call to call (the
    thread, the process, the task, the caller's line) or come from a record factory of
    someone else's, ``Logger.log`` makes it as usual.

    Where the record's one way out is svc's own log (``configure_logging``: a
    ``BatchedStreamHandler`` with the JSON formatter and the request id filter, and
    nothing else on the way), no record is made at all: the fields are queued as they
    are, and the flushing thread writes the very line the record would have made. In
    the request's own turn the access line then costs a clock reading and a check of
    the loggers, where making and handling the record was several times that."""

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

    def _sole_way_out(self) -> BatchedStreamHandler | None:
        """Our own handler, when it is the only one the record would reach and nothing
        but its request id filter would see the record on the way."""
        logger = self.logger
        if logger.filters:
            return None
        handlers: list[logging.Handler] = []
        current: logging.Logger | None = logger
        while current is not None:
            handlers += current.handlers
            current = current.parent if current.propagate else None
        if len(handlers) != 1:
            return None
        handler = handlers[0]
        if (type(handler) is not BatchedStreamHandler or handler.level > self.level
                or type(handler.formatter) is not JsonFormatter
                or any(type(each) is not RequestIdFilter for each in handler.filters)):
            return None
        return handler

    def log(self, fields: dict[str, Any]) -> None:
        logger = self.logger
        if not logger.isEnabledFor(self.level):
            return
        if not self._usable():
            logger.log(self.level, self.message, extra=fields, stacklevel=2)
            return
        created = time.time()  # as ``LogRecord.__init__`` works them out
        handler = self._sole_way_out()
        if handler is not None:
            if "request_id" not in fields:  # what the request id filter would add
                request_id = current_request_id.get()
                if request_id is not None:
                    fields["request_id"] = request_id
            handler.queue_fields((created, self._shared["levelname"], logger.name,
                                  self.message, fields))
            return
        record = logging.LogRecord.__new__(logging.LogRecord)
        attributes = record.__dict__
        attributes.update(self._shared)
        attributes["created"] = created
        attributes["msecs"] = int((created - int(created)) * 1000) + 0.0
        attributes["relativeCreated"] = (created - logging._startTime) * 1000
        attributes.update(fields)
        logger.handle(record)


class BatchedStreamHandler(logging.StreamHandler):
    """Records queued as they come and written every ``FLUSH_SECONDS``, a slice at a
    time, after each other; a warning or worse is written at once, after everything
    queued before it.

    A busy server logs an access line per request. Made, formatted and written in the
    request's own turn of the event loop, the line cost a /v1 passthrough request tens
    of microseconds of CPU time, several times what the same line costs formatted
    with others in a batch (docs/performance.md); standard error is line-buffered
    besides, so each line was a ``write`` system call too. A crash may lose the last
    fraction of a second of info lines, never a warning or an error.

    Who writes: a thread of the handler's own wakes every ``FLUSH_SECONDS``. When a
    serving process has named its event loop (``write_from``), the thread asks the
    loop to write, between two of its callbacks: formatting in the thread itself made
    it contend with the loop for the interpreter, which cost the loop more than the
    formatting. A loop that has not done so ``STUCK_SECONDS`` after being asked is
    stuck (the log is what tells why), and the thread writes itself.

    The text of a queued record's message is fixed as it is queued (as the standard
    library's ``QueueHandler`` does), so arguments changed afterwards do not change
    it; values given in ``extra`` are read as the record is formatted.
    """

    FLUSH_SECONDS = 0.2
    STUCK_SECONDS = 1.0
    #: Records formatted at a time: between slices the flushing thread lets the event
    #: loop's thread have the interpreter, so a second's lines never hold it up long.
    SLICE = 64

    def __init__(self, stream: TextIO) -> None:
        super().__init__(io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(stream.fileno(), "w", closefd=False), 1 << 16),
            encoding="utf-8", errors="backslashreplace"))
        self._queued: deque[logging.LogRecord | QueuedFields] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._asked_at: float | None = None  # when the loop was asked to write, until it has
        self._closing = threading.Event()
        threading.Thread(target=self._flush_often, name="log-flush", daemon=True).start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.levelno < logging.WARNING:
                self._queued.append(_message_fixed(record))
                return
            self._write_queued(record)
            super().flush()  # the queue is written: only the stream's buffer is left
        except Exception:  # noqa: BLE001 - logging never raises into the caller
            self.handleError(record)

    def queue_fields(self, entry: QueuedFields) -> None:
        """Queue the line of a record ``FixedRecords`` did not need to make."""
        self._queued.append(entry)

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

    def _line(self, queued: logging.LogRecord | QueuedFields) -> str:
        try:
            if isinstance(queued, logging.LogRecord):
                return self.format(queued) + self.terminator
            return self.formatter.format_fields(queued) + self.terminator  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - logging never raises into the caller
            self.handleError(queued if isinstance(queued, logging.LogRecord)
                             else logging.makeLogRecord({"msg": "unwritable log line"}))
            return ""

    def write_from(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Have ``loop``'s thread write the queued lines (None: the handler's thread)."""
        self._loop, self._asked_at = loop, None

    def _flush_often(self) -> None:
        while not self._closing.wait(self.FLUSH_SECONDS):
            if not self._asked_loop():
                self._flush_quietly()

    def _flush_quietly(self) -> None:
        """Flush, reporting a failure as logging does (a full or closed stream, a
        reader gone): the writer may be the event loop, which must go on serving."""
        try:
            self.flush()
        except Exception:  # noqa: BLE001 - logging never raises into the caller
            self.handleError(logging.makeLogRecord({"msg": "log flush failed"}))

    def _asked_loop(self) -> bool:
        """Whether the loop writes this time: asked now, or asked a moment ago and not
        stuck. False when there is no running loop to ask."""
        loop = self._loop
        if loop is None or not loop.is_running():
            return False
        now = time.monotonic()
        if self._asked_at is not None:
            return now - self._asked_at < self.STUCK_SECONDS
        self._asked_at = now
        try:
            loop.call_soon_threadsafe(self._flush_asked)
        except RuntimeError:  # closed since
            self._asked_at = None
            return False
        return True

    def _flush_asked(self) -> None:
        self._asked_at = None
        self._flush_quietly()

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


def write_log_from(loop: asyncio.AbstractEventLoop | None) -> None:
    """Have svc's own log (``configure_logging``) write from ``loop``'s thread, between
    two of its callbacks; None: from the log's own thread again."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, BatchedStreamHandler):
            handler.write_from(loop)


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
