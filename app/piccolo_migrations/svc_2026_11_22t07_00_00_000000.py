"""The words of each Library, kept by the database, for correcting misspelt query words.

Trigram similarity over whole passages is slow (every candidate passage is compared
in full) and the planner cannot tell. Following pg_trgm's own advice, search compares a
misspelt word with the Library's distinct words instead, a short list behind a trigram
index, and searches the passages for the words it finds. The list is derived data,
like ``chunk.tsv``: statement-level triggers on ``chunk`` keep it, counting for each
word how many passages hold it, so it is right whichever way passages come and go
(a document deleted, a Library deleted through the cascade).
"""

from app.migration_sql import sql_migration

ID = "2026-11-22T07:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "library words"

# Words as the 'simple' configuration sees them: lower case, not stemmed, no stop list.
_WORDS_OF = """
    SELECT c.library_id, w.word, count(*) AS chunks
    FROM {table} AS c
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector('simple', c.text))) AS w(word)
    WHERE char_length(w.word) BETWEEN 3 AND 40
    GROUP BY c.library_id, w.word
"""

STATEMENTS = [
    """
    CREATE TABLE library_word (
        library_id uuid NOT NULL REFERENCES library (id) ON DELETE CASCADE,
        word text NOT NULL,
        chunks integer NOT NULL CHECK (chunks >= 0),
        PRIMARY KEY (library_id, word)
    )
    """,
    "CREATE INDEX library_word_trgm ON library_word USING gin (word gin_trgm_ops)",
    # Rows are written in key order so two documents added at once to one Library
    # lock shared words in the same order and cannot deadlock.
    f"""
    CREATE FUNCTION library_words_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO library_word (library_id, word, chunks)
        SELECT * FROM ({_WORDS_OF.format(table="added_chunks")}) AS counted
        ORDER BY library_id, word
        ON CONFLICT (library_id, word)
        DO UPDATE SET chunks = library_word.chunks + excluded.chunks;
        RETURN NULL;
    END
    $$
    """,
    f"""
    CREATE FUNCTION library_words_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE library_word AS lw SET chunks = greatest(lw.chunks - gone.chunks, 0)
        FROM ({_WORDS_OF.format(table="removed_chunks")}) AS gone
        WHERE lw.library_id = gone.library_id AND lw.word = gone.word;
        DELETE FROM library_word
        WHERE chunks = 0
          AND library_id IN (SELECT DISTINCT library_id FROM removed_chunks);
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER chunk_words_added AFTER INSERT ON chunk
    REFERENCING NEW TABLE AS added_chunks
    FOR EACH STATEMENT EXECUTE FUNCTION library_words_added()
    """,
    """
    CREATE TRIGGER chunk_words_removed AFTER DELETE ON chunk
    REFERENCING OLD TABLE AS removed_chunks
    FOR EACH STATEMENT EXECUTE FUNCTION library_words_removed()
    """,
]


forwards = sql_migration(ID, DESCRIPTION, STATEMENTS)
