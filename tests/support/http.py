"""Serving the application on a loopback port inside a test, and a client for it."""

from __future__ import annotations

import contextlib
import functools
import socket
from typing import AsyncIterator, Mapping

import anyio
import httpx
import uvicorn

from app.bundle import Services
from app.main import create_app
from app.serving import server_config


def session_header(cookies: Mapping[str, str]) -> dict[str, str]:
    """The ``Cookie`` header a browser sends with ``cookies`` (a console session).

    A header, as a browser sends it, rather than httpx's per-request ``cookies=``,
    which httpx is withdrawing; it also leaves out whatever the client's own jar holds.
    """
    return {"Cookie": "; ".join(f"{name}={value}" for name, value in cookies.items())}


class ApiClient(httpx.AsyncClient):
    """httpx client with helpers to sign in."""

    async def login(self, email: str, password: str) -> str:
        response = await self.post("/api/auth/login", json={"email": email, "password": password})
        assert response.status_code == 200, response.text
        return response.json()["token"]

    async def console_session(self, email: str, password: str) -> dict[str, str]:
        """Sign in through the console's form; the ``Cookie`` header of that session."""
        response = await self.post("/login", data={"email": email, "password": password})
        assert "svc_session" in response.cookies, response.text
        return session_header(response.cookies)

    async def as_new_user(self, services: Services, email: str, role: str = "user",
                          permissions: tuple[str, ...] = ()) -> dict[str, str]:
        """Create an account and return the Authorization header of its session."""
        password = "correct horse battery staple"
        await services.accounts.create(email, password, role, permissions)
        return {"Authorization": f"Bearer {await self.login(email, password)}"}

    async def join_project(self, owner: dict[str, str], member: dict[str, str],
                           project_id: str) -> None:
        """``owner`` invites the account signed in with ``member``, which accepts."""
        email = (await self.get("/api/me", headers=member)).json()["email"]
        invited = await self.post(f"/api/projects/{project_id}/members", headers=owner,
                                  json={"email": email})
        assert invited.status_code == 202, invited.text
        waiting = (await self.get("/api/me/invitations", headers=member)).json()["data"]
        [invitation] = [i for i in waiting if i["project_id"] == project_id]
        accepted = await self.post(f"/api/me/invitations/{invitation['id']}/accept",
                                   headers=member)
        assert accepted.status_code == 200, accepted.text

    async def account_id(self, headers: dict[str, str]) -> str:
        """The id of the account signed in with ``headers``."""
        return (await self.get("/api/me", headers=headers)).json()["id"]

    async def deactivate(self, admin: dict[str, str], account_id: str) -> httpx.Response:
        """``admin`` deactivates the account ``account_id``."""
        return await self.patch(f"/api/admin/users/{account_id}", headers=admin,
                                json={"deactivated": True})

    async def created_twice(self, path: str, headers: dict[str, str], body: dict,
                            **second: object) -> httpx.Response:
        """Create ``body`` at ``path`` (which must succeed), then the same body changed
        by ``second``: the answer to the second, for a test of what may not repeat."""
        first = await self.post(path, headers=headers, json=body)
        assert first.status_code == 201, first.text
        return await self.post(path, headers=headers, json={**body, **second})


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: inside a test the runner owns signals."""

    def capture_signals(self):
        return contextlib.nullcontext()


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextlib.asynccontextmanager
async def running_app(services: Services, *,
                      scheduled_jobs: bool = False) -> AsyncIterator[ApiClient]:
    # Built in a worker thread, whose stack is a few frames deep: BlackSheep's
    # Application reads the stack of its caller (inspect.stack, twice), and under a
    # test runner's deep stack, whose frames from exec'd strings make inspect scan every
    # loaded module, that cost most of a tenth of a second for each test served.
    app = await anyio.to_thread.run_sync(functools.partial(
        create_app, services, own_pool=False, scheduled_jobs=scheduled_jobs))
    sock = free_socket()
    port = sock.getsockname()[1]
    server = _EmbeddedServer(server_config(app, services.boot))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve, [sock])
        while not server.started:
            await anyio.sleep(0.005)
        try:
            async with ApiClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                yield client
        finally:
            server.should_exit = True
    sock.close()
