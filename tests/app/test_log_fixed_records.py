"""The access line's records (``app.log_format.FixedRecords``): the record ``Logger``
would make, but with what every such record shares copied instead of worked out."""

from __future__ import annotations

import logging
import threading

import pytest

from app.log_format import FixedRecords, JsonFormatter

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
