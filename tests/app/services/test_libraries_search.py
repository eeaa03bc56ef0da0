"""Ingestion and retrieval: stored passages index the stored text, and search ranks
the passage that answers first, finds misspelt names, and never crosses reach."""

from __future__ import annotations

import uuid

import pytest

from app import db
from app.services.access import reach_of_account
from app.services.accounts import Identity
from app.tables import Chunk, Document

pytestmark = pytest.mark.anyio

FILLER = ("The practice keeps its records carefully and reviews them every quarter with "
          "the practice manager, who signs them off before filing. ")

CLINIC = {
    "Opening hours": "The surgery opens at 8am on weekdays and closes at 6.30pm. "
                     "On Saturdays the surgery opens at 9am and closes at noon. "
                     "We are closed on Sundays and bank holidays.",
    "Parking": "Patients may park in the small car park behind the building. "
               "Two bays near the entrance are kept for disabled drivers.",
    "Vaccinations": "Flu vaccinations are given every Tuesday afternoon in autumn. "
                    "Children receive the nasal spray rather than an injection.",
    "Staff": "Dr Wojciechowski leads the diabetes clinic and sees patients on Thursdays. "
             "Nurse Okafor runs the travel clinic.",
}


async def account(services, email: str) -> tuple[Identity, object]:
    row = await services.accounts.create(email, "correct horse battery", "user", ())
    identity = Identity(row["id"], email, "user", frozenset())
    return identity, await reach_of_account(row["id"], False)


def long_document() -> str:
    """Every topic as its own paragraph between long filler, so each is its own passage."""
    parts = []
    for heading, body in CLINIC.items():
        parts += [FILLER * 4, f"## {heading}", body]
    return "\n\n".join(parts + [FILLER * 4])


@pytest.fixture
async def clinic(services):
    identity, reach = await account(services, "ann@example.org")
    library = await services.libraries.create(identity, name="Clinic")
    await services.libraries.add_document(identity, library["id"], title="Practice leaflet",
                                          media_type="text/markdown", content=long_document())
    return identity, reach, uuid.UUID(library["id"])


# --- ingestion ----------------------------------------------------------------------


