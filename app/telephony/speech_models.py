"""Each line's language model for local recognition, kept under the data directory.

A caller on a line talks about what its agent knows: with the built-in recogniser
(``voice_live.stt_url`` = ``local``), each call listens with a language model built
from the agent's instructions, its Libraries' documents and its tools
(``core.speech_model``, ``adapters.speech.line_model``).

When a model is built: a model is named by a fingerprint of what it was made from
(the agent's instructions and tools, the ids and times of its Libraries' documents,
the corpus version), so a change to any of them names a model that does not exist
yet. While recognition is local, every ``REFRESH_SECONDS`` the agents bound to a line are checked and a missing
model is built, in a worker process, one at a time; a call that starts meanwhile
listens with the agent's previous model, or the general one. Models of other
fingerprints are removed once the new one is in place.
"""

from __future__ import annotations

__all__ = ["LineSpeechModels", "REFRESH_SECONDS"]

import asyncio
import hashlib
import logging
import shutil
from pathlib import Path
from uuid import UUID

import anyio

from adapters.speech.line_model import LineModel, build_in_worker
from app import db
from app.services.settings import Settings
from app.services.tools import ToolRegistry
from app.telephony.speech_engines import LOCAL
from core.speech_model import CORPUS_VERSION, LineText, line_sentences

log = logging.getLogger("svc.telephony.speech_models")

REFRESH_SECONDS = 30.0
#: At most this much of an agent's documents goes into its model (characters): a
#: larger Library adds words a caller rarely says and slows every build.
MAX_LIBRARY_CHARACTERS = 2_000_000

_FINGERPRINT = """
SELECT a.instructions, a.tools,
       coalesce(array_agg(d.id::text || '@' || d.created_at::text ORDER BY d.id)
                FILTER (WHERE d.id IS NOT NULL), '{}') AS documents
FROM agent a
LEFT JOIN agent_library l ON l.agent_id = a.id
LEFT JOIN document d ON d.library_id = l.library_id
WHERE a.id = $1
GROUP BY a.id
"""
_DOCUMENTS = """
SELECT d.title, d.content FROM document d
JOIN agent_library l ON l.library_id = d.library_id
WHERE l.agent_id = $1 ORDER BY d.created_at, d.id
"""
_BOUND_AGENTS = "SELECT DISTINCT agent_id FROM telephony_line WHERE agent_id IS NOT NULL"


class LineSpeechModels:
    """The models of the agents that answer lines, under ``root``."""

    def __init__(self, root: Path, tools: ToolRegistry, settings: Settings) -> None:
        self.root = Path(root)
        self.tools = tools
        self.settings = settings
        self._build_lock = anyio.Lock()
        self._task: asyncio.Task | None = None

    async def fingerprint(self, agent_id: UUID) -> str | None:
        """What the agent's model is made from, as a name; None for no such agent."""
        async with db.connection() as connection:
            row = await connection.fetchrow(_FINGERPRINT, agent_id)
        if row is None:
            return None
        made_of = repr((CORPUS_VERSION, row["instructions"], sorted(row["tools"] or ()),
                        list(row["documents"])))
        return hashlib.sha256(made_of.encode()).hexdigest()[:20]

    def _model(self, agent_id: UUID, fingerprint: str) -> LineModel:
        return LineModel(self.root / str(agent_id) / fingerprint)

    def _latest(self, agent_id: UUID) -> LineModel | None:
        built = [LineModel(d) for d in (self.root / str(agent_id)).glob("[!.]*") if d.is_dir()]
        built = [model for model in built if model.exists()]
        return max(built, key=lambda m: m.language_model.stat().st_mtime, default=None)

    async def for_call(self, agent_id: UUID) -> LineModel | None:
        """The model a call answered by ``agent_id`` listens with now: its current one,
        else the one it had before (the current one is being built), else None."""
        fingerprint = await self.fingerprint(agent_id)
        if fingerprint is not None and (model := self._model(agent_id, fingerprint)).exists():
            return model
        return self._latest(agent_id)

    async def text(self, agent_id: UUID) -> LineText:
        async with db.connection() as connection:
            agent = await connection.fetchrow(
                "SELECT instructions, tools FROM agent WHERE id = $1", agent_id)
            documents = await connection.fetch(_DOCUMENTS, agent_id)
        library, size = [], 0
        for document in documents:
            for text in (document["title"], document["content"]):
                if size + len(text) > MAX_LIBRARY_CHARACTERS:
                    break
                library.append(text)
                size += len(text)
        tools = await self.tools.for_agent(list(agent["tools"] or ()))
        return LineText(agent["instructions"], library, [t.spec.description for t in tools])

    async def build(self, agent_id: UUID) -> LineModel | None:
        """Build the agent's current model if it is missing; drop the ones before it."""
        async with self._build_lock:
            fingerprint = await self.fingerprint(agent_id)
            if fingerprint is None:
                return None
            model = self._model(agent_id, fingerprint)
            if not model.exists():
                sentences = line_sentences(await self.text(agent_id))
                model = await build_in_worker(sentences, model.directory)
                log.info("speech model built", extra={"agent": str(agent_id)})
            for other in (self.root / str(agent_id)).iterdir():
                if other != model.directory and not other.name.startswith("."):
                    shutil.rmtree(other, ignore_errors=True)
            return model

    async def refresh(self) -> None:
        """Build what is missing for every agent bound to a line."""
        async with db.connection() as connection:
            agents = [row["agent_id"] for row in await connection.fetch(_BOUND_AGENTS)]
        for agent_id in agents:
            await self.build(agent_id)

    async def listening_locally(self) -> bool:
        return (await self.settings.get("voice_live.stt_url") or "").strip() == LOCAL

    async def _run(self) -> None:
        while True:
            try:
                if await self.listening_locally():
                    await self.refresh()
            except Exception:  # a database outage, a worker that died: try next time
                log.exception("speech models could not be refreshed")
            await anyio.sleep(REFRESH_SECONDS)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(),
                                                                name="speech models")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(task, return_exceptions=True)
