"""Sessions of the demo world written by agents other than Claude Code and Codex (issues 18, 35).

Imported by gen_demo.py (deterministic, no clock): one Gemini CLI, one Pi, one Copilot CLI, one
Cline and one OpenHands CLI session on the same piece of work in repos/webshop (the newsletter
unsubscribe link), so one question ("newsletter unsubscribe") returns evidence from five agents.
Formats are the agents' exact on-disk ones (see docs/EVENTS.md); cwds use the @DEMO@ placeholder.
Gemini, Pi and Copilot write JSONL (lines, in gen_demo's FILES); Cline's task folder and
OpenHands' conversation folder are JSON documents written whole (`extra_files`), compact as
`JSON.stringify` and pydantic's `model_dump_json` write them, with no trailing newline.
"""

import hashlib
import json

DEMO = "@DEMO@"
CWD = DEMO + "/repos/webshop"

GEMINI_SID = "6a0e2b91-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
PI_SID = "0199f3c2-5d6e-7f80-91a2-b3c4d5e6f7a8"
COPILOT_SID = "9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
# Cline names a task by `Date.now()` when it starts (2026-11-13T15:00:00Z).
CLINE_TASK = "1794582000000"
OPENHANDS_ID = "b7e4c1d2-9a3f-4c5e-8d6b-2f1a0e9c7d3b"

# Where the stores sit in the world, laid out as on a real machine (src/demo.rs names the roots).
CLINE_EXT_DIR = "vscode/User/globalStorage/saoudrizwan.claude-dev"
OPENHANDS_DIR = "openhands/conversations/" + OPENHANDS_ID.replace("-", "")

# Planted secrets (canaries) of these sessions: kind, as planted, assert substring, where.
CANARY_SMTP = "SMTP_PASSWORD=canary-smtp-6620"
CANARY_MAILGUN = "MAILGUN_API_KEY=key-CANARYMG5d1e8f2a9b3c7046"
CANARIES = [
    ("smtp-password", CANARY_SMTP, "canary-smtp-6620",
     "Cline `command_output` of `grep … deploy/newsletter-worker.env` (and the same tool_result in the "
     "task's `api_conversation_history.json`)"),
    ("mailgun-api-key", CANARY_MAILGUN, "CANARYMG5d1e8f2a9b3c7046",
     "OpenHands `TerminalObservation` of `env | grep MAILGUN`"),
]


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


def _json(doc) -> bytes:
    """One document as its writer leaves it: compact, UTF-8, no trailing newline."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _ulid(ms: int, label: str) -> str:
    """A ULID (Crockford base32: 48-bit time, 80 bits of randomness) with the randomness taken from
    `label`, so the file is the same on every run."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (ms << 80) | int.from_bytes(hashlib.sha256(label.encode()).digest()[:10], "big")
    return "".join(alphabet[(n >> (5 * i)) & 31] for i in reversed(range(26)))


NEWSLETTER_PY_BEFORE = '''from urllib.parse import quote, urljoin

from flask import Blueprint, url_for

bp = Blueprint("newsletter", __name__)


def unsubscribe_url(token: str) -> str:
    link = f"/unsubscribe?token={quote(token)}"
    return urljoin(url_for("newsletter.index", _external=True), link)
'''

CLINE_TASK_TEXT = ("The unsubscribe link in our newsletter emails points to http://localhost:8000/unsubscribe?token=… "
                   "in production, so nobody can unsubscribe. Find out why and fix it.")