@pytest.mark.parametrize("media_type,content", [
    ("text/plain", long_document()),
    ("text/markdown", long_document()),
    ("text/html", "".join(f"<h2>{h}</h2><p>{FILLER * 3}</p><p>{b}</p>" for h, b in CLINIC.items())),
], ids=["plain", "markdown", "html"])
async def test_passages_index_the_stored_text_exactly(services, media_type, content):
    identity, _ = await account(services, "ann@example.org")
    library = await services.libraries.create(identity, name="Clinic")
    created = await services.libraries.add_document(identity, library["id"], title="Leaflet",
                                                    media_type=media_type, content=content)
    stored = await Document.select(Document.content).where(
        Document.id == uuid.UUID(created["id"])).first()
    text = stored["content"]
    chunks = await Chunk.select().where(Chunk.document_id == uuid.UUID(created["id"])).order_by(
        Chunk.ordinal)
    assert len(chunks) > 1
    assert [c["ordinal"] for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert text[chunk["start_offset"]:chunk["end_offset"]] == chunk["text"]
        assert str(chunk["library_id"]) == library["id"]
    assert chunks[0]["start_offset"] == 0 and chunks[-1]["end_offset"] == len(text)
    assert "Opening hours" in text and "<h2>" not in text
    assert ("## Opening hours" in text) == (media_type == "text/plain")


# --- ranking ------------------------------------------------------------------------


@pytest.mark.parametrize("question,answer", [
    ("When is the surgery open on Saturday?", "On Saturdays the surgery opens at 9am"),
    ("where can I park my car", "car park behind the building"),
    ("do children get a flu injection", "nasal spray"),
    ("who runs the travel clinic", "Nurse Okafor"),
])
async def test_the_passage_that_answers_comes_first(services, clinic, question, answer):
    _, reach, library_id = clinic
    passages = await services.libraries.search(reach, [library_id], question)
    assert passages and answer in passages[0].text
    assert passages[0].document_title == "Practice leaflet"
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


async def test_a_misspelt_name_is_found_through_the_library_s_words(services, clinic):
    _, reach, library_id = clinic
    [first, *_] = await services.libraries.search(reach, [library_id], "Is Dr Wojcehowski in?")
    assert "Dr Wojciechowski leads the diabetes clinic" in first.text
    [first, *_] = await services.libraries.search(reach, [library_id], "vacinations tuesday")
    assert "Flu vaccinations are given every Tuesday" in first.text


async def test_passages_carry_offsets_into_their_document(services, clinic):
    _, reach, library_id = clinic
    [first, *_] = await services.libraries.search(reach, [library_id], "diabetes clinic")
    stored = await Document.select(Document.content).where(
        Document.id == first.document_id).first()
    assert stored["content"][first.start:first.end] == first.text
    assert first.library_id == library_id


async def test_a_matching_title_lifts_its_document(services):
    identity, reach = await account(services, "ann@example.org")
    library = await services.libraries.create(identity, name="Policies")
    for title in ("Refunds", "Deliveries"):
        await services.libraries.add_document(
            identity, library["id"], title=title, media_type="text/plain",
            content="Orders are handled by the shop team within two working days.")
    [first, second] = await services.libraries.search(reach, [library["id"]], "refunds orders")
    assert first.document_title == "Refunds" and first.score > second.score


async def test_stop_words_and_empty_queries_find_nothing(services, clinic):
    _, reach, library_id = clinic
    for query in ("", "   ", "the and of", "??", "is it"):
        assert await services.libraries.search(reach, [library_id], query) == []


async def test_search_ranks_across_libraries_and_respects_the_limit(services, clinic):
    identity, reach, library_id = clinic
    second = await services.libraries.create(identity, name="Pharmacy")
    await services.libraries.add_document(identity, second["id"], title="Prescriptions",
                                          media_type="text/plain",
                                          content="Repeat prescriptions are ready on Saturdays.")
    passages = await services.libraries.search(reach, [library_id, uuid.UUID(second["id"])],
                                               "saturdays", limit=2)
    assert len(passages) == 2
    assert {p.library_id for p in passages} == {library_id, uuid.UUID(second["id"])}


async def test_neighbouring_passages_that_share_the_match_come_once(services, clinic):
    _, reach, library_id = clinic
    passages = await services.libraries.search(reach, [library_id], "surgery Saturdays clinic")
    assert sum("On Saturdays the surgery" in p.text for p in passages) == 1
    for index, one in enumerate(passages):
        for other in passages[index + 1:]:
            assert one.end <= other.start or other.end <= one.start


# --- reach --------------------------------------------------------------------------


async def test_passages_of_a_library_out_of_reach_never_appear(services, clinic):
    _, ann_reach, ann_library = clinic
    bob, bob_reach = await account(services, "bob@example.org")
    bobs = await services.libraries.create(bob, name="Bob's")
    await services.libraries.add_document(bob, bobs["id"], title="Saturday",
                                          media_type="text/plain",
                                          content="Saturday Saturday: open on Saturday!")
    both = [ann_library, uuid.UUID(bobs["id"]), uuid.uuid4()]
    passages = await services.libraries.search(ann_reach, both, "open on Saturday")
    assert passages and {p.library_id for p in passages} == {ann_library}
    assert await services.libraries.search(bob_reach, [ann_library], "Saturday") == []


# --- over HTTP ----------------------------------------------------------------------


async def test_the_search_route_returns_passages_with_snippets(api, services):
    headers = await api.as_new_user(services, "ann@example.org")
    library = (await api.post("/api/libraries", headers=headers, json={"name": "Clinic"})).json()
    await api.post(f"/api/libraries/{library['id']}/documents", headers=headers,
                   json={"title": "Leaflet", "media_type": "text/markdown",
                         "content": long_document()})
    response = await api.get(f"/api/libraries/{library['id']}/search", headers=headers,
                             params={"q": "Saturday opening hours", "limit": "3"})
    assert response.status_code == 200
    data = response.json()["data"]
    assert 1 <= len(data) <= 3
    assert "Saturdays" in data[0]["snippet"] and len(data[0]["snippet"]) <= 240
    assert data[0]["title"] == "Leaflet" and data[0]["end"] > data[0]["start"]
    bad = await api.get(f"/api/libraries/{library['id']}/search", headers=headers,
                        params={"q": "x", "limit": "0"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "limit"


async def test_a_library_s_words_follow_its_documents(services):
    identity, reach = await account(services, "ann@example.org")
    library = await services.libraries.create(identity, name="Staff")
    first = await services.libraries.add_document(
        identity, library["id"], title="Doctors", media_type="text/plain",
        content="Dr Wojciechowski sees patients on Thursdays.")
    await services.libraries.add_document(identity, library["id"], title="Nurses",
                                          media_type="text/plain",
                                          content="Nurse Okafor sees patients on Mondays.")
    await services.libraries.delete_document(identity, library["id"], first["id"])
    async with db.connection() as connection:
        words = {row["word"]: row["chunks"] for row in await connection.fetch(
            "SELECT word, chunks FROM library_word WHERE library_id = $1",
            uuid.UUID(library["id"]))}
    assert "wojciechowski" not in words and words["patients"] == 1 and words["okafor"] == 1
    assert await services.libraries.search(reach, [library["id"]], "Wojcehowski") == []
