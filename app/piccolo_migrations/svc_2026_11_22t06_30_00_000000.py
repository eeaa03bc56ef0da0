"""The assistant platform: projects, providers, Libraries, agents, tools, chats, usage."""

from app.migration_sql import ACCOUNT_ID, CREATED_AT, UPDATED_AT, UUID_KEY, sql_migration

ID = "2026-11-22T06:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "assistant platform"

STATEMENTS = [
    f"""
    CREATE TABLE project (
        {UUID_KEY},
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        owner_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        {CREATED_AT}
    )
    """,
    f"""
    CREATE TABLE project_member (
        {UUID_KEY},
        project_id uuid NOT NULL REFERENCES project (id) ON DELETE CASCADE,
        {ACCOUNT_ID},
        added_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, account_id)
    )
    """,
    "CREATE INDEX project_member_account ON project_member (account_id)",
    f"""
    CREATE TABLE provider (
        {UUID_KEY},
        name text NOT NULL UNIQUE,
        base_url text NOT NULL,
        api_key_enc text,
        models text[] NOT NULL DEFAULT '{{}}',
        enabled boolean NOT NULL DEFAULT true,
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    "CREATE INDEX provider_models ON provider USING gin (models)",
    f"""
    CREATE TABLE provider_key (
        {UUID_KEY},
        {ACCOUNT_ID},
        provider_id uuid NOT NULL REFERENCES provider (id) ON DELETE CASCADE,
        api_key_enc text NOT NULL,
        {CREATED_AT},
        UNIQUE (account_id, provider_id)
    )
    """,
    f"""
    CREATE TABLE library (
        {UUID_KEY},
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description text NOT NULL DEFAULT '',
        owner_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        project_id uuid REFERENCES project (id) ON DELETE SET NULL,
        {CREATED_AT}
    )
    """,
    "CREATE INDEX library_owner ON library (owner_id)",
    "CREATE INDEX library_project ON library (project_id)",
    f"""
    CREATE TABLE document (
        {UUID_KEY},
        library_id uuid NOT NULL REFERENCES library (id) ON DELETE CASCADE,
        title text NOT NULL,
        media_type text NOT NULL,
        size_bytes integer NOT NULL,
        content text NOT NULL,
        created_by uuid,
        {CREATED_AT}
    )
    """,
    "CREATE INDEX document_library ON document (library_id)",
    "CREATE INDEX document_title_trgm ON document USING gin (title gin_trgm_ops)",
    """
    CREATE TABLE chunk (
        id bigserial PRIMARY KEY,
        document_id uuid NOT NULL REFERENCES document (id) ON DELETE CASCADE,
        library_id uuid NOT NULL REFERENCES library (id) ON DELETE CASCADE,
        ordinal integer NOT NULL,
        start_offset integer NOT NULL,
        end_offset integer NOT NULL,
        text text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (document_id, ordinal)
    )
    """,
    "CREATE INDEX chunk_tsv ON chunk USING gin (tsv)",
    "CREATE INDEX chunk_text_trgm ON chunk USING gin (text gin_trgm_ops)",
    "CREATE INDEX chunk_library ON chunk (library_id)",
    f"""
    CREATE TABLE agent (
        {UUID_KEY},
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        instructions text NOT NULL DEFAULT '',
        model text NOT NULL,
        owner_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        project_id uuid REFERENCES project (id) ON DELETE SET NULL,
        tools text[] NOT NULL DEFAULT '{{}}',
        archived_at timestamptz,
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    "CREATE INDEX agent_owner ON agent (owner_id)",
    "CREATE INDEX agent_project ON agent (project_id)",
    f"""
    CREATE TABLE agent_library (
        {UUID_KEY},
        agent_id uuid NOT NULL REFERENCES agent (id) ON DELETE CASCADE,
        library_id uuid NOT NULL REFERENCES library (id) ON DELETE CASCADE,
        UNIQUE (agent_id, library_id)
    )
    """,
    f"""
    CREATE TABLE http_tool (
        {UUID_KEY},
        name text NOT NULL UNIQUE CHECK (name ~ '^[a-zA-Z0-9_-]{{1,64}}$'),
        description text NOT NULL,
        parameters jsonb NOT NULL,
        url text NOT NULL,
        method text NOT NULL DEFAULT 'POST' CHECK (method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
        secret_header_name text,
        secret_header_enc text,
        side_effecting boolean NOT NULL DEFAULT true,
        usable_on_call boolean NOT NULL DEFAULT false,
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    f"""
    CREATE TABLE chat (
        {UUID_KEY},
        owner_id uuid NOT NULL REFERENCES account (id) ON DELETE CASCADE,
        agent_id uuid REFERENCES agent (id) ON DELETE SET NULL,
        source text NOT NULL DEFAULT 'app' CHECK (source IN ('app', 'api', 'telephone')),
        title text NOT NULL DEFAULT '',
        api_key_id uuid,
        {CREATED_AT},
        {UPDATED_AT}
    )
    """,
    "CREATE INDEX chat_owner_source ON chat (owner_id, source, updated_at DESC)",
    "CREATE INDEX chat_source_created ON chat (source, created_at)",
    f"""
    CREATE TABLE chat_message (
        id bigserial PRIMARY KEY,
        chat_id uuid NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content text NOT NULL,
        citations jsonb NOT NULL DEFAULT '[]',
        {CREATED_AT}
    )
    """,
    "CREATE INDEX chat_message_chat ON chat_message (chat_id, id)",
    """
    CREATE TABLE usage_event (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        account_id uuid,
        api_key_id uuid,
        model text NOT NULL,
        provider text NOT NULL,
        source text NOT NULL CHECK (source IN ('app', 'api', 'telephone')),
        prompt_tokens integer NOT NULL DEFAULT 0,
        completion_tokens integer NOT NULL DEFAULT 0,
        latency_ms integer NOT NULL DEFAULT 0,
        outcome text NOT NULL CHECK (outcome IN ('ok', 'error', 'client_disconnected'))
    )
    """,
    "CREATE INDEX usage_event_at ON usage_event (at)",
    "CREATE INDEX usage_event_account_at ON usage_event (account_id, at)",
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
