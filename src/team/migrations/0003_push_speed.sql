-- knowledge team index, schema version 3: the episodes push without a check per row.
-- Applied by `knowledge push` (as the database owner) on a version-2 database, or after 0002 on
-- an empty one; see docs/TEAM.md.
--
-- A push inserts its events and their codes by the thousand; a foreign key checked each row
-- (a lookup and a row lock of the session or event) doubled the server's time of an insert
-- (docs/PERFORMANCE.md, "Team index"). The push already writes a session, its events and
-- their codes in one transaction and removes them together (`push/episodes.rs`,
-- `delete_sessions`), so the keys stop being checked by the server; search joins events to
-- their sessions, so a row without its session is never shown.
ALTER TABLE kn_event DROP CONSTRAINT IF EXISTS kn_event_machine_session_id_fkey;
ALTER TABLE kn_event_vec DROP CONSTRAINT IF EXISTS kn_event_vec_machine_session_id_seq_fkey;

-- A push role's policies asked kn_my_machine() (a lookup in kn_pusher) once per row written or
-- read; as a sub-select it is asked once per statement. Same rule, same roles.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['kn_store_rev', 'kn_session', 'kn_event', 'kn_chunk',
        'kn_event_vec', 'kn_chunk_vec', 'kn_skill', 'kn_agent_def', 'kn_actor',
        'kn_actor_session', 'kn_skill_use', 'kn_edit', 'kn_activity']
    LOOP
        EXECUTE format(
            'ALTER POLICY %I ON %I USING (machine = (SELECT kn_my_machine()))
                 WITH CHECK (machine = (SELECT kn_my_machine()))',
            t || '_own', t);
    END LOOP;
END
$$;
