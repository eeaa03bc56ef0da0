"""The Projects screen over plain HTTP: offered to anyone signed in, under Setup, and its
page carrying its labelled forms, the lists it fills and its own script."""

from __future__ import annotations

import pytest

from app.console.pages import STATIC_DIR

PASSWORD = "correct horse battery staple"
pytestmark = pytest.mark.anyio


async def test_the_projects_screen_is_offered_to_anyone_signed_in(api, services):
    assert (await api.get("/projects")).headers["location"] == "/login?next=/projects"
    account = await services.accounts.create("ann@example.org", PASSWORD, "user", ())
    session = await api.console_session("ann@example.org", PASSWORD)
    home = await api.get("/", headers=session)
    setup = home.text.split(">Setup<", 1)[1].split('class="nav-section"', 1)[0]
    assert 'href="/projects"' in setup
    page = await api.get("/projects", headers=session)
    assert page.status_code == 200 and "<h1>Projects</h1>" in page.text
    assert f'data-me="{account["id"]}"' in page.text
    for label in ('for="p-name"', 'for="i-email"'):
        assert label in page.text
    for heading in ("Invitations for you", "Your projects", "Create a project"):
        assert f">{heading}</h2>" in page.text
    for table in ('id="invitations"', 'id="projects"', 'id="members"', 'id="invited"'):
        assert table in page.text
    assert 'src="/static/projects.js"' in page.text
    assert (STATIC_DIR / "projects.js").is_file()
    assert (await api.get("/static/projects.js")).status_code == 200
