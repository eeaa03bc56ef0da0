"""Each line's language model: built from what its agent knows, rebuilt when that changes."""

from __future__ import annotations

import uuid

import pytest

from adapters.speech.sphinx import LocalRecogniser
from app.tables import AgentLibrary
from app.telephony.speech_models import LineSpeechModels
from core.records import frozen
from tests.app.services.test_libraries_search import account
from tests.app.services.test_pipeline import add_agent

pytestmark = pytest.mark.anyio


@pytest.fixture
async def desk(services, tmp_path):
    identity, _ = await account(services, "ann@example.org")
    agent_id = await add_agent(identity.account_id, model="local",
                               instructions="You answer for Kerrigan Physiotherapy.")
    library = await services.libraries.create(identity, name="Clinic")
    await AgentLibrary(agent_id=agent_id, library_id=uuid.UUID(library["id"])).save()
    await services.libraries.add_document(identity, library["id"], title="Parking",
                                          media_type="text/plain",
                                          content="The car park gate code is 4521.")
    models = LineSpeechModels(tmp_path / "models", services.tools, services.settings)
    return models, identity, library["id"], agent_id


def words_of(model) -> set[str]:
    return {line.split(" ", 1)[0] for line in model.dictionary.read_text().splitlines()}


async def test_a_model_holds_the_agents_instructions_and_documents(desk):
    models, _, _, agent_id = desk
    assert await models.for_call(agent_id) is None  # nothing built yet: the general model
    model = await models.build(agent_id)
    assert model.exists() and model.directory.is_relative_to(models.root)
    assert {"kerrigan", "physiotherapy", "gate", "code"} <= words_of(model)
    assert await models.for_call(agent_id) == model


async def test_a_new_document_names_a_new_model_and_calls_use_the_old_one_meanwhile(
        services, desk):
    models, identity, library_id, agent_id = desk
    before = await models.build(agent_id)
    await services.libraries.add_document(identity, library_id, title="Staff",
                                          media_type="text/plain",
                                          content="Priya Shah treats sports injuries.")
    assert await models.for_call(agent_id) == before  # still being built
    after = await models.build(agent_id)
    assert after != before and not before.directory.exists()
    assert {"priya", "shah", "sports"} <= words_of(after)
    assert await models.for_call(agent_id) == after


async def test_refresh_builds_for_the_agents_that_answer_lines(services, desk):
    from app.tables import TelephonyLine

    models, _, _, agent_id = desk
    await models.refresh()
    assert await models.for_call(agent_id) is None  # bound to no line: nothing to do
    await TelephonyLine(e164="+441632960001", agent_id=agent_id).save()
    await models.refresh()
    assert (await models.for_call(agent_id)).exists()


@frozen
class Engines:
    recogniser: object


async def test_a_call_listens_with_its_lines_model_when_recognition_is_local(services, desk):
    models, _, _, agent_id = desk
    voice = services.call_voice
    voice.speech_models = models
    model = await models.build(agent_id)
    tuned = await voice.tuned(Engines(LocalRecogniser()), agent_id)
    assert tuned.recogniser.model == model
    remote = object()
    assert (await voice.tuned(Engines(remote), agent_id)).recogniser is remote