def cline() -> dict:
    """A Cline task folder (VS Code extension): `tasks/<Date.now()>/ui_messages.json` (the store: what
    the person saw, each message with its time), `api_conversation_history.json` (what the model was
    sent), `task_metadata.json`, and the task's entry in `state/taskHistory.json` beside `tasks/`
    (its cwd). Shapes: cline/cline `ExtensionMessage.ts` (`ClineMessage`, `ClineSayTool`,
    `ClineApiReqInfo`), `HistoryItem.ts`; read by src/sources/episodes/vscode_tasks.rs."""
    t0 = int(CLINE_TASK)
    model = "anthropic/claude-sonnet-4.5"
    model_info = {"providerId": "cline", "modelId": model, "mode": "act"}
    env_details = ("<environment_details>\n# VSCode Visible Files\napi/newsletter.py\n\n# VSCode Open Tabs\n"
                   "api/newsletter.py\n\n# Current Time\n11/13/2026, 3:00:00 PM (UTC, UTC+0:00)\n\n"
                   "# Current Working Directory (" + CWD + ") Files\napi/\ncmd/\ndeploy/\ndocs/\nscripts/\nsrc/\n"
                   "tests/\nconfig.toml\npackage.json\nREADME.md\ntsconfig.json\n\n# Context Window Usage\n"
                   "0 / 200K tokens used (0%)\n\n# Current Mode\nACT MODE\n</environment_details>")
    grep = "grep -E 'SERVER_NAME|PUBLIC_BASE_URL|SMTP_' deploy/newsletter-worker.env"
    grep_out = ("SERVER_NAME=localhost:8000\nSMTP_HOST=smtp.mailgun.org\nSMTP_USER=postmaster@mg.webshop.example\n"
                + CANARY_SMTP + "\n")
    diff = ("------- SEARCH\n    return urljoin(url_for(\"newsletter.index\", _external=True), link)\n=======\n"
            "    return urljoin(current_app.config[\"PUBLIC_BASE_URL\"], link)\n+++++++ REPLACE")
    test_cmd = "pytest tests/test_newsletter.py -q"
    test_out = "......                                                                   [100%]\n6 passed in 0.58s"
    result = ("The unsubscribe link in newsletter emails is now built from PUBLIC_BASE_URL instead of the "
              "newsletter worker's SERVER_NAME, which was localhost:8000 from local development "
              "(api/newsletter.py). tests/test_newsletter.py passes.")
    req = lambda request, tin, tout, cost: json.dumps(
        {"request": request, "tokensIn": tin, "tokensOut": tout, "cacheWrites": 0 if tin < 9000 else 1200,
         "cacheReads": 0 if tin < 9000 else 8000, "cost": cost}, ensure_ascii=False, separators=(",", ":"))
    say = lambda ms, kind, text, idx, **extra: dict({"ts": t0 + ms, "type": "say", "say": kind, "text": text},
                                                    **extra, conversationHistoryIndex=idx)
    ask = lambda ms, kind, text, idx, **extra: dict({"ts": t0 + ms, "type": "ask", "ask": kind, "text": text},
                                                    **extra, conversationHistoryIndex=idx)
    tool = lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    ui = [
        say(0, "task", CLINE_TASK_TEXT, -1),
        say(180, "api_req_started", req("<task>\n" + CLINE_TASK_TEXT + "\n</task>\n\n" + env_details,
                                        8410, 164, 0.0283), -1, modelInfo=model_info),
        say(3100, "reasoning", "The link is made absolute with url_for(_external=True). The newsletter is sent by a "
            "background worker, outside any request, so Flask falls back to SERVER_NAME there.", 0, partial=False),
        say(3900, "text", "I'll read the newsletter module first: the unsubscribe link is built there.", 0,
            partial=False),
        say(4600, "tool", tool({"tool": "readFile", "path": "api/newsletter.py",
                                "content": CWD + "/api/newsletter.py", "operationIsLocatedInWorkspace": True}), 0),
        say(5200, "api_req_started", req("[read_file for 'api/newsletter.py'] Result:", 9020, 131, 0.0051), 1,
            modelInfo=model_info),
        say(8300, "text", "unsubscribe_url() joins the link onto url_for(\"newsletter.index\", _external=True). "
            "In the worker that is whatever SERVER_NAME says, so let me look at the worker's environment.", 2,
            partial=False),
        ask(9100, "command", grep, 2),
        say(11400, "command_output", grep_out, 2),
        say(11900, "api_req_started", req("[execute_command for '" + grep + "'] Result:", 9390, 212, 0.0068), 3,
            modelInfo=model_info),
        say(15200, "text", "That is the cause: the worker still has SERVER_NAME=localhost:8000 from local "
            "development, so every unsubscribe link it renders points at localhost. I'll build the link from "
            "PUBLIC_BASE_URL, which production already sets for the storefront.", 4, partial=False),
        say(16800, "tool", tool({"tool": "editedExistingFile", "path": "api/newsletter.py", "diff": diff,
                                 "operationIsLocatedInWorkspace": True, "startLineNumbers": [10]}), 4),
        say(17300, "checkpoint_created", "", 4, lastCheckpointHash="5d0c2a81f3b97e46a1d8c0b25e9f7a3164c8d2e0"),
        say(17700, "api_req_started", req("[replace_in_file for 'api/newsletter.py'] Result:", 9870, 58, 0.0049),
            5, modelInfo=model_info),
        say(19400, "command", test_cmd, 6),
        say(22600, "command_output", test_out, 6),
        say(23100, "api_req_started", req("[execute_command for '" + test_cmd + "'] Result:", 10110, 143, 0.0057),
            7, modelInfo=model_info),
        say(26500, "completion_result", result + "HAS_CHANGES", 8, partial=False),
        ask(26600, "completion_result", "", 8),
        say(91000, "user_feedback", "Works now, thanks. The links in today's test send point at the shop.", 8),
    ]
    task_text = [{"type": "text", "text": "<task>\n" + CLINE_TASK_TEXT + "\n</task>"},
                 {"type": "text", "text": env_details}]
    call = lambda cid, name, inp: {"type": "tool_use", "id": cid, "name": name, "input": inp}
    res = lambda cid, text: {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": text}]}
    api = [
        {"role": "user", "content": task_text},
        {"role": "assistant", "content": [{"type": "text", "text": ui[3]["text"]},
                                          call("toolu_01ClnRead7Fq2", "read_file", {"path": "api/newsletter.py"})]},
        res("toolu_01ClnRead7Fq2", NEWSLETTER_PY_BEFORE),
        {"role": "assistant", "content": [{"type": "text", "text": ui[6]["text"]},
                                          call("toolu_01ClnGrep3Kd8", "execute_command",
                                               {"command": grep, "requires_approval": True})]},
        res("toolu_01ClnGrep3Kd8", "Command executed.\nOutput:\n" + grep_out),
        {"role": "assistant", "content": [{"type": "text", "text": ui[10]["text"]},
                                          call("toolu_01ClnEdit9Wm4", "replace_in_file",
                                               {"path": "api/newsletter.py", "diff": diff})]},
        res("toolu_01ClnEdit9Wm4", "The content was successfully saved to api/newsletter.py."),
        {"role": "assistant", "content": [call("toolu_01ClnTest2Vb6", "execute_command",
                                               {"command": test_cmd, "requires_approval": False})]},
        res("toolu_01ClnTest2Vb6", "Command executed.\nOutput:\n" + test_out),
        {"role": "assistant", "content": [call("toolu_01ClnDone5Hs1", "attempt_completion", {"result": result})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01ClnDone5Hs1",
                                      "content": "The user has provided feedback on the results."},
                                     {"type": "text", "text": "<feedback>\n" + ui[-1]["text"] + "\n</feedback>"}]},
    ]
    meta = {"files_in_context": [
        {"path": "api/newsletter.py", "record_state": "active", "record_source": "cline_edited",
         "cline_read_date": t0 + 4600, "cline_edit_date": t0 + 16800}],
        "model_usage": [{"ts": t0 + 180, "model_id": model, "model_provider_id": "cline", "mode": "act"}],
        "environment_history": []}
    task_dir = CLINE_EXT_DIR + "/tasks/" + CLINE_TASK + "/"
    files = {
        task_dir + "ui_messages.json": _json(ui),
        task_dir + "api_conversation_history.json": _json(api),
        task_dir + "task_metadata.json": _json(meta),
    }
    history = [{"id": CLINE_TASK, "ulid": _ulid(t0, "cline-newsletter-task"), "ts": ui[-1]["ts"],
                "task": CLINE_TASK_TEXT, "tokensIn": 46800, "tokensOut": 708, "cacheWrites": 1200,
                "cacheReads": 32000, "totalCost": 0.0508, "size": sum(len(b) for b in files.values()),
                "shadowGitConfigWorkTree": CWD, "cwdOnTaskInitialization": CWD, "isFavorited": False,
                "modelId": model}]
    files[CLINE_EXT_DIR + "/state/taskHistory.json"] = _json(history)
    return files


