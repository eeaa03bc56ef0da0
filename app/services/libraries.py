"""Libraries: collections of documents an agent retrieves passages from.

A Library belongs to its owner and, optionally, to a project whose members then reach
it too (``app.services.access``); anyone else gets 404. Adding a document extracts
its text (``core.documents``), stores that text and its passages in one transaction,
so a document is either searchable whole or absent. ``search`` is what the agent
pipeline retrieves through.

Limits: a document is at most :data:`MAX_DOCUMENT_BYTES` as sent (413 past it); it
must be text in a media type of ``core.documents.MEDIA_TYPES`` (415 otherwise), have
some text once the markup is gone (422), and be read within :data:`READ_SECONDS`
(422 ``document_too_complex``).

Each upload is read in a process of its own (``adapters.document_reader``), one at a
time per server process: parsing is CPU work over text anyone with a Library may write,
and in the serving process it would hold the interpreter lock against the event loop,
and so against the audio of the calls that loop paces. An upload that waits more than
:data:`QUEUE_SECONDS` for its turn is answered 503 ``busy_reading``, so a run of slow
uploads delays others by a bounded time and never holds their requests open for long.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import anyio
from piccolo.query.functions.aggregate import Count

from adapters.document_reader import ReaderFailed, read_in_process
from app import db
from app.errors import (NotFound, PayloadTooLarge, ServiceUnavailable, Unprocessable,
                        UnsupportedMediaType)
from app.services.access import owner_moves, parse_id, reach_of, require, visible
from app.services.accounts import Identity
from app.services.audit import AuditLog
from app.services.projects import placement, project_names
from app.tables import Document, Library, Project
from core import documents
from core.access import Reach
from core.passages import Passage

#: Largest document accepted, in bytes as sent (UTF-8 for JSON content).
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
#: How long reading one upload may take. Five megabytes of prose take a second or
#: two; only markup built to be slow comes near this.
READ_SECONDS = 60.0
#: How long an upload waits for the one reading at a time before it is turned away.
QUEUE_SECONDS = 30
NAME_MAX = 200
TITLE_MAX = 300
DESCRIPTION_MAX = 4000
#: Most passages one search returns.
SEARCH_LIMIT_MAX = 50
#: A document's preview in a list: about two lines of its text.
PREVIEW_CHARS = 160
# Characters read for it: enough for the preview once runs of whitespace collapse.
_PREVIEW_READ = 4 * PREVIEW_CHARS
_DOCUMENTS_SQL = """
SELECT d.id, d.library_id, d.title, d.media_type, d.size_bytes, d.created_by, d.created_at,
       left(d.content, $2) AS head, coalesce(c.passages, 0) AS passages
FROM document d
LEFT JOIN (SELECT document_id, count(*) AS passages FROM chunk WHERE library_id = $1
           GROUP BY document_id) c ON c.document_id = d.id
