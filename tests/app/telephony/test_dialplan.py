"""The dialplan of docs/telephony.md, run against the service: its fenced block is
read, the answer question is expanded the way Asterisk expands it (``${EXTEN}``,
``${CALLERID(num)}``, ``${URIENCODE()}``, the ``[globals]``), and asked. So the guide
cannot drift from what the service admits.

Trunks hand Asterisk the dialled number in whatever form they like; with
``telephony.default_region`` they all reach the same line.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

from app.tables import TelephonyCall
from tests.app.telephony.deployment import SHARED_SECRET, deployment

pytestmark = pytest.mark.anyio

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "telephony.md"
#: The innermost ${NAME} or ${FUNCTION(argument)}: no ${ inside.
_INNERMOST = re.compile(r"\$\{([A-Z_]+)(?:\(([^${}]*)\))?\}")


def dialplan() -> str:
    blocks = [block for block in re.findall(r"```[a-z]*\n(.*?)```", GUIDE.read_text(), re.S)
              if "exten =>" in block]
    assert len(blocks) == 1, "docs/telephony.md must hold exactly one dialplan block"
    return blocks[0]


def globals_of(plan: str) -> dict[str, str]:
    section = plan.split("[globals]", 1)[1].split("\n[", 1)[0]
    pairs = (line.split(";", 1)[0].split("=", 1) for line in section.splitlines())
    return {pair[0].strip(): pair[1].strip() for pair in pairs if len(pair) == 2}


class Channel:
    """Just enough of Asterisk's expression expansion for the guide's dialplan."""

    def __init__(self, variables: dict[str, str], caller: str) -> None:
        self.variables = variables
        self.caller = caller
        self.fetched: list[str] = []

    def _call(self, match: re.Match) -> str:
        name, argument = match.group(1), match.group(2)
        if argument is None:
            return self.variables[name]
        if name == "URIENCODE":
            return quote(argument, safe="")
        if name == "CALLERID" and argument == "num":
            return self.caller
        if name == "CURL":
            self.fetched.append(argument)
            return ""
        raise AssertionError(f"the guide's dialplan uses ${{{name}()}}, unknown here")

    def expand(self, text: str) -> str:
        while (found := _INNERMOST.search(text)) is not None:
            text = text[:found.start()] + self._call(found) + text[found.end():]
        return text


def answer_question(plan: str, exten: str, caller: str, svc: str) -> tuple[str, dict]:
    """The URL and header the guide's dialplan asks with for ``exten``."""
    variables = globals_of(plan) | {"EXTEN": exten, "SVC": svc, "SVC_KEY": SHARED_SECRET}
    channel = Channel(variables, caller)
    asked = [line for line in plan.splitlines() if "/api/telephony/pbx/answer" in line]
    assert len(asked) == 1, asked
    channel.expand(asked[0])
    header_line = next(line for line in plan.splitlines() if "CURLOPT(httpheader)" in line)
    name, _, value = channel.expand(header_line.split("(httpheader)=", 1)[1].rstrip(")")).partition(":")
    return channel.fetched[0], {name.strip(): value.strip()}


@pytest.mark.parametrize("exten", ["441632960002", "01632960002", "+441632960002",
                                   "00441632960002"])
async def test_every_form_of_the_dialled_number_reaches_the_line(api, services, exten):
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")
    await setup.setting("telephony.default_region", "GB")
    # binding another account's agent is an administrator's act
    line = await api.post("/api/admin/telephony/numbers", headers=setup.admin, json={
        "e164": "01632 960002", "agent_id": setup.agent_id, "owner_user_id": setup.owner_id,
        "provider": "pbx", "transfer_e164": "01632 960999"})
    assert line.status_code == 201, line.text
    assert (line.json()["e164"], line.json()["transfer_e164"]) == ("+441632960002",
                                                                   "+441632960999")
    enabled = await api.patch(f"/api/admin/telephony/numbers/{line.json()['id']}",
                              headers=setup.manager, json={"enabled": True})
    assert enabled.status_code == 200, enabled.text

    url, headers = answer_question(dialplan(), exten, "07946 000123",
                                   str(api.base_url).rstrip("/"))
    answered = await api.get(url, headers=headers)
    assert answered.status_code == 200 and str(uuid.UUID(answered.text)) == answered.text
    call = await TelephonyCall.select().where(TelephonyCall.number_id == line.json()["id"])
    assert len(call) == 1 and call[0]["from_number"] == "+447946000123"


async def test_without_a_region_a_national_number_is_refused_and_says_why(api, services):
    setup = await deployment(api, services, provider="pbx", line_provider="pbx")
    # binding another account's agent is an administrator's act
    line = await api.post("/api/admin/telephony/numbers", headers=setup.admin, json={
        "e164": "01632 960002", "agent_id": setup.agent_id, "owner_user_id": setup.owner_id,
        "provider": "pbx"})
    assert line.status_code == 422
    assert "telephony.default_region" in line.json()["error"]["message"]
    wrong = await api.put("/api/admin/settings/telephony.default_region", headers=setup.admin,
                          json={"value": "Britain"})
    assert wrong.status_code == 422 and "region code" in wrong.json()["error"]["message"]
