-- knowledge team index, schema version 2: the vector codes and the agent-knowledge store (L3).
-- Applied by `knowledge push` (as the database owner) on a version-1 database, or after 0001 on
-- an empty one; see docs/TEAM.md. Every row names the machine that pushed it, under the same
-- row-level policies as version 1: a push role writes only its own machine's rows, the search
-- role reads every row.

-- The vector arm: the same 128 sign bits a local store keeps per window of a row's text
-- (sources/vectors), so `bit_count(a # b)` (the Hamming distance) ranks them without an
-- extension. A row's codes go and come with it (ON DELETE CASCADE).
CREATE TABLE kn_event_vec (
    machine    text NOT NULL,
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    win        smallint NOT NULL,
    code       bit(128) NOT NULL,
    PRIMARY KEY (machine, session_id, seq, win),
    FOREIGN KEY (machine, session_id, seq) REFERENCES kn_event ON DELETE CASCADE
);

CREATE TABLE kn_chunk_vec (
    machine  text NOT NULL,
    chunk_id text NOT NULL,
    win      smallint NOT NULL,
    code     bit(128) NOT NULL,
    PRIMARY KEY (machine, chunk_id, win),
    FOREIGN KEY (machine, chunk_id) REFERENCES kn_chunk ON DELETE CASCADE
);

-- The per-session watermark of the codes: every event up to this seq that has codes locally
-- has them here (-1: none yet; a version-1 database's sessions get theirs on the next push).
ALTER TABLE kn_session ADD COLUMN vec_seq bigint NOT NULL DEFAULT -1;

-- The agent-knowledge store of each machine (local `knowledge.sqlite`, `ak_*`). It is rebuilt
-- whole by every local build, so a push replaces a machine's rows whole when its revision
-- changed (kn_store_rev, store 'agent_knowledge'); `id` columns are the local row ids, stable
-- within one pushed revision.
CREATE TABLE kn_skill (
    machine        text NOT NULL,
    id             bigint NOT NULL,
    name           text NOT NULL,
    qualified_name text NOT NULL,
    path           text NOT NULL,
    description    text NOT NULL,
    when_to_use    text,
    content_hash   text NOT NULL,
    plugin         text,
    kind           text NOT NULL,
    tags           text NOT NULL,
    -- our own token stream of the catalog text, weighted like the local FTS5 columns:
    -- name A, when_to_use B, description C, tags D
    tsv            tsvector NOT NULL,
    PRIMARY KEY (machine, id)
);
CREATE INDEX kn_skill_name ON kn_skill (name);
CREATE INDEX kn_skill_tsv ON kn_skill USING gin (tsv);

CREATE TABLE kn_agent_def (
    machine      text NOT NULL,
    id           bigint NOT NULL,
    name         text NOT NULL,
    path         text NOT NULL,
    description  text NOT NULL,
    model        text,
    tools        text NOT NULL,
    content_hash text NOT NULL,
    PRIMARY KEY (machine, id)
);

CREATE TABLE kn_actor (
    machine         text NOT NULL,
    actor_id        text NOT NULL,
    name            text NOT NULL,
    kind            text NOT NULL,
    source          text NOT NULL,
    root_session    text NOT NULL,
    first_seen      text,
    last_seen       text,
    last_seen_ms    bigint,
    sessions        bigint NOT NULL,
    events          bigint NOT NULL,
    skill_uses      bigint NOT NULL,
    edits           bigint NOT NULL,
    outcome_success bigint NOT NULL,
    outcome_failure bigint NOT NULL,
    outcome         text NOT NULL,
    definition      text,
    PRIMARY KEY (machine, actor_id)
);

CREATE TABLE kn_actor_session (
    machine         text NOT NULL,
    actor_id        text NOT NULL,
    session_id      text NOT NULL,
    role            text NOT NULL,
    sidechain_agent text NOT NULL DEFAULT '',
    events          bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (machine, actor_id, session_id, role, sidechain_agent)
);
CREATE INDEX kn_actor_session_session ON kn_actor_session (machine, session_id);

CREATE TABLE kn_skill_use (
    machine      text NOT NULL,
    id           bigint NOT NULL,
    actor_id     text NOT NULL,
    skill_name   text NOT NULL,
    skill_base   text NOT NULL,
    skill_plugin text,
    session_id   text NOT NULL,
    seq          bigint NOT NULL,
    time         text,
    time_ms      bigint,
    via          text NOT NULL,
    outcome      text NOT NULL,
    PRIMARY KEY (machine, id)
);
CREATE INDEX kn_skill_use_base ON kn_skill_use (skill_base);
CREATE INDEX kn_skill_use_actor ON kn_skill_use (machine, actor_id);

CREATE TABLE kn_edit (
    machine    text NOT NULL,
    id         bigint NOT NULL,
    actor_id   text NOT NULL,
    path       text NOT NULL,
    abs_path   text,
    rel_path   text,
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    time       text,
    time_ms    bigint,
    PRIMARY KEY (machine, id)
);
CREATE INDEX kn_edit_path ON kn_edit (path);
CREATE INDEX kn_edit_abs ON kn_edit (abs_path);
CREATE INDEX kn_edit_actor ON kn_edit (machine, actor_id);

-- Events per session, sidechain and hour (the activity view).
CREATE TABLE kn_activity (
    machine         text NOT NULL,
    session_id      text NOT NULL,
    sidechain_agent text NOT NULL DEFAULT '',
    hour            bigint NOT NULL,
    events          bigint NOT NULL,
    PRIMARY KEY (machine, session_id, sidechain_agent, hour)
);
CREATE INDEX kn_activity_hour ON kn_activity (hour);

-- Who may see what: exactly the version-1 rules on every new table.
GRANT SELECT ON kn_event_vec, kn_chunk_vec, kn_skill, kn_agent_def, kn_actor, kn_actor_session,
    kn_skill_use, kn_edit, kn_activity TO knowledge_search;
GRANT SELECT, INSERT, UPDATE, DELETE ON kn_event_vec, kn_chunk_vec, kn_skill, kn_agent_def,
    kn_actor, kn_actor_session, kn_skill_use, kn_edit, kn_activity TO knowledge_push;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['kn_event_vec', 'kn_chunk_vec', 'kn_skill', 'kn_agent_def',
        'kn_actor', 'kn_actor_session', 'kn_skill_use', 'kn_edit', 'kn_activity']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY %I ON %I FOR SELECT TO knowledge_search USING (true)',
            t || '_read', t);
        EXECUTE format(
            'CREATE POLICY %I ON %I FOR ALL TO knowledge_push
                 USING (machine = kn_my_machine()) WITH CHECK (machine = kn_my_machine())',
            t || '_own', t);
    END LOOP;
END
$$;
