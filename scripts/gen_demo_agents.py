"""Sessions of the demo world written by agents other than Claude Code and Codex (issue 18).

Imported by gen_demo.py (deterministic, no clock): one Gemini CLI, one Pi and one Copilot CLI
session on the same piece of work in repos/webshop (the newsletter unsubscribe link), so one
question ("newsletter unsubscribe") returns evidence from three agents.
Formats are the agents' exact on-disk ones (see docs/EVENTS.md); cwds use the @DEMO@ placeholder.
"""

DEMO = "@DEMO@"
CWD = DEMO + "/repos/webshop"

GEMINI_SID = "6a0e2b91-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
PI_SID = "0199f3c2-5d6e-7f80-91a2-b3c4d5e6f7a8"
COPILOT_SID = "9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"


def gemini():
    T = lambda s: "2026-11-10T09:%s.000Z" % s
    ph = "3b5d7f9a1c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c"
    call = {"id": "read_file_1794302465000_0", "name": "read_file",
            "args": {"file_path": CWD + "/api/newsletter.py"},
            "result": [{"functionResponse": {"id": "read_file_1794302465000_0", "name": "read_file",
                        "response": {"output": "link = f\"/unsubscribe?token={quote(quote(token))}\""}}}],
            "status": "success", "timestamp": T("21:05"), "resultDisplay": "",
            "description": "api/newsletter.py", "displayName": "ReadFile", "renderOutputAsMarkdown": True}
    edit = {"id": "replace_1794302490000_0", "name": "replace",
            "args": {"file_path": CWD + "/api/newsletter.py",
                     "old_string": "quote(quote(token))", "new_string": "quote(token)"},
            "result": [{"functionResponse": {"id": "replace_1794302490000_0", "name": "replace",
                        "response": {"output": "Successfully modified file: api/newsletter.py (1 replacements)."}}}],
            "status": "success", "timestamp": T("21:30"), "resultDisplay": {"fileDiff": "@@ -12 +12 @@"},
            "description": "api/newsletter.py", "displayName": "Edit", "renderOutputAsMarkdown": True}
    g1 = {"id": "d1e2f3a4-0001-4b5c-8d6e-000000000101", "timestamp": T("21:00"), "type": "gemini",
          "content": "I will read the newsletter module that builds the unsubscribe link.",
          "thoughts": [{"subject": "Tracing the broken link",
                        "description": "A 404 on unsubscribe suggests the token is mangled in the URL.",
                        "timestamp": T("20:58")}],
          "tokens": {"input": 7100, "output": 30, "cached": 0, "thoughts": 120, "tool": 0, "total": 7250},
          "model": "gemini-3-flash-preview"}
    g2 = {"id": "d1e2f3a4-0002-4b5c-8d6e-000000000102", "timestamp": T("21:25"), "type": "gemini",
          "content": "The unsubscribe token is URL-encoded twice (quote(quote(token))), so the link 404s. Encoding it once.",
          "thoughts": [], "tokens": {"input": 7400, "output": 40, "cached": 7000, "thoughts": 10, "tool": 0, "total": 7450},
          "model": "gemini-3-flash-preview"}
    return [
        {"sessionId": GEMINI_SID, "projectHash": ph, "startTime": T("20:00"), "lastUpdated": T("20:00"), "kind": "main"},
        {"id": "d1e2f3a4-0000-4b5c-8d6e-000000000100", "timestamp": T("20:30"), "type": "user",
         "content": [{"text": "The newsletter unsubscribe link returns 404 for every subscriber. Find out why and fix it."}]},
        {"$set": {"lastUpdated": T("20:30")}},
        g1, {"$set": {"lastUpdated": T("21:00")}}, dict(g1, toolCalls=[call]),
        g2, {"$set": {"lastUpdated": T("21:25")}}, dict(g2, toolCalls=[edit]),
        {"id": "d1e2f3a4-0003-4b5c-8d6e-000000000103", "timestamp": T("22:00"), "type": "user",
         "content": [{"text": "works now, thanks"}]},
        {"$set": {"summary": "Fix the double-encoded newsletter unsubscribe token"}},
    ]


