"""The console under a real browser: the application served on a loopback port from a
thread of its own, and headless Chromium from the system's package.

The server runs its own event loop in a background thread, so the browser tests stay
plain synchronous Playwright code; :meth:`ConsoleServer.run` hands a coroutine to the
server's loop (creating accounts, inserting call rows) and waits for its answer.

Chromium is the Debian package ``chromium`` (``apt-get install chromium``), or the
binary named by ``SVC_TEST_CHROMIUM``; Playwright drives it through
``executable_path`` and never downloads a browser of its own.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Coroutine


from app import db
from app.bundle import Services
from app.config import BootConfig
from app.main import create_app
from app.serving import server_config
from tests.support.http import _EmbeddedServer, free_socket

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--autoplay-policy=no-user-gesture-required"]
ENABLE_NOTICE = ("browser tests need Chromium and Playwright: as root, apt-get install "
                 "chromium (./tools/test does this when it can) and pip install playwright; "
                 "or set SVC_TEST_CHROMIUM=/path/to/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def chromium_binary() -> str | None:
    named = os.environ.get("SVC_TEST_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ENABLE_NOTICE
    return None if chromium_binary() else ENABLE_NOTICE


class ConsoleServer:
    """The whole application on ``127.0.0.1`` with a database of its own."""

    def __init__(self, dsn: str, boot: BootConfig) -> None:
        self.dsn = dsn
        self.boot = boot
        self.loop = asyncio.new_event_loop()
        self.services: Services | None = None
        self.base_url = ""
        self._server: _EmbeddedServer | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    async def _serve(self, started: Future) -> None:
        db.use_database(self.dsn)
        await db.open_pool(max_size=10)
        self.services = Services.build(self.boot)
        self.services.settings.cache_seconds = 0
        app = create_app(self.services, own_pool=False, scheduled_jobs=False)
        sock = free_socket()
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = _EmbeddedServer(server_config(app, self.boot))
        serving = asyncio.ensure_future(self._server.serve([sock]))
        while not self._server.started and not serving.done():
            await asyncio.sleep(0.01)
        started.set_result(None)
        try:
            await serving
        finally:
            sock.close()
            await db.close_pool()

    def start(self) -> "ConsoleServer":
        self._thread.start()
        started: Future = Future()
        self._task = asyncio.run_coroutine_threadsafe(self._serve(started), self.loop)
        started.result(timeout=60)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        self._task.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()


def write_recording(console: "ConsoleServer", call_id) -> None:
    """A recording of ``call_id`` as the recorder writes it: one second of a 440 Hz tone
    on both channels, 8 kHz μ-law WAV in the recordings directory."""
    from core.wav import interleave, ulaw_header
    from kernels.ulaw import lin2ulaw

    tone = b"".join(int(8000 * math.sin(2 * math.pi * 440 * i / 8000)).to_bytes(
        2, "little", signed=True) for i in range(8000))
    side = lin2ulaw(tone)
    directory = console.boot.recordings_dir
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{call_id}.wav").write_bytes(ulaw_header(8000) + interleave(side, side))


# axe-core, the accessibility checker: from npm into .cache/axe by tools/_axe.sh, or
# the file named by SVC_TEST_AXE.
AXE_NOTICE = ("accessibility checks need axe-core: ./tools/test installs it with npm into "
              ".cache/axe (npm install --prefix .cache/axe axe-core@4), or set "
              "SVC_TEST_AXE=/path/to/axe.min.js")
_AXE_BUNDLED = (Path(__file__).resolve().parents[2] / ".cache" / "axe" / "node_modules"
                / "axe-core" / "axe.min.js")


def axe_script() -> Path | None:
    named = os.environ.get("SVC_TEST_AXE")
    candidate = Path(named) if named else _AXE_BUNDLED
    return candidate if candidate.is_file() else None


def accessibility_violations(page, impacts=("serious", "critical")) -> list[str]:
    """What axe-core finds on the page as it is now, at the given impacts: one line per
    rule with the first offending elements, so a failure says where to look."""
    script = axe_script()
    if script is None:
        import pytest

        pytest.skip(AXE_NOTICE)
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(script))
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['help']} at "
            + ", ".join(str(node["target"]) for node in v["nodes"][:3])
            for v in results["violations"] if v["impact"] in impacts]


def sideways_scroll(page) -> int:
    """How many pixels the page is wider than the window (0 when nothing scrolls sideways)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
