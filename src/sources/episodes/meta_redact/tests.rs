//! Planted secrets in every field of a session's metadata (a corpus of them: labelled as such
//! in `tests/fixtures/secrets_labelled.json`).

use super::*;
use crate::sources::episodes::model::Fact;

#[test]
fn every_free_text_field_is_redacted_and_ids_are_kept() {
    let mut meta = SessionMeta {
        session_id: Some("s-1".into()),
        cwd: Some("/srv/https://u:CwdPw1x@host/app".into()),
        agent_preset: Some("cli token=PresetTok2".into()),
        version: Some("1.0 api_key=VersionKey3".into()),
        git_branch: Some("fix/password=BranchPw4".into()),
        title: Some("the password is Hunter2CanaryA!".into()),
        entrypoint: Some("cli secret=EntrySec5".into()),
        model: Some("m ghp_abcdefghijklmnopqrstuvwxyz0123456789".into()),
        agent_name: Some("fixer passwd=NamePw6".into()),
        agent_description: Some("role token=RoleTok7".into()),
        team_name: Some("ops AKIAIOSFODNN7EXAMPLE".into()),
        agent_id: Some("agent-1".into()),
        ..SessionMeta::default()
    };
    assert_eq!(session(&mut meta), 10);
    let all = format!("{meta:?}");
    for secret in [
        "CwdPw1x",
        "PresetTok2",
        "VersionKey3",
        "BranchPw4",
        "Hunter2CanaryA",
        "EntrySec5",
        "ghp_abc",
        "NamePw6",
        "RoleTok7",
        "AKIAIOSFODNN7EXAMPLE",
    ] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    assert_eq!(meta.session_id.as_deref(), Some("s-1"));
    assert_eq!(meta.agent_id.as_deref(), Some("agent-1"));
    assert_eq!(
        meta.cwd.as_deref(),
        Some("/srv/https://u:[REDACTED]@host/app")
    );

    let mut ev = ParsedEvent::new(
        super::super::model::EventType::AssistantToolUse,
        None,
        String::new(),
    );
    ev.tool_name = Some("mcp__x__token=ToolTok8".into());
    ev.sidechain_agent = Some("side password=SidePw9".into());
    assert_eq!(event(&mut ev), 2);
    assert!(!format!("{ev:?}").contains("ToolTok8") && !format!("{ev:?}").contains("SidePw9"));
    // Ordinary metadata comes through as it is.
    let mut plain = SessionMeta {
        cwd: Some("/home/me/src/keycloak-token-service".into()),
        git_branch: Some("feature/password-reset".into()),
        agent_name: Some("secret-scanner".into()),
        ..SessionMeta::default()
    };
    let before = plain.clone();
    assert_eq!(session(&mut plain), 0);
    assert_eq!(plain, before);
}

/// Issue 36, fourth hostile pass: a value after a secret word with no verb (`-`, `/`, `_`, a
/// space), in a branch, a name, a tool's name and the names an event's facts give (which name
/// the actors), goes; ordinary branches and names keep their words.
#[test]
fn a_value_after_a_secret_word_in_a_name_goes_and_ordinary_names_stay() {
    let mut meta = SessionMeta {
        git_branch: Some("fix/password-Br4nchXk9vQ2".into()),
        agent_name: Some("scout token Nm7vQ2mLp7Zt".into()),
        agent_description: Some("keeps the api-key/Ds3kW9nP5xQz handy".into()),
        agent_preset: Some("token-gh9Q2mLp7Ztq1".into()),
        team_name: Some("ops secret_Tm5pL8vQ2zXc".into()),
        cwd: Some("/srv/keys/Cw8dE5gH7kL9/app".into()),
        ..SessionMeta::default()
    };
    assert_eq!(session(&mut meta), 6);
    let all = format!("{meta:?}");
    for secret in [
        "Br4nchXk9vQ2",
        "Nm7vQ2mLp7Zt",
        "Ds3kW9nP5xQz",
        "gh9Q2mLp7Ztq1",
        "Tm5pL8vQ2zXc",
        "Cw8dE5gH7kL9",
    ] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    assert_eq!(meta.git_branch.as_deref(), Some("fix/password-[REDACTED]"));

    let mut ev = ParsedEvent::new(
        super::super::model::EventType::AssistantToolUse,
        None,
        String::new(),
    );
    ev.tool_name = Some("mcp__vault__token_Tl6vQ2mLp7Zt".into());
    ev.facts = vec![
        Fact::Spawn {
            tool_use_id: Some("toolu_1".into()),
            subagent_type: Some("scout token Sp1vQ2mLp7Zt".into()),
            name: Some("helper-key-Sp2vQ2mLp7Zt".into()),
            description: Some("rotate password Sp3!vQ2mLp".into()),
            team_name: Some("ops secret Sp4vQ2mLp7Zt".into()),
        },
        Fact::TeammateMessage {
            teammate_id: "alice-token-Tm6vQ2mLp7Zt".into(),
        },
        Fact::SkillUse {
            name: "deploy-secret-Sk7vQ2mLp7Zt".into(),
            via: "tool".into(),
        },
        Fact::FileEdit {
            path: "src/auth/token.rs".into(),
        },
    ];
    assert_eq!(event(&mut ev), 7);
    let all = format!("{ev:?}");
    for secret in [
        "Tl6vQ2mLp7Zt",
        "Sp1vQ2mLp7Zt",
        "Sp2vQ2mLp7Zt",
        "Sp3!vQ2mLp",
        "Sp4vQ2mLp7Zt",
        "Tm6vQ2mLp7Zt",
        "Sk7vQ2mLp7Zt",
    ] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    assert!(all.contains("src/auth/token.rs") && all.contains("toolu_1"));

    let mut plain = SessionMeta {
        git_branch: Some("feature/token-refresh-v2".into()),
        agent_name: Some("api-key-rotator".into()),
        agent_description: Some("fixes the password reset flow".into()),
        cwd: Some("/home/me/.ssh/keys/id_ed25519".into()),
        title: Some("fix/token-ABC-123-refresh".into()),
        ..SessionMeta::default()
    };
    let before = plain.clone();
    assert_eq!(session(&mut plain), 0);
    assert_eq!(plain, before);
    assert_eq!(
        read(Some("fix/password-Br4nchXk9vQ2".into())).as_deref(),
        Some("fix/password-[REDACTED]")
    );
}