def pi():
    T = lambda s: "2026-11-11T14:%s.000Z" % s
    e = lambda i, p, t, typ, **k: dict(type=typ, id=i, parentId=p, timestamp=T(t), **k)
    msg = lambda i, p, t, m: e(i, p, t, "message", message=m)
    usage = {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 940, "cost": {"total": 0.003}}
    asst = lambda content, stop: {"role": "assistant", "content": content, "api": "anthropic-messages",
                                  "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
                                  "stopReason": stop, "timestamp": 1794405600000}
    return [
        {"type": "session", "version": 3, "id": PI_SID, "timestamp": T("00:00"), "cwd": CWD},
        msg("b0000001", None, "00:10", {"role": "user", "content": [{"type": "text", "text":
            "Bots hammer the newsletter unsubscribe endpoint. Add a rate limit to it."}], "timestamp": 1794405610000}),
        msg("b0000002", "b0000001", "00:20", asst([
            {"type": "thinking", "thinking": "The unsubscribe view has no limiter; reuse the RateLimiter from api/payments.py.",
             "thinkingSignature": "sig"},
            {"type": "toolCall", "id": "toolu_01DemoPiEdit", "name": "edit",
             "arguments": {"path": CWD + "/api/newsletter.py", "oldText": "def unsubscribe(token):",
                           "newText": "@rate_limit(per_minute=10)\ndef unsubscribe(token):"}}], "toolUse")),
        msg("b0000003", "b0000002", "00:21", {"role": "toolResult", "toolCallId": "toolu_01DemoPiEdit", "toolName": "edit",
            "content": [{"type": "text", "text": "Successfully replaced text in api/newsletter.py."}], "isError": False,
            "timestamp": 1794405621000}),
        msg("b0000004", "b0000003", "00:30", asst([
            {"type": "toolCall", "id": "toolu_01DemoPiTest", "name": "bash",
             "arguments": {"command": "pytest tests/test_newsletter.py -q"}}], "toolUse")),
        msg("b0000005", "b0000004", "00:40", {"role": "toolResult", "toolCallId": "toolu_01DemoPiTest", "toolName": "bash",
            "content": [{"type": "text", "text": "3 passed"}], "isError": False, "timestamp": 1794405640000}),
        msg("b0000006", "b0000005", "00:50", asst([{"type": "text", "text":
            "The unsubscribe endpoint is now limited to 10 requests a minute per IP."}], "stop")),
        e("b0000007", "b0000006", "00:51", "session_info", name="Rate-limit the newsletter unsubscribe endpoint"),
    ]


def copilot():
    T = lambda s: "2026-11-12T16:%s.000Z" % s
    ev = lambda n, t, typ, data: {"type": typ, "data": data, "id": "dm-%02d" % n, "timestamp": T(t),
                                  "parentId": ("dm-%02d" % (n - 1)) if n > 1 else None}
    return [
        ev(1, "00:00", "session.start", {"sessionId": COPILOT_SID, "version": 1, "producer": "copilot-agent",
            "copilotVersion": "1.0.68", "startTime": T("00:00"), "selectedModel": "gpt-5",
            "context": {"cwd": CWD, "gitRoot": CWD, "branch": "main", "repository": "demo/webshop", "hostType": "github"}}),
        ev(2, "00:01", "system.message", {"content": "You are the GitHub Copilot CLI.", "role": "system"}),
        ev(3, "00:05", "user.message", {"content": "Add a regression test for the newsletter unsubscribe link (the token must be encoded once).",
            "transformedContent": "Add a regression test for the newsletter unsubscribe link (the token must be encoded once).",
            "attachments": [], "interactionId": "int-1"}),
        ev(4, "00:10", "assistant.message", {"messageId": "m-1", "content": "Writing tests/test_newsletter.py::test_unsubscribe_link_encoded_once.",
            "toolRequests": [{"toolCallId": "call_dm_1", "name": "create", "type": "function",
                              "arguments": {"path": CWD + "/tests/test_newsletter.py",
                                            "file_text": "def test_unsubscribe_link_encoded_once(): ..."}}]}),
        ev(5, "00:11", "tool.execution_complete", {"toolCallId": "call_dm_1", "success": True,
            "result": {"content": "Created tests/test_newsletter.py"}}),
        ev(6, "00:20", "assistant.message", {"messageId": "m-2", "content": "Running it.",
            "toolRequests": [{"toolCallId": "call_dm_2", "name": "bash", "type": "function",
                              "arguments": "{\"command\":\"pytest tests/test_newsletter.py -q\"}"}]}),
        ev(7, "00:30", "tool.execution_complete", {"toolCallId": "call_dm_2", "success": True,
            "result": {"content": "4 passed"}}),
        ev(8, "00:40", "assistant.message", {"messageId": "m-3",
            "content": "The newsletter unsubscribe link test passes: the token is encoded exactly once."}),
        ev(9, "00:50", "session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": 1}),
    ]


def build(files: dict):
    files["gemini/tmp/webshop/chats/session-2026-11-10T09-20-6a0e2b91.jsonl"] = gemini()
    files["pi/sessions/--DEMO--repos-webshop--/2026-11-11T14-00-00-000Z_" + PI_SID + ".jsonl"] = pi()
    files["copilot/session-state/" + COPILOT_SID + "/events.jsonl"] = copilot()


def extra_files() -> dict:
    """Non-JSONL files beside the sessions: the Gemini slot's project root."""
    return {"gemini/tmp/webshop/.project_root": (CWD + "\n").encode("utf-8")}


README = """
## Other agents (issue 18)

Three sessions by other agents, on one piece of work in `repos/webshop` (the newsletter
unsubscribe), so "newsletter unsubscribe" returns evidence from three
agents. Generated by `scripts/gen_demo_agents.py`.

| agent | file | session id | date (UTC) | outcome | what |
|---|---|---|---|---|---|
| Gemini CLI | `gemini/tmp/webshop/chats/session-…jsonl` (+ `.project_root`) | `%s` | 2026-11-10 | success | token URL-encoded twice; fixed in api/newsletter.py |
| Pi | `pi/sessions/--DEMO--repos-webshop--/…jsonl` | `%s` | 2026-11-11 | unknown | rate limit on the unsubscribe endpoint |
| Copilot CLI | `copilot/session-state/<id>/events.jsonl` | `%s` | 2026-11-12 | unknown | regression test for the unsubscribe link |
""" % (GEMINI_SID, PI_SID, COPILOT_SID)