WHERE d.library_id = $1 ORDER BY d.created_at DESC
"""

# Ranking weight of a document title against its passages (see _RANK_SQL).
_TITLE_WEIGHT = 0.5
# Corrections of a misspelt word: at most this many of the Library's words, each at
# least this alike (pg_trgm similarity; Wojcehowski/Wojciechowski is 0.65).
_CORRECTIONS_PER_TERM = 3
_CORRECTION_SIMILARITY = 0.4
# Passages ranked per passage returned, so those overlapping a better one can be
# dropped (see _apart) and the limit still filled.
_OVERFETCH = 3


def library_view(row: dict[str, Any], document_count: int = 0,
                 project_name: str | None = None) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "name": row["name"],
        "description": row["description"],
        **placement(row, project_name),
        "document_count": document_count,
        "created_at": row["created_at"].isoformat(),
    }


def document_view(row: dict[str, Any], *, with_content: bool = False) -> dict[str, Any]:
    view = {
        "id": str(row["id"]),
        "library_id": str(row["library_id"]),
        "title": row["title"],
        "media_type": row["media_type"],
        "size_bytes": row["size_bytes"],
        "created_by": str(row["created_by"]) if row["created_by"] else None,
        "created_at": row["created_at"].isoformat(),
    }
    if with_content:
        view["content"] = row["content"]
    return view


def indexing_view(head: str, passages: int) -> dict[str, Any]:
    """What a list shows of a document beyond its fields: the start of its text, and
    whether searches can find it (its passages are written with it, in one
    transaction, so a stored document with none has no text to search)."""
    return {"preview": documents.snippet(head, "", max_chars=PREVIEW_CHARS),
            "passages": passages, "indexed": passages > 0}


def passage_view(passage: Passage, query: str) -> dict[str, Any]:
    """A passage as the API shows it, with a snippet for citing it."""
    return {
        "library_id": str(passage.library_id),
        "document_id": str(passage.document_id),
        "title": passage.document_title,
        "chunk_id": passage.chunk_id,
        "start": passage.start,
        "end": passage.end,
        "text": passage.text,
        "snippet": documents.snippet(passage.text, query),
        "score": round(passage.score, 6),
    }


def _checked_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= NAME_MAX:
        raise Unprocessable(f"A Library name has 1 to {NAME_MAX} characters.", field="name")
    return name


def _checked_description(description: str) -> str:
    if len(description) > DESCRIPTION_MAX:
        raise Unprocessable(f"A description has at most {DESCRIPTION_MAX} characters.",
                            field="description")
    return description.strip()


def _checked_title(title: str) -> str:
    title = " ".join(title.split())
    if not 1 <= len(title) <= TITLE_MAX:
        raise Unprocessable(f"A document title has 1 to {TITLE_MAX} characters.", field="title")
    return title


def _checked_media_type(media_type: str) -> str:
    media_type = media_type.split(";", 1)[0].strip().lower()
    if media_type not in documents.MEDIA_TYPES:
        raise UnsupportedMediaType(
            f"Documents may be {', '.join(documents.MEDIA_TYPES)}; not {media_type!r}.",
            code="unsupported_document_type", field="media_type")
    return media_type


class Libraries:
    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit
        # Uploads are read one at a time, each under its own deadline once its turn comes.
        self._one_reading = anyio.Lock()

    # --- Libraries --------------------------------------------------------------

    async def _library(self, reach: Reach, library_id: str | UUID) -> dict[str, Any]:
        lid = parse_id(library_id, "Library")
        row = await Library.select().where(Library.id == lid).first()
        return require(reach, row, "Library")

    async def _project(self, reach: Reach, project_id: str | UUID | None) -> UUID | None:
        """A project the caller reaches, for a Library to belong to; None detaches.

        422 naming the field rather than 404: the path exists, the reference in the
        body does not (and the message is the same whether it exists at all)."""
        if project_id is None:
            return None
        refused = Unprocessable("No such project.", code="unknown_project", field="project_id")
        try:
            pid = UUID(str(project_id))
        except ValueError:
            raise refused from None
        if not (reach.is_admin or pid in reach.project_ids):
            raise refused
        if not await Project.exists().where(Project.id == pid):
            raise refused
        return pid

    async def _document_counts(self, library_ids: list[UUID]) -> dict[UUID, int]:
        if not library_ids:
            return {}
        rows = await Document.select(Document.library_id, Count()).where(
            Document.library_id.is_in(library_ids)).group_by(Document.library_id)
        return {row["library_id"]: row["count"] for row in rows}

    async def _views(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows' views, their document counts and project names read once for all."""
        counts = await self._document_counts([row["id"] for row in rows])
        names = await project_names(row["project_id"] for row in rows)
        return [library_view(row, counts.get(row["id"], 0), names.get(row["project_id"]))
                for row in rows]

    async def list(self, identity: Identity) -> list[dict[str, Any]]:
        """The Libraries the caller reaches, by name."""
        query = Library.select().order_by(Library.name).order_by(Library.created_at)
        clause = visible(Library, await reach_of(identity))
        if clause is not None:
            query = query.where(clause)
        return await self._views(await query)

    async def get(self, identity: Identity, library_id: str | UUID) -> dict[str, Any]:
        [view] = await self._views([await self._library(await reach_of(identity), library_id)])
        return view

    async def create(self, identity: Identity, *, name: str, description: str = "",
                     project_id: str | UUID | None = None) -> dict[str, Any]:
        reach = await reach_of(identity)
        row = Library(name=_checked_name(name), description=_checked_description(description),
                      owner_id=identity.account_id,
                      project_id=await self._project(reach, project_id))
        await row.save()
        await self.audit.record("library.created", actor=identity.account_id,
                                subject=str(row.id), data={"name": row.name})
        return await self.get(identity, row.id)

    async def update(self, identity: Identity, library_id: str | UUID,
                     changes: dict[str, Any]) -> dict[str, Any]:
        """Change any of ``name``, ``description``, ``project_id`` (None detaches)."""
        reach = await reach_of(identity)
        row = await self._library(reach, library_id)
        values: dict[Any, Any] = {}
        if "name" in changes:
            values[Library.name] = _checked_name(changes["name"])
        if "description" in changes:
            values[Library.description] = _checked_description(changes["description"])
        if "project_id" in changes:
            project_id = await self._project(reach, changes["project_id"])
            if project_id != row["project_id"]:
                owner_moves(identity, row["owner_id"], "Library")
            values[Library.project_id] = project_id
        if values:
            await Library.update(values).where(Library.id == row["id"])
            await self.audit.record("library.changed", actor=identity.account_id,
                                    subject=str(row["id"]), data={"fields": sorted(changes)})
        return await self.get(identity, row["id"])

    async def delete(self, identity: Identity, library_id: str | UUID) -> None:
        """Delete the Library; its documents and passages go with it (cascade)."""
        row = await self._library(await reach_of(identity), library_id)
        await Library.delete().where(Library.id == row["id"])
        await self.audit.record("library.deleted", actor=identity.account_id,
                                subject=str(row["id"]), data={"name": row["name"]})

    # --- documents --------------------------------------------------------------

    async def _document(self, identity: Identity, library_id: str | UUID,
                        document_id: str | UUID) -> dict[str, Any]:
        library = await self._library(await reach_of(identity), library_id)
        did = parse_id(document_id, "document")
        row = await Document.select().where(
            (Document.id == did) & (Document.library_id == library["id"])).first()
        if row is None:
            raise NotFound("No such document.")
        return row

    async def list_documents(self, identity: Identity,
                             library_id: str | UUID) -> list[dict[str, Any]]:
        """The Library's documents, newest first: without their content, but with the
        start of it as a preview and how many searchable passages each has."""
        library = await self._library(await reach_of(identity), library_id)
        async with db.connection() as connection:
            rows = await connection.fetch(_DOCUMENTS_SQL, library["id"], _PREVIEW_READ)
        return [{**document_view(dict(row)), **indexing_view(row["head"], row["passages"])}
                for row in rows]

    async def get_document(self, identity: Identity, library_id: str | UUID,
                           document_id: str | UUID) -> dict[str, Any]:
        """One document with its extracted text (what passage offsets index)."""
        return document_view(await self._document(identity, library_id, document_id),
                             with_content=True)

    async def delete_document(self, identity: Identity, library_id: str | UUID,
                              document_id: str | UUID) -> None:
        row = await self._document(identity, library_id, document_id)
        await Document.delete().where(Document.id == row["id"])
        await self.audit.record("document.deleted", actor=identity.account_id,
                                subject=str(row["id"]),
                                data={"library_id": str(row["library_id"]), "title": row["title"]})

    async def add_document(self, identity: Identity, library_id: str | UUID, *, title: str,
                           media_type: str, content: bytes | str,
                           charset: str | None = None) -> dict[str, Any]:
        """Extract, chunk and store a document; 413/415/422 before anything is written.

        ``content`` is the upload as sent (bytes, decoded as ``charset`` or UTF-8) or
        text from a JSON body. The stored content is the extracted text."""
        library = await self._library(await reach_of(identity), library_id)
        title = _checked_title(title)
        media_type = _checked_media_type(media_type)
        size = len(content) if isinstance(content, bytes) else len(
            content.encode("utf-8", "surrogatepass"))
        if size > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(f"A document is at most {MAX_DOCUMENT_BYTES} bytes.",
                                  field="content")
        text, chunks = await self._read(content, media_type, charset)
        async with Document._meta.db.transaction():
            row = await self._insert_document(library["id"], title, media_type, size, text,
                                              identity.account_id)
            await self._insert_chunks(row["id"], library["id"], chunks)
            await self.audit.record("document.added", actor=identity.account_id,
                                    subject=str(row["id"]),
                                    data={"library_id": str(library["id"]), "title": title,
                                          "media_type": media_type, "chunks": len(chunks)})
        return document_view(row)

    async def _read(self, content: bytes | str, media_type: str,
                    charset: str | None) -> tuple[str, list[documents.TextChunk]]:
        """The upload's text and passages, or the API error saying why there are none."""
        try:
            with anyio.fail_after(QUEUE_SECONDS):
                await self._one_reading.acquire()
        except TimeoutError:
            raise ServiceUnavailable("Other documents are being read. Send this one again "
                                     "in a minute.", code="busy_reading",
                                     retry_after=math.ceil(QUEUE_SECONDS)) from None
        try:
            with anyio.fail_after(READ_SECONDS):
                return await read_in_process(content, media_type, charset)
        except TimeoutError:
            raise Unprocessable(
                f"The document could not be read within {READ_SECONDS:g} seconds. Split it, "
                "or send it as plain text.", code="document_too_complex", field="content",
            ) from None
        except ReaderFailed:
            raise ServiceUnavailable("The document could not be read just now. Send it "
                                     "again.", code="reader_failed") from None
        except documents.EmptyDocument as error:
            raise Unprocessable(error.message, code=error.reason, field="content") from None
        except documents.DocumentError as error:
            raise UnsupportedMediaType(error.message, code=error.reason,
                                       field="content") from None
        finally:
            self._one_reading.release()

    async def _insert_document(self, library_id: UUID, title: str, media_type: str, size: int,
                               text: str, created_by: UUID) -> dict[str, Any]:
        [row] = await Document.insert(Document(
            library_id=library_id, title=title, media_type=media_type, size_bytes=size,
            content=text, created_by=created_by)).returning(*Document.all_columns())
        return row

    async def _insert_chunks(self, document_id: UUID, library_id: UUID,
                             chunks: list[documents.TextChunk]) -> None:
        # One statement for all passages: a 5 MB document has thousands of them.
        async with db.connection() as connection:
            await connection.execute(
                "INSERT INTO chunk (document_id, library_id, ordinal, start_offset, end_offset,"
                " text) SELECT $1, $2, u.* FROM unnest($3::int[], $4::int[], $5::int[],"
                " $6::text[]) AS u",
                document_id, library_id, [c.ordinal for c in chunks], [c.start for c in chunks],
                [c.end for c in chunks], [c.text for c in chunks])

    # --- retrieval --------------------------------------------------------------

    async def search(self, reach: Reach, library_ids: Sequence[UUID], query: str, *,
                     limit: int = 6) -> list[Passage]:
        """The passages of the given Libraries that best answer ``query``, best first.

        Libraries the reach does not cover (or that do not exist) are ignored without
        a word; a query of only stop words finds nothing. Two statements: the
        corrections of query words the Libraries do not contain (``_CORRECTIONS_SQL``),
        then the ranking over the words and their corrections (``_RANK_SQL``)."""
        terms = documents.query_terms(query)
        limit = max(0, min(limit, SEARCH_LIMIT_MAX))
        if not terms or not limit:
            return []
        reachable = await self._reachable(reach, library_ids)
        if not reachable:
            return []
        async with db.connection() as connection:
            corrections = await connection.fetch(
                _CORRECTIONS_SQL, reachable, terms, _CORRECTIONS_PER_TERM,
                _CORRECTION_SIMILARITY)
            words = terms + [row["word"] for row in corrections]
            slots = list(range(len(terms))) + [row["slot"] for row in corrections]
            weights = [1.0] * len(terms) + [row["similarity"] for row in corrections]
            rows = await connection.fetch(
                _RANK_SQL, reachable, words, slots, weights,
                documents.search_expression(words), _TITLE_WEIGHT, limit * _OVERFETCH)
        passages = [Passage(library_id=row["library_id"], document_id=row["document_id"],
                            document_title=row["title"], chunk_id=row["id"],
                            start=row["start_offset"], end=row["end_offset"], text=row["text"],
                            score=float(row["score"])) for row in rows]
        return _apart(passages, limit)

    async def _reachable(self, reach: Reach, library_ids: Sequence[UUID | str]) -> list[UUID]:
        wanted = []
        for value in library_ids:
            try:
                wanted.append(value if isinstance(value, UUID) else UUID(str(value)))
            except ValueError:
                continue
        if not wanted:
            return []
        query = Library.select(Library.id).where(Library.id.is_in(wanted))
        clause = visible(Library, reach)
        if clause is not None:
            query = query.where(clause)
        return [row["id"] for row in await query]


