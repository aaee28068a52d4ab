"""The one schema, written once with a few dialect tokens, and its migrations.

Tokens: ``{PK}`` an auto-increment integer key, ``{INT}`` a 64-bit integer, ``{REAL}`` a double,
``{BLOB}`` bytes, ``{VEC}`` a vector column (BLOB of float32 on SQLite, pgvector's ``vector`` on
PostgreSQL). Migrations are ``(version, [statements])``; a store applies those above the version it
finds, in one transaction, and records the new version in ``schema_version``.
"""

from __future__ import annotations

DIALECTS = {
    "sqlite": {"PK": "INTEGER PRIMARY KEY AUTOINCREMENT", "INT": "INTEGER", "REAL": "REAL", "BLOB": "BLOB",
               "VEC": "BLOB", "ADD_COLUMN": "ADD COLUMN"},
    "postgres": {"PK": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "INT": "BIGINT",
                 "REAL": "DOUBLE PRECISION", "BLOB": "BYTEA", "VEC": "vector",
                 "ADD_COLUMN": "ADD COLUMN IF NOT EXISTS"},  # (two processes upgrading one database at once)
}

SCHEMA_V1 = [
    """CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at {REAL} NOT NULL
    )""",
    """CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        source TEXT,
        doc_order {INT} NOT NULL,
        created_at {REAL} NOT NULL
    )""",
    "CREATE INDEX documents_project ON documents(project_id, doc_order)",
    """CREATE TABLE chapters (
        id TEXT PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        chapter_order {INT} NOT NULL,
        title TEXT
    )""",
    "CREATE INDEX chapters_document ON chapters(document_id, chapter_order)",
    """CREATE TABLE blocks (
        id TEXT PRIMARY KEY,
        chapter_id TEXT NOT NULL REFERENCES chapters(id) ON DELETE CASCADE,
        block_order {INT} NOT NULL,
        title TEXT,
        content TEXT NOT NULL,
        is_dirty {INT} NOT NULL DEFAULT 1,
        content_hash TEXT,
        last_chunked_at {REAL},
        revision {INT} NOT NULL DEFAULT 1,
        updated_at {REAL},
        last_error TEXT
    )""",
    "CREATE INDEX blocks_chapter ON blocks(chapter_id, block_order)",
    "CREATE INDEX blocks_dirty ON blocks(is_dirty)",
    """CREATE TABLE chunks (
        pk {PK},
        project_id TEXT NOT NULL,
        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        chapter_id TEXT NOT NULL REFERENCES chapters(id) ON DELETE CASCADE,
        block_id TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
        parent_pk {INT} REFERENCES chunks(pk) ON DELETE CASCADE,
        chunk_level TEXT NOT NULL CHECK (chunk_level IN ('document', 'parent', 'child')),
        dotted_id TEXT NOT NULL,
        chunk_order {INT} NOT NULL,
        start_offset {INT} NOT NULL,
        end_offset {INT} NOT NULL,
        size {INT} NOT NULL,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        method TEXT NOT NULL,
        meta TEXT,
        embedding_model TEXT,
        embedding {VEC}
    )""",
    "CREATE INDEX chunks_level ON chunks(project_id, chunk_level, embedding_model)",
    "CREATE INDEX chunks_chapter ON chunks(chapter_id, chunk_level, chunk_order)",
    "CREATE INDEX chunks_parent ON chunks(parent_pk, chunk_order)",
    "CREATE INDEX chunks_block ON chunks(block_id)",
    "CREATE INDEX chunks_dotted ON chunks(document_id, dotted_id)",
    """CREATE TABLE embeddings (
        model_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        dim {INT} NOT NULL,
        vector {BLOB} NOT NULL,
        created_at {REAL} NOT NULL,
        PRIMARY KEY (model_id, kind, content_hash)
    )""",
    """CREATE TABLE bubbles (
        pk {PK},
        project_id TEXT NOT NULL,
        document_id TEXT REFERENCES documents(id) ON DELETE CASCADE,
        chapter_id TEXT REFERENCES chapters(id) ON DELETE CASCADE,
        block_id TEXT REFERENCES blocks(id) ON DELETE CASCADE,
        category TEXT NOT NULL,
        content TEXT NOT NULL,
        priority TEXT NOT NULL,
        context TEXT,
        created_at {REAL} NOT NULL
    )""",
    "CREATE INDEX bubbles_chapter ON bubbles(chapter_id)",
    """CREATE TABLE store_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    "INSERT INTO store_meta(key, value) VALUES ('generation', '0')",
]

# The semantic similarity graph (logichunk.index.graph): derived data, rebuilt from the chunks on
# demand, so no foreign keys — a sync removes the rows of deleted chunks itself (see that module).
SCHEMA_V2_GRAPH = [
    """CREATE TABLE graph_state (
        project_id TEXT NOT NULL,
        model_id TEXT NOT NULL,
        generation {INT} NOT NULL,
        params TEXT NOT NULL,
        built_at {REAL} NOT NULL,
        PRIMARY KEY (project_id, model_id)
    )""",
    """CREATE TABLE graph_nodes (
        project_id TEXT NOT NULL,
        model_id TEXT NOT NULL,
        chunk_pk {INT} NOT NULL,
        PRIMARY KEY (project_id, model_id, chunk_pk)
    )""",
    """CREATE TABLE graph_sentences (
        project_id TEXT NOT NULL,
        model_id TEXT NOT NULL,
        chunk_pk {INT} NOT NULL,
        sent_order {INT} NOT NULL,
        start_offset {INT} NOT NULL,
        end_offset {INT} NOT NULL,
        vector {BLOB} NOT NULL,
        PRIMARY KEY (project_id, model_id, chunk_pk, sent_order)
    )""",
    """CREATE TABLE graph_edges (
        project_id TEXT NOT NULL,
        model_id TEXT NOT NULL,
        src_pk {INT} NOT NULL,
        dst_pk {INT} NOT NULL,
        kind {INT} NOT NULL,
        weight {REAL} NOT NULL,
        PRIMARY KEY (project_id, model_id, src_pk, dst_pk)
    )""",
]

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, SCHEMA_V1),
    (2, SCHEMA_V2_GRAPH),
]

LATEST = MIGRATIONS[-1][0]

# Added where the database may be written and lacks it, outside the version numbers (Store._migrate): what each
# block's text was when its document's source (a file) gave it, the sha256 of the text an ingest stored or last
# took from the file, so that a later ingest tells a change of the file from an edit made in the store
# (logichunk.store.ingest.block_merge). A column no older logichunk reads or writes: a database with it still
# opens in one (a version number would refuse it), whose edits then read as what they are, edits made in the
# store. Filled on the way: a block never edited, once chunked, has its text's hash as ``content_hash``; the
# others (edited, or never chunked) stay NULL, not known.
BLOCK_SOURCE_HASH = [
    "ALTER TABLE blocks {ADD_COLUMN} source_hash TEXT",
    "UPDATE blocks SET source_hash = content_hash WHERE revision = 1 AND source_hash IS NULL",
]

# Added the same way: the paths an ingest reached a document's file by (absolute, links not resolved:
# ``kb/notes.md`` where the source, the file's real path, is ``/elsewhere/notes.md`` through a link), so that a
# prune of the folder removes the document once no such path leads to it (its real path lies outside the folder:
# by it alone the document was never pruned; a file linked from two folders synced stays while either links it).
# One path as itself, several as a JSON list (logichunk.store.base.reached_of). NULL where not known: a document
# not ingested from a file, or stored by an older logichunk (the next ingest that reaches its file records it).
DOCUMENT_REACHED_BY = [
    "ALTER TABLE documents {ADD_COLUMN} reached_by TEXT",
]

#: ``(table, column, statements adding it)``: the columns added where the database may be written and lacks them
ADDED_COLUMNS = (("blocks", "source_hash", BLOCK_SOURCE_HASH), ("documents", "reached_by", DOCUMENT_REACHED_BY))


def rendered(dialect: str, stmts: list[str]) -> list[str]:
    """``stmts`` rendered for ``dialect``."""
    return [s.format(**DIALECTS[dialect]) for s in stmts]


def statements(dialect: str, after: int) -> list[tuple[int, list[str]]]:
    """Migrations newer than ``after``, rendered for ``dialect``."""
    return [(version, rendered(dialect, stmts)) for version, stmts in MIGRATIONS if version > after]