def openhands() -> dict:
    """An OpenHands CLI (V1, software-agent-sdk) conversation: `<id as 32 hex>/base_state.json` and
    `events/event-<idx:05d>-<event id>.json`, one event per file, timestamps in the writer's local
    time without a zone. Shapes: the SDK's `event/**`, `tool/builtins/finish.py`, the terminal and
    file_editor tools; read by src/sources/episodes/openhands.rs."""
    T = lambda s: "2026-11-14T10:%s" % s
    eid = lambda n: "c4a1e7f0-5b2d-4e8a-9c3f-%012x" % (0x7d10 + n)
    events = []

    def ev(kind, t, source, **body):
        n = len(events)
        events.append(dict({"kind": kind, "id": eid(n), "timestamp": T(t), "source": source,
                            "parent_id": eid(n - 1) if n else "__root__"}, **body))

    text = lambda t: [{"cache_prompt": False, "type": "text", "text": t}]
    msg = lambda role, t: {"role": role, "content": text(t), "cache_enabled": False, "vision_enabled": False,
                           "function_calling_enabled": True, "force_string_serializer": False}
    calls = []

    def act(t, thought, tool, action, reasoning=None):
        cid = "toolu_01Oh%s" % ["Curl4Tz", "Env8Qa", "Sr1Nx", "Sr2Pw", "Sr3Ld", "Test6Jc", "Done0Rk"][len(calls)]
        calls.append(cid)
        args = {k: v for k, v in action.items() if k != "kind"}
        body = {"thought": text(thought) if thought else []}
        if reasoning:
            body["reasoning_content"] = reasoning
        body.update({"thinking_blocks": [], "action": action, "tool_name": tool, "tool_call_id": cid,
                     "tool_call": {"id": cid, "name": tool, "arguments": json.dumps(args, ensure_ascii=False),
                                   "origin": "completion"},
                     "llm_response_id": "chatcmpl-%s" % hashlib.sha256(cid.encode()).hexdigest()[:12],
                     "security_risk": "LOW"})
        ev("ActionEvent", t, "agent", **body)
        return cid

    def observe(t, tool, cid, observation):
        ev("ObservationEvent", t, "environment", observation=observation, action_id=events[-1]["id"],
           tool_name=tool, tool_call_id=cid)

    def terminal(t, cid, command, output, exit_code):
        observe(t, "terminal", cid, {
            "kind": "TerminalObservation", "content": text(output), "is_error": False, "command": command,
            "exit_code": exit_code, "timeout": False,
            "metadata": {"exit_code": exit_code, "pid": -1, "username": "dev", "hostname": "webshop-dev",
                         "working_dir": CWD, "py_interpreter_path": "/usr/bin/python3", "prefix": "",
                         "suffix": "\n[The command completed with exit code %d.]" % exit_code}})

    path = CWD + "/api/newsletter.py"

    def edited(t, cid, snippet):
        observe(t, "file_editor", cid, {
            "kind": "FileEditorObservation",
            "content": text("The file %s has been edited. Here's the result of running `cat -n` on a snippet of "
                            "%s:\n%s\nReview the changes and make sure they are as expected. Edit the file again "
                            "if necessary." % (path, path, snippet)),
            "is_error": False, "command": "str_replace", "path": path, "prev_exist": True})

    ev("SystemPromptEvent", "00:00.412306", "agent",
       system_prompt={"cache_prompt": False, "type": "text",
                      "text": "You are OpenHands agent, a helpful AI assistant that can interact with a computer "
                              "to solve tasks."},
       tools=[{"type": "function", "function": {"name": n}} for n in ("terminal", "file_editor", "task_tracker",
                                                                       "finish")])
    ev("MessageEvent", "00:04.927115", "user",
       llm_message=msg("user", "Gmail shows an Unsubscribe button on our newsletter, but clicking it does nothing. "
                               "Make the newsletter unsubscribe link support one-click unsubscribe (RFC 8058)."),
       activated_skills=[], extended_content=[])
    post = ("curl -s -i -X POST -d 'List-Unsubscribe=One-Click' "
            "'http://localhost:8000/unsubscribe?token=demo-token' | head -n 3")
    cid = act("00:11.305842", "First, what a one-click POST to the unsubscribe endpoint gets today.", "terminal",
              {"kind": "TerminalAction", "command": post, "is_input": False, "reset": False},
              reasoning="RFC 8058 one-click unsubscribe is a POST to the List-Unsubscribe URL with the body "
                        "List-Unsubscribe=One-Click, announced by a List-Unsubscribe-Post header.")
    terminal("00:12.019477", cid, post,
             "HTTP/1.1 405 METHOD NOT ALLOWED\nAllow: HEAD, GET, OPTIONS\nContent-Type: text/html; charset=utf-8",
             0)
    env_cmd = "env | grep MAILGUN; grep -n 'List-Unsubscribe' api/newsletter.py"
    cid = act("00:18.662031", "The endpoint only takes GET. Now the headers the Mailgun sender sets.", "terminal",
              {"kind": "TerminalAction", "command": env_cmd, "is_input": False, "reset": False})
    terminal("00:19.140298", cid, env_cmd,
             "MAILGUN_DOMAIN=mg.webshop.example\n" + CANARY_MAILGUN + "\n"
             "41:        \"List-Unsubscribe\": f\"<{unsubscribe_url(token)}>\",", 0)
    old = "@bp.route(\"/unsubscribe\")"
    cid = act("00:25.873514", "Allow POST on the unsubscribe route.", "file_editor",
              {"kind": "FileEditorAction", "command": "str_replace", "path": path, "old_str": old,
               "new_str": "@bp.route(\"/unsubscribe\", methods=[\"GET\", \"POST\"])"})
    observe("00:26.002871", "file_editor", cid, {
        "kind": "FileEditorObservation",
        "content": text("ERROR:\nNo replacement was performed, old_str `%s` did not appear verbatim in %s."
                        % (old, path)),
        "is_error": True, "command": "str_replace", "path": path, "prev_exist": True})
    old = "@bp.get(\"/unsubscribe\")"
    new = "@bp.route(\"/unsubscribe\", methods=[\"GET\", \"POST\"])"
    cid = act("00:31.410657", "The route is declared with @bp.get.", "file_editor",
              {"kind": "FileEditorAction", "command": "str_replace", "path": path, "old_str": old, "new_str": new})
    edited("00:31.533190", cid,
           "    56\t\n    57\t" + new + "\n    58\tdef unsubscribe():\n    59\t    token = request.values[\"token\"]")
    old = "        \"List-Unsubscribe\": f\"<{unsubscribe_url(token)}>\","
    new = old + "\n        \"List-Unsubscribe-Post\": \"List-Unsubscribe=One-Click\","
    cid = act("00:37.118904", "Announce one-click unsubscribe in the newsletter's headers.", "file_editor",
              {"kind": "FileEditorAction", "command": "str_replace", "path": path, "old_str": old, "new_str": new})
    edited("00:37.240385", cid,
           "    40\t    return {\n    41\t" + new.replace("\n", "\n    42\t") + "\n    43\t    }")
    test = "python -m pytest tests/test_newsletter.py -q"
    cid = act("00:42.501736", "Running the newsletter tests.", "terminal",
              {"kind": "TerminalAction", "command": test, "is_input": False, "reset": False})
    terminal("00:45.887012", cid, test, ".......\n7 passed in 0.64s", 0)
    done = ("One-click unsubscribe works: the unsubscribe route accepts POST as well as GET, and every newsletter "
            "carries List-Unsubscribe-Post: List-Unsubscribe=One-Click beside its List-Unsubscribe link "
            "(api/newsletter.py). The newsletter tests pass.")
    cid = act("00:51.226418", "", "finish", {"kind": "FinishAction", "message": done})
    observe("00:51.230077", "finish", cid, {"kind": "FinishObservation", "content": text(done), "is_error": False})
    ev("ConversationStateUpdateEvent", "00:51.241590", "environment", key="execution_status", value="finished")

    state = {"id": OPENHANDS_ID,
             "agent": {"kind": "Agent",
                       "llm": {"model": "anthropic/claude-sonnet-4-5-20250929", "api_key": "**********",
                               "temperature": 0.0, "max_output_tokens": 64000, "usage_id": "agent",
                               "stream": False},
                       "tools": [{"name": n, "params": {}} for n in ("terminal", "file_editor", "task_tracker")],
                       "mcp_config": {}, "system_prompt_filename": "system_prompt.j2"},
             "workspace": {"kind": "LocalWorkspace", "working_dir": CWD},
             "persistence_dir": DEMO + "/" + OPENHANDS_DIR, "max_iterations": 500, "stuck_detection": True,
             "execution_status": "finished", "confirmation_policy": {"kind": "NeverConfirm"},
             "activated_knowledge_skills": [], "blocked_actions": {}, "blocked_messages": {},
             "last_user_message_id": events[1]["id"], "leaf_event_id": events[-1]["id"], "head_is_empty": False,
             "stats": {"usage_to_metrics": {"agent": {
                 "model_name": "anthropic/claude-sonnet-4-5-20250929", "accumulated_cost": 0.0597,
                 "accumulated_token_usage": {"prompt_tokens": 58410, "completion_tokens": 1362}}}},
             "secret_registry": {"secret_sources": {}}, "tags": {}, "agent_state": {}}
    files = {OPENHANDS_DIR + "/base_state.json": _json(state)}
    for n, e in enumerate(events):
        files["%s/events/event-%05d-%s.json" % (OPENHANDS_DIR, n, e["id"])] = _json(e)
    return files