def _apart(passages: list[Passage], limit: int) -> list[Passage]:
    """The best ``limit`` passages, skipping any that overlaps a better one.

    Neighbouring passages share their overlap, so a sentence there matches both; the
    reader should get the better of the two and room for something else."""
    chosen: list[Passage] = []
    for passage in passages:
        if not any(p.document_id == passage.document_id and p.start < passage.end
                   and passage.start < p.end for p in chosen):
            chosen.append(passage)
            if len(chosen) == limit:
                break
    return chosen


# Misspelt and differently spelt words (names above all): for each query word of three
# letters or more that no passage holds as written, the Library's words most like it
# (``library_word``, kept by triggers; see its migration). Comparing short words behind
# a trigram index is cheap, unlike comparing whole passages.
# $1 Library ids, $2 query terms, $3 corrections per term, $4 least similarity.
_CORRECTIONS_SQL = """
SELECT t.slot - 1 AS slot, alike.word, alike.similarity
FROM unnest($2::text[]) WITH ORDINALITY AS t(term, slot)
CROSS JOIN LATERAL (
    SELECT lw.word, similarity(lw.word, t.term)::float8 AS similarity
    FROM library_word lw
    WHERE lw.library_id = ANY($1::uuid[]) AND lw.word % t.term
      AND similarity(lw.word, t.term) >= $4
    GROUP BY lw.word
    ORDER BY similarity DESC, lw.word
    LIMIT $3
) AS alike
WHERE char_length(t.term) >= 3
  AND NOT EXISTS (SELECT 1 FROM library_word held
                  WHERE held.library_id = ANY($1::uuid[]) AND held.word = t.term)
ORDER BY slot, alike.similarity DESC
"""

