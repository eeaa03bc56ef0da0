"""The access line's records (``app.log_format.FixedRecords``): the record ``Logger``
would make, but with what every such record shares copied instead of worked out; and
with svc's own log as the only way out, the same line queued without a record."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from app.log_format import (
    BatchedStreamHandler,
    FixedRecords,
    JsonFormatter,
    RequestIdFilter,
    current_request_id,
)

FIELDS = {"request_id": "r1", "method": "POST", "path": "/v1/chat/completions",
          "status": 200, "duration_ms": 1.5, "account_id": None, "client": "127.0.0.1"}
_MOMENT = ("created", "msecs", "relativeCreated")


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def logger(monkeypatch):
    # As ``configure_logging`` sets them for a serving process.
    monkeypatch.setattr(logging, "_srcfile", None)
    for flag in ("logThreads", "logProcesses", "logMultiprocessing"):
        monkeypatch.setattr(logging, flag, False)
    logger = logging.getLogger("test.fixed_records")
    kept = Kept()
    logger.addHandler(kept)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, kept
    logger.removeHandler(kept)


def _without_moment(record: logging.LogRecord) -> list[tuple[str, object]]:
    return [(name, value) for name, value in vars(record).items() if name not in _MOMENT]


def test_the_record_is_the_one_logger_info_makes(logger):
    logger, kept = logger
    logger.info("request", extra=FIELDS)
    FixedRecords(logger, logging.INFO, "request").log(dict(FIELDS))
    made, copied = kept.records
    assert type(copied) is logging.LogRecord
    assert _without_moment(copied) == _without_moment(made)  # the same, in the same order
    assert 0 <= copied.created - made.created < 60 and 0 <= copied.msecs < 1000
    formatter = JsonFormatter()
    assert formatter.format(copied).split(",", 1)[1] == formatter.format(made).split(",", 1)[1]


def test_nothing_is_made_below_the_loggers_level(logger):
    logger, kept = logger
    logger.setLevel(logging.WARNING)
    FixedRecords(logger, logging.INFO, "request").log(dict(FIELDS))
    assert kept.records == []


def test_records_that_name_their_thread_are_made_as_usual(logger, monkeypatch):
    logger, kept = logger
    records = FixedRecords(logger, logging.INFO, "request")
    records.log(dict(FIELDS))
    monkeypatch.setattr(logging, "logThreads", True)
    thread = threading.Thread(target=records.log, args=(dict(FIELDS),))
    thread.start()
    thread.join()
    assert kept.records[0].thread is None
    assert kept.records[1].thread == thread.ident and kept.records[1].request_id == "r1"


@pytest.fixture
def own_log(monkeypatch, tmp_path):
    """A logger whose one way out is svc's own handler, as ``configure_logging`` sets
    it up, writing to a file; the handler's thread is stopped so the test flushes."""
    monkeypatch.setattr(logging, "_srcfile", None)
    for flag in ("logThreads", "logProcesses", "logMultiprocessing"):
        monkeypatch.setattr(logging, flag, False)
    path = tmp_path / "log"
    with path.open("w") as out:
        handler = BatchedStreamHandler(out)
        handler._closing.set()
        handler.setFormatter(JsonFormatter())
        handler.addFilter(RequestIdFilter())
        logger = logging.getLogger("test.fixed_records.own")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        try:
            yield logger, handler, path
        finally:
            logger.removeHandler(handler)
            handler.close()


def _only_ours(logger: logging.Logger, handler: BatchedStreamHandler) -> None:
    """Leave out the capturing handlers pytest adds as each test runs."""
    logger.handlers[:] = [handler]


def test_with_svcs_own_log_the_line_is_queued_without_a_record_and_reads_the_same(
        own_log, monkeypatch):
    logger, handler, path = own_log
    _only_ours(logger, handler)
    monkeypatch.setattr(time, "time", lambda: 1795000000.25)
    FixedRecords(logger, logging.INFO, "request").log(dict(FIELDS))
    queued = list(handler._queued)
    assert len(queued) == 1 and not isinstance(queued[0], logging.LogRecord)
    logger.info("request", extra=FIELDS)  # the record path, for the same line
    handler.flush()
    fast, made = path.read_text().splitlines()
    assert fast == made
    assert json.loads(fast)["at"] == "2026-11-18T11:06:40.250+00:00"


def test_a_queued_line_gets_the_request_id_the_filter_would_give(own_log):
    logger, handler, path = own_log
    _only_ours(logger, handler)
    fields = {key: value for key, value in FIELDS.items() if key != "request_id"}
    token = current_request_id.set("served-now")
    try:
        FixedRecords(logger, logging.INFO, "request").log(dict(fields))
    finally:
        current_request_id.reset(token)
    handler.flush()
    assert json.loads(path.read_text())["request_id"] == "served-now"


@pytest.mark.parametrize("another_way_out", ["handler", "logger filter", "handler filter"])
def test_a_record_is_made_when_anything_else_would_see_it(own_log, another_way_out):
    logger, handler, path = own_log
    _only_ours(logger, handler)
    kept = Kept()
    if another_way_out == "handler":
        logger.addHandler(kept)
    elif another_way_out == "logger filter":
        logger.addFilter(lambda record: kept.records.append(record) or True)
    else:
        handler.addFilter(lambda record: kept.records.append(record) or True)
    try:
        FixedRecords(logger, logging.INFO, "request").log(dict(FIELDS))
    finally:
        logger.removeHandler(kept)
        logger.filters.clear()
    assert len(kept.records) == 1 and kept.records[0].request_id == "r1"
    handler.flush()
    assert json.loads(path.read_text())["path"] == "/v1/chat/completions"