def build(files: dict):
    files["gemini/tmp/webshop/chats/session-2026-11-10T09-20-6a0e2b91.jsonl"] = gemini()
    files["pi/sessions/--DEMO--repos-webshop--/2026-11-11T14-00-00-000Z_" + PI_SID + ".jsonl"] = pi()
    files["copilot/session-state/" + COPILOT_SID + "/events.jsonl"] = copilot()


def extra_files() -> dict:
    """Files that are not JSONL lines: the Gemini slot's project root, Cline's task folder and its
    history index, OpenHands' conversation folder."""
    files = {"gemini/tmp/webshop/.project_root": (CWD + "\n").encode("utf-8")}
    files.update(cline())
    files.update(openhands())
    return files


README = """
## Other agents (issues 18 and 35)

Five sessions by other agents, on one piece of work in `repos/webshop` (the newsletter
unsubscribe), so "newsletter unsubscribe" returns evidence from five
agents. Generated by `scripts/gen_demo_agents.py`. Cline's and OpenHands' stores are JSON
documents written whole (compact, no trailing newline), not JSONL.

| agent | file | session id | date (UTC) | outcome | what |
|---|---|---|---|---|---|
| Gemini CLI | `gemini/tmp/webshop/chats/session-…jsonl` (+ `.project_root`) | `%s` | 2026-11-10 | success | token URL-encoded twice; fixed in api/newsletter.py |
| Pi | `pi/sessions/--DEMO--repos-webshop--/…jsonl` | `%s` | 2026-11-11 | unknown | rate limit on the unsubscribe endpoint |
| Copilot CLI | `copilot/session-state/<id>/events.jsonl` | `%s` | 2026-11-12 | unknown | regression test for the unsubscribe link |
| Cline | `%s/tasks/<id>/ui_messages.json` (+ `api_conversation_history.json`, `task_metadata.json`; cwd from `state/taskHistory.json`) | `%s` | 2026-11-13 | success | the link pointed at localhost: the worker's SERVER_NAME; built from PUBLIC_BASE_URL now; the grep output holds the `smtp-password` canary |
| OpenHands CLI | `openhands/conversations/<hex>/base_state.json` + `events/event-NNNNN-<id>.json` | `%s` | 2026-11-14 | success | one-click unsubscribe (RFC 8058): POST on the route, `List-Unsubscribe-Post` header; one failed `str_replace`; `env` output holds the `mailgun-api-key` canary; ends with `finish` |
""" % (GEMINI_SID, PI_SID, COPILOT_SID, CLINE_EXT_DIR, CLINE_TASK, OPENHANDS_ID)


