-- knowledge team index, schema version 1.
-- Applied by `knowledge push` (as the database owner) on an empty database; see docs/TEAM.md.
-- Every row names the machine that pushed it. Row-level security keeps each push role to its
-- own machine's rows (kn_pusher says which role pushes which machine); the search role reads.

CREATE TABLE kn_schema (version integer NOT NULL);
INSERT INTO kn_schema VALUES (1);

-- Which login role pushes which machine: written by the database owner only.
CREATE TABLE kn_pusher (
    role    name PRIMARY KEY,
    machine text NOT NULL UNIQUE
);

-- The revision of each local store last pushed, and by whom.
CREATE TABLE kn_store_rev (
    machine   text NOT NULL,
    store     text NOT NULL,
    rev       text NOT NULL,
    person    text,
    pushed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (machine, store)
);

CREATE TABLE kn_session (
    machine           text NOT NULL,
    session_id        text NOT NULL,
    source            text NOT NULL,
    path              text NOT NULL,
    cwd               text,
    created_at        text,
    last_event_at     text,
    agent_preset      text,
    title             text,
    parent_session_id text,
    agent_id          text,
    agent_name        text,
    agent_description text,
    team_name         text,
    outcome           text NOT NULL,
    live              boolean NOT NULL,
    events            bigint NOT NULL,
    -- the per-session watermark: the highest seq pushed, and the local row id of the first
    -- event (a transcript re-read from the start gets new ones, and is pushed again whole)
    pushed_seq        bigint NOT NULL,
    head_id           bigint NOT NULL,
    PRIMARY KEY (machine, session_id)
);
CREATE INDEX kn_session_cwd ON kn_session (cwd);

CREATE TABLE kn_event (
    machine         text NOT NULL,
    session_id      text NOT NULL,
    seq             bigint NOT NULL,
    event_type      text NOT NULL,
    time            text,
    time_ms         bigint,
    text            text NOT NULL,
    human           boolean NOT NULL,
    tool_name       text,
    is_error        boolean NOT NULL,
    sidechain_agent text,
    -- our own token stream (text::tokens), stems and all, with positions
    tsv             tsvector NOT NULL,
    PRIMARY KEY (machine, session_id, seq),
    FOREIGN KEY (machine, session_id) REFERENCES kn_session ON DELETE CASCADE
);
CREATE INDEX kn_event_tsv ON kn_event USING gin (tsv);
CREATE INDEX kn_event_time ON kn_event (time_ms);

CREATE TABLE kn_chunk (
    machine     text NOT NULL,
    chunk_id    text NOT NULL,
    root        text NOT NULL,
    path        text NOT NULL,
    start_line  bigint NOT NULL,
    end_line    bigint NOT NULL,
    source_kind text NOT NULL,
    symbol      text,
    text        text NOT NULL,
    mtime       text,
    mtime_ms    bigint,
    tsv         tsvector NOT NULL,
    PRIMARY KEY (machine, chunk_id)
);
CREATE INDEX kn_chunk_tsv ON kn_chunk USING gin (tsv);
CREATE INDEX kn_chunk_path ON kn_chunk (machine, root, path);

-- Roles: group roles a login role is made a member of (docs/TEAM.md).
-- Roles are cluster-wide: another database of the cluster may have made them already, or be
-- making them right now. One a superuser made first is not created again, so an owner without
-- CREATEROLE can run this (PostgreSQL checks CREATEROLE before it looks for the role).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'knowledge_push') THEN
        BEGIN
            CREATE ROLE knowledge_push NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'knowledge_search') THEN
        BEGIN
            CREATE ROLE knowledge_search NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO knowledge_push, knowledge_search;
GRANT SELECT ON kn_schema, kn_pusher TO knowledge_push, knowledge_search;
GRANT SELECT ON kn_store_rev, kn_session, kn_event, kn_chunk TO knowledge_search;
GRANT SELECT, INSERT, UPDATE, DELETE ON kn_store_rev, kn_session, kn_event, kn_chunk
    TO knowledge_push;

-- The machine a push role may write: the one kn_pusher names for it.
CREATE FUNCTION kn_my_machine() RETURNS text LANGUAGE sql STABLE AS
    $$ SELECT machine FROM kn_pusher WHERE role = current_user $$;

ALTER TABLE kn_store_rev ENABLE ROW LEVEL SECURITY;
ALTER TABLE kn_session ENABLE ROW LEVEL SECURITY;
ALTER TABLE kn_event ENABLE ROW LEVEL SECURITY;
ALTER TABLE kn_chunk ENABLE ROW LEVEL SECURITY;

CREATE POLICY kn_store_rev_read ON kn_store_rev FOR SELECT TO knowledge_search USING (true);
CREATE POLICY kn_session_read ON kn_session FOR SELECT TO knowledge_search USING (true);
CREATE POLICY kn_event_read ON kn_event FOR SELECT TO knowledge_search USING (true);
CREATE POLICY kn_chunk_read ON kn_chunk FOR SELECT TO knowledge_search USING (true);

CREATE POLICY kn_store_rev_own ON kn_store_rev FOR ALL TO knowledge_push
    USING (machine = kn_my_machine()) WITH CHECK (machine = kn_my_machine());
CREATE POLICY kn_session_own ON kn_session FOR ALL TO knowledge_push
    USING (machine = kn_my_machine()) WITH CHECK (machine = kn_my_machine());
CREATE POLICY kn_event_own ON kn_event FOR ALL TO knowledge_push
    USING (machine = kn_my_machine()) WITH CHECK (machine = kn_my_machine());
CREATE POLICY kn_chunk_own ON kn_chunk FOR ALL TO knowledge_push
    USING (machine = kn_my_machine()) WITH CHECK (machine = kn_my_machine());
