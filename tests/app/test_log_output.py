"""The log's own output: JSON lines, batched into few writes, warnings at once."""

import asyncio
import contextlib
import datetime as dt
import json
import logging
import threading
import time

from app.log_format import BatchedStreamHandler, JsonFormatter


def record(level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord("svc.test", level, __file__, 1, message, None, None)


def messages(path) -> list[str]:
    return [json.loads(line)["message"] for line in path.read_text().splitlines()]


@contextlib.contextmanager
def batched(path, *, background: bool = False):
    """A handler writing to ``path``; without ``background`` its flushing thread is
    stopped at once, so the test decides when lines are flushed."""
    with path.open("w") as out:
        handler = BatchedStreamHandler(out)
        handler.setFormatter(JsonFormatter())
        if not background:
            handler._closing.set()
        try:
            yield handler
        finally:
            handler.close()


def until_written(path) -> None:
    deadline = time.monotonic() + 30
    while not path.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_info_lines_wait_in_the_buffer_until_flushed(tmp_path):
    path = tmp_path / "log"
    with batched(path) as handler:
        handler.handle(record(logging.INFO, "first"))
        handler.handle(record(logging.INFO, "second"))
        assert path.read_text() == ""
        handler.flush()
        assert messages(path) == ["first", "second"]


def test_a_warning_is_written_at_once_with_what_waited_before_it(tmp_path):
    path = tmp_path / "log"
    with batched(path) as handler:
        handler.handle(record(logging.INFO, "before"))
        handler.handle(record(logging.WARNING, "careful"))
        assert messages(path) == ["before", "careful"]


def test_the_background_flush_writes_waiting_lines_without_being_asked(tmp_path):
    path = tmp_path / "log"
    with batched(path, background=True) as handler:
        handler.handle(record(logging.INFO, "later"))
        until_written(path)
        assert messages(path) == ["later"]


def test_closing_writes_what_is_left(tmp_path):
    path = tmp_path / "log"
    with batched(path) as handler:
        handler.handle(record(logging.INFO, "last words"))
    assert messages(path) == ["last words"]


def test_a_failing_flush_does_not_end_the_background_flushing(tmp_path, monkeypatch):
    path = tmp_path / "log"
    monkeypatch.setattr(logging, "raiseExceptions", False)  # handleError stays quiet
    with batched(path, background=True) as handler:
        failures = []
        real_flush = handler.stream.flush

        def flaky_flush():
            if not failures:
                failures.append(1)
                raise BlockingIOError("stderr is full")
            real_flush()

        handler.stream.flush = flaky_flush
        handler.handle(record(logging.INFO, "after a hiccup"))
        until_written(path)
        assert failures and messages(path) == ["after a hiccup"]


def test_the_time_of_a_line_is_utc_to_the_millisecond():
    formatter = JsonFormatter()
    for created in (0.0, 1795000000.999, 1795000001.0005, 1795000001.5):
        entry = record(logging.INFO, "x")
        entry.created = created
        expected = dt.datetime.fromtimestamp(created, dt.UTC).isoformat(timespec="milliseconds")
        assert json.loads(formatter.format(entry))["at"] == expected


def test_a_database_error_is_logged_without_the_values_it_quotes():
    import asyncpg

    secret = "".join(("my", " secret"))  # not spelt out: the traceback shows source lines

    def failing_query():
        try:
            raise asyncpg.exceptions.DataError(f"invalid input for query argument $1: {secret}")
        except asyncpg.exceptions.DataError as exc:
            raise RuntimeError(f"while storing {secret}") from exc

    try:
        failing_query()
    except RuntimeError:
        logged = logging.LogRecord("svc.test", logging.ERROR, __file__, 1, "storing failed",
                                   None, __import__("sys").exc_info())
    line = json.loads(JsonFormatter().format(logged))
    assert "DataError" in line["error"] and "failing_query" in line["error"]
    assert secret not in line["error"]
    try:
        raise ValueError("an ordinary error keeps its message")
    except ValueError:
        ordinary = logging.LogRecord("svc.test", logging.ERROR, __file__, 1, "failed", None,
                                     __import__("sys").exc_info())
    assert "keeps its message" in json.loads(JsonFormatter().format(ordinary))["error"]


def test_a_queued_message_is_the_text_its_arguments_made_when_logged(tmp_path):
    path = tmp_path / "log"
    counts = [1]
    with batched(path) as handler:
        logged = logging.LogRecord("svc.test", logging.INFO, __file__, 1, "counts %s",
                                   (counts,), None)
        handler.handle(logged)
        counts.append(2)
        handler.flush()
        assert messages(path) == ["counts [1]"]
    assert logged.args == (counts,)  # another handler sees the record as it was logged


def test_lines_past_one_slice_keep_their_order_and_a_warning_comes_last(tmp_path):
    path = tmp_path / "log"
    with batched(path) as handler:
        many = [f"line {number}" for number in range(BatchedStreamHandler.SLICE * 3 + 5)]
        for text in many:
            handler.handle(record(logging.INFO, text))
        handler.handle(record(logging.ERROR, "failed"))
        assert messages(path) == [*many, "failed"]


def test_a_record_that_cannot_be_formatted_leaves_the_others(tmp_path, monkeypatch):
    path = tmp_path / "log"
    monkeypatch.setattr(logging, "raiseExceptions", False)
    with batched(path) as handler:
        handler.handle(record(logging.INFO, "before"))
        broken = record(logging.INFO, "broken")
        broken.created = "not a time"  # type: ignore[assignment]
        handler.handle(broken)
        handler.handle(record(logging.INFO, "after"))
        handler.flush()
        assert messages(path) == ["before", "after"]


def test_with_a_loop_named_its_thread_writes_the_lines(tmp_path, monkeypatch):
    path = tmp_path / "log"
    monkeypatch.setattr(BatchedStreamHandler, "FLUSH_SECONDS", 0.01)
    with batched(path, background=True) as handler:
        writers: list[str] = []
        write = handler.stream.write

        def written_by(text: str) -> int:
            writers.append(threading.current_thread().name)
            return write(text)

        handler.stream.write = written_by

        async def serving() -> None:
            handler.write_from(asyncio.get_running_loop())
            handler.handle(record(logging.INFO, "from a request"))
            while not path.read_text():
                await asyncio.sleep(0.01)

        asyncio.run(asyncio.wait_for(serving(), 30))
        handler.write_from(None)
        assert messages(path) == ["from a request"]
        assert set(writers) == {threading.main_thread().name}


def test_a_stuck_loop_leaves_the_writing_to_the_logs_own_thread(tmp_path, monkeypatch):
    path = tmp_path / "log"
    monkeypatch.setattr(BatchedStreamHandler, "FLUSH_SECONDS", 0.01)
    monkeypatch.setattr(BatchedStreamHandler, "STUCK_SECONDS", 0.05)
    with batched(path, background=True) as handler:

        async def stuck() -> None:
            handler.write_from(asyncio.get_running_loop())
            handler.handle(record(logging.INFO, "while stuck"))
            until_written(path)  # blocks the loop: only the thread can write

        asyncio.run(stuck())
        handler.write_from(None)
        assert messages(path) == ["while stuck"]


class _Unwritable:
    """A stream whose reader has gone."""

    def write(self, text: str) -> int:
        raise BrokenPipeError("the reader is gone")

    def flush(self) -> None:
        raise BrokenPipeError("the reader is gone")


def test_a_stream_that_cannot_be_written_never_raises_into_the_caller(tmp_path, monkeypatch):
    monkeypatch.setattr(logging, "raiseExceptions", False)  # handleError stays quiet
    with batched(tmp_path / "log") as handler:
        gone = handler.stream
        handler.stream = _Unwritable()  # type: ignore[assignment]
        try:
            handler.handle(record(logging.INFO, "queued"))
            handler.handle(record(logging.ERROR, "failed"))  # writes at once: fails
            handler._flush_asked()  # as the event loop runs it
            handler._flush_quietly()
        finally:
            handler.stream = gone

