//! Planted secrets in every field of a session's metadata (a corpus of them: labelled as such
//! in `tests/fixtures/secrets_labelled.json`).

use super::*;

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
