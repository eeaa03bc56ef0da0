"""The Telephone screen's connection details: the dialplan is the operator's guide's,
filled in with this deployment's addresses, and a telephony manager (who may not read
the break-glass settings resource) gets it with the carrier's webhook addresses."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from app.console.telephone_setup import dialplan
from tests.support.settings import set_runtime

pytestmark = pytest.mark.anyio

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "telephony.md"


def test_the_dialplan_is_the_guides_with_its_addresses_filled_in():
    text = GUIDE.read_text()
    start = text.index("[globals]\nSVC=http://10.0.0.5:8080")
    documented = text[start:text.index("```", start)]
    assert dialplan("http://10.0.0.5:8080", "10.0.0.5:9092") == documented


async def test_a_telephony_manager_is_given_the_addresses_and_dialplan(api, services):
    await set_runtime(services, "telephony.public_base_url", "https://calls.example.org")
    await set_runtime(services, "telephony.pbx_listen", "10.0.0.5:9092")
    manager = await api.as_new_user(services, "desk@example.org",
                                    permissions=("telephony.manage",))
    assert (await api.get("/api/admin/telephony", headers=manager)).status_code == 403
    page = await api.get("/admin/telephone", headers={**manager, "accept": "text/html"})
    assert page.status_code == 200
    shown = html.unescape(page.text)
    assert "https://calls.example.org/api/telephony/carrier/voice" in shown
    assert "https://calls.example.org/api/telephony/carrier/status" in shown
    assert "SVC_AUDIO=10.0.0.5:9092" in shown and "SVC_KEY=the-shared-secret" in shown


async def test_without_a_public_url_the_addresses_carry_the_port_served_on(database, boot):
    from app.bundle import Services
    from app.config import BootConfig
    from tests.support.http import running_app

    unset = {k: v for k, v in boot.values.items() if k != "server.public_url"}
    services = Services.build(BootConfig({**unset, "server.port": 18201}))
    async with running_app(services) as api:
        manager = await api.as_new_user(services, "desk@example.org",
                                        permissions=("telephony.manage",))
        page = await api.get("/admin/telephone", headers={**manager, "accept": "text/html"})
    shown = html.unescape(page.text)
    assert "http://127.0.0.1:18201/api/telephony/carrier/voice" in shown
    assert "SVC=http://127.0.0.1:18201" in shown and ":8080" not in shown


async def test_a_listen_address_saved_by_another_process_is_in_the_guide_at_once(api, services):
    from app.tables import RuntimeSetting

    await set_runtime(services, "telephony.pbx_listen", "10.0.0.5:9092")
    manager = await api.as_new_user(services, "desk@example.org",
                                    permissions=("telephony.manage",))
    services.settings.cache_seconds = 60  # as served: values kept a while, per process
    await services.settings.snapshot()  # this process now holds the values in its cache
    # Another worker saves a new address: the row changes, this cache does not.
    await RuntimeSetting.update({RuntimeSetting.value: '"10.0.0.6:9093"'}).where(
        RuntimeSetting.key == "telephony.pbx_listen")
    page = await api.get("/admin/telephone", headers={**manager, "accept": "text/html"})
    assert "SVC_AUDIO=10.0.0.6:9093" in html.unescape(page.text)