# Ranking, in units of "query words matched", so the parts add up meaningfully.
# Each query word is a slot; a slot's alternatives are the word itself (weight 1) and
# its corrections (weight = similarity). A passage scores, per slot, the best weight
# it matches (full-text, stemmed), summed and divided by the number of slots; plus up
# to half a word for how densely the words occur (ts_rank_cd, normalised to 0..1).
# The document title scores the same way, weighted by $6; a document whose title
# matches though no passage does offers its opening passage.
# The full-text condition is a constant tsquery, so the planner uses the GIN index.
# $1 Library ids, $2 words, $3 their slots, $4 their weights, $5 the words or-ed for
# websearch_to_tsquery, $6 title weight, $7 how many passages.
_RANK_SQL = """
WITH words AS (
    SELECT w.slot, w.weight, websearch_to_tsquery('english', w.word) AS tsq
    FROM unnest($2::text[], $3::int[], $4::float8[]) AS w(word, slot, weight)
    WHERE numnode(websearch_to_tsquery('english', w.word)) > 0
),
total AS (
    SELECT greatest(count(DISTINCT slot), 1)::float8 AS n FROM words
),
passages AS (
    SELECT c.id,
           (SELECT coalesce(sum(best), 0) FROM (
                SELECT max(w.weight) AS best FROM words w
                WHERE c.tsv @@ w.tsq GROUP BY w.slot) AS slots) / total.n
           + 0.5 * ts_rank_cd(c.tsv, websearch_to_tsquery('english', $5), 32) AS score
    FROM chunk c, total
    WHERE c.library_id = ANY($1::uuid[])
      AND c.tsv @@ websearch_to_tsquery('english', $5)
),
titles AS (
    SELECT d.id,
           (SELECT coalesce(sum(best), 0) FROM (
                SELECT max(w.weight) AS best FROM words w
                WHERE x.tv @@ w.tsq GROUP BY w.slot) AS slots) / total.n AS score
    FROM document d
    CROSS JOIN LATERAL (SELECT to_tsvector('english', d.title) AS tv) AS x, total
    WHERE d.library_id = ANY($1::uuid[])
      AND x.tv @@ websearch_to_tsquery('english', $5)
),
candidates AS (
    SELECT id FROM passages
    UNION
    SELECT c.id FROM chunk c JOIN titles t ON t.id = c.document_id WHERE c.ordinal = 0
)
SELECT c.id, c.library_id, c.document_id, d.title, c.start_offset, c.end_offset, c.text,
       coalesce(p.score, 0) + $6 * coalesce(t.score, 0) AS score
FROM candidates k
JOIN chunk c ON c.id = k.id
JOIN document d ON d.id = c.document_id
LEFT JOIN passages p ON p.id = k.id
LEFT JOIN titles t ON t.id = c.document_id
ORDER BY score DESC, c.document_id, c.ordinal
LIMIT $7
"""