def check(out) -> list:
    """Validate the JSON-document stores on disk under `out` (a pathlib.Path): each parses, one
    Cline task and one OpenHands conversation, every path under the placeholder."""
    problems = []
    docs = [p for p in sorted(out.rglob("*.json"))
            if p.relative_to(out).as_posix().startswith((CLINE_EXT_DIR + "/", "openhands/"))]
    for p in docs:
        data = p.read_bytes()
        try:
            json.loads(data.decode("utf-8"))
        except ValueError as e:
            problems.append(f"{p.relative_to(out)}: not JSON ({e})")
        text = data.decode("utf-8", "replace")
        if "/home/" in text or "/Users/" in text:
            problems.append(f"{p.relative_to(out)}: real-looking absolute path")
    tasks = [p for p in docs if p.name == "ui_messages.json"]
    states = [p for p in docs if p.name == "base_state.json"]
    if len(tasks) != 1 or len(states) != 1:
        problems.append(f"Cline tasks {len(tasks)}, OpenHands conversations {len(states)} (want 1 and 1)")
    for p in states:
        if json.loads(p.read_text("utf-8"))["workspace"]["working_dir"] != CWD:
            problems.append(f"{p.relative_to(out)}: working_dir without placeholder")
    index = out / CLINE_EXT_DIR / "state" / "taskHistory.json"
    if index.is_file() and any(h.get("cwdOnTaskInitialization") != CWD for h in json.loads(index.read_text("utf-8"))):
        problems.append("taskHistory.json: cwd without placeholder")
    return problems
