"""The assistant platform: projects, providers, Libraries, agents, tools, chats, usage.

Reach: an account reaches what it owns and what the projects it belongs to hold; an
administrator reaches everything (``app.services.access``).
"""

from __future__ import annotations

from piccolo.columns import (JSONB, UUID, Array, BigSerial, Boolean, ForeignKey, Integer,
                             OnDelete, Text, Timestamptz)
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table

from app.tables.accounts import Account, AccountOwned
from app.tables.mixins import Created, Stamped


class Project(Created, Table, tablename="project"):
    id = UUID(primary_key=True)
    name = Text()
    owner_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)


class ProjectMember(Table, tablename="project_member"):
    id = UUID(primary_key=True)
    project_id = ForeignKey(references=Project, on_delete=OnDelete.cascade)
    account_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)
    added_at = Timestamptz(default=TimestamptzNow())


class ProjectInvitation(Created, Table, tablename="project_invitation"):
    """An invitation to join a project, kept for an email whether or not an account
    has it; the account with that email becomes a member when it accepts."""

    id = UUID(primary_key=True)
    project_id = ForeignKey(references=Project, on_delete=OnDelete.cascade)
    email = Text()
    invited_by = ForeignKey(references=Account, on_delete=OnDelete.cascade)


class Provider(Stamped, Table, tablename="provider"):
    """An OpenAI-compatible upstream. ``models`` are the names it answers to; a model
    name belongs to one provider only."""

    id = UUID(primary_key=True)
    name = Text(unique=True)
    base_url = Text()
    api_key_enc = Text(null=True, default=None)
    models = Array(base_column=Text())
    enabled = Boolean(default=True)


class ProviderKey(AccountOwned, Created, Table, tablename="provider_key"):
    """A user's own key for a provider; their calls use it instead of the instance's."""

    provider_id = ForeignKey(references=Provider, on_delete=OnDelete.cascade)
    api_key_enc = Text()


class Library(Created, Table, tablename="library"):
    id = UUID(primary_key=True)
    name = Text()
    description = Text(default="")
    owner_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)
    project_id = ForeignKey(references=Project, null=True, on_delete=OnDelete.set_null)


class Document(Created, Table, tablename="document"):
    id = UUID(primary_key=True)
    library_id = ForeignKey(references=Library, on_delete=OnDelete.cascade)
    title = Text()
    media_type = Text()
    size_bytes = Integer()
    content = Text()
    created_by = UUID(null=True, default=None)


class Chunk(Table, tablename="chunk"):
    """A passage of a document; ``start_offset``/``end_offset`` index ``document.content``.
    The database also keeps a generated ``tsv`` column for full-text search."""

    id = BigSerial(primary_key=True)
    document_id = ForeignKey(references=Document, on_delete=OnDelete.cascade)
    library_id = ForeignKey(references=Library, on_delete=OnDelete.cascade)
    ordinal = Integer()
    start_offset = Integer()
    end_offset = Integer()
    text = Text()


class Agent(Stamped, Table, tablename="agent"):
    id = UUID(primary_key=True)
    name = Text()
    instructions = Text(default="")
    model = Text()
    owner_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)
    project_id = ForeignKey(references=Project, null=True, on_delete=OnDelete.set_null)
    tools = Array(base_column=Text())
    archived_at = Timestamptz(null=True, default=None)


class AgentLibrary(Table, tablename="agent_library"):
    id = UUID(primary_key=True)
    agent_id = ForeignKey(references=Agent, on_delete=OnDelete.cascade)
    library_id = ForeignKey(references=Library, on_delete=OnDelete.cascade)


class HttpTool(Stamped, Table, tablename="http_tool"):
    """A tool an administrator connects: the model's arguments are sent to ``url``."""

    id = UUID(primary_key=True)
    name = Text(unique=True)
    description = Text()
    parameters = JSONB()
    url = Text()
    method = Text(default="POST")
    secret_header_name = Text(null=True, default=None)
    secret_header_enc = Text(null=True, default=None)
    side_effecting = Boolean(default=True)
    usable_on_call = Boolean(default=False)


class HttpToolOffer(Table, tablename="http_tool_offer"):
    """An HTTP tool an administrator offers to one account, to a project's members, or
    (both null) to everyone; only an offered tool can be attached to an agent."""

    id = UUID(primary_key=True)
    tool_id = ForeignKey(references=HttpTool, on_delete=OnDelete.cascade)
    account_id = ForeignKey(references=Account, null=True, on_delete=OnDelete.cascade)
    project_id = ForeignKey(references=Project, null=True, on_delete=OnDelete.cascade)
    offered_by = ForeignKey(references=Account, null=True, on_delete=OnDelete.set_null)
    offered_at = Timestamptz(default=TimestamptzNow())


class Chat(Stamped, Table, tablename="chat"):
    """A conversation. ``source`` is app, api or telephone; API chats stay out of the
    owner's list but open by id."""

    id = UUID(primary_key=True)
    owner_id = ForeignKey(references=Account, on_delete=OnDelete.cascade)
    agent_id = ForeignKey(references=Agent, null=True, on_delete=OnDelete.set_null)
    source = Text(default="app")
    title = Text(default="")
    api_key_id = UUID(null=True, default=None)


class ChatMessage(Created, Table, tablename="chat_message"):
    id = BigSerial(primary_key=True)
    chat_id = ForeignKey(references=Chat, on_delete=OnDelete.cascade)
    role = Text()
    content = Text()
    citations = JSONB(default="[]")


class UsageEvent(Table, tablename="usage_event"):
    """One model call: who, through which key, which model and provider, from where,
    how many tokens, how long, and how it ended."""

    id = BigSerial(primary_key=True)
    at = Timestamptz(default=TimestamptzNow())
    account_id = UUID(null=True, default=None)
    api_key_id = UUID(null=True, default=None)
    #: the telephone line a call's turn was answered on (None: the app and the API)
    line_id = UUID(null=True, default=None)
    model = Text()
    provider = Text()
    source = Text()
    prompt_tokens = Integer(default=0)
    completion_tokens = Integer(default=0)
    latency_ms = Integer(default=0)
    outcome = Text()
