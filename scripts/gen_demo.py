#!/usr/bin/env python3
"""Generate the bundled demo world under fixtures/demo/.

The demo world is what `knowledge demo` and every acceptance test read: three small
repositories, six skills, three agent definitions, and ~22 agent sessions written in the real
on-disk formats of Claude Code (2.0.x / 2.1.x, all four subagent-storage eras) and Codex
(legacy pre-envelope, 0.4x and 0.13x envelopes).

Everything is deterministic: ids are derived from SHA-256 of fixed labels, timestamps from fixed
start times. Re-running the script rewrites byte-identical files.

    python3 scripts/gen_demo.py            # regenerate fixtures/demo/ and run the checks
    python3 scripts/gen_demo.py --check    # only check the committed files
    python3 scripts/gen_demo.py --out DIR  # write the world to DIR instead (replacing DIR)

Paths inside transcripts use the literal placeholder `@DEMO@` for the demo root; the tool copies
the world to a temporary directory and replaces `@DEMO@` with the real absolute path (JSON-escaped).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_demo_agents  # noqa: E402
from demo_gen.claude import Claude  # noqa: E402
from demo_gen.codex import Codex  # noqa: E402
from demo_gen.ids import DEMO, dumps  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "demo"


# ---------------------------------------------------------------------------------------------
# the world's content (scripts/demo_world/, read by demo_gen/world.py)
# ---------------------------------------------------------------------------------------------

from demo_gen.world import (AGENT_FILES, CANARIES, CANARY_WHERE, REPOS, SKILL_FILES, SKILL_LIST,  # noqa: E402
                            SKILL_ORDER, SKILL_SCRIPTS, SKILLS)

Claude.skills = Codex.skills = SKILLS

# ---------------------------------------------------------------------------------------------
# the sessions
# ---------------------------------------------------------------------------------------------

from demo_gen.replay import Output, enc, replay  # noqa: E402

OUTPUT = Output()
FILES = OUTPUT.files            # relative path -> list of records (dict) / raw lines (str) / raw bytes
JSON_FILES = OUTPUT.json_files  # relative path -> JSON document (meta.json sidecars)
SESSIONS = OUTPUT.sessions      # registry for README.md
SUBAGENTS = OUTPUT.subagents    # registry for README.md


EXPECTED_SKILL_USES = {
    # (session key, actor) -> {skill: uses}
    ("C1", "root"): {"mysql-access": 1},
    ("C2", "encoding-janitor"): {"clean-bom-crlf": 3},
    ("C5", "root (team lead)"): {"stripe-webhooks": 1},
    ("C7", "root"): {"clean-bom-crlf": 1},
    ("C11", "encoding-janitor"): {"clean-bom-crlf": 2},
    ("C12", "release-manager"): {"deploy-checklist": 1},
    ("X3", "root (Codex)"): {"clean-bom-crlf": 1},
}


def count_skill_uses() -> dict:
    """Skill tool calls in Claude files, SKILL.md reads in Codex rollouts, keyed by file path."""
    out = {}
    for path, lines in FILES.items():
        for r in lines:
            if not isinstance(r, dict):
                continue
            if r.get("type") == "assistant" and isinstance(r.get("message", {}).get("content"), list):
                for b in r["message"]["content"]:
                    if b.get("type") == "tool_use" and b.get("name") == "Skill":
                        out.setdefault(path, {}).setdefault(b["input"]["skill"], 0)
                        out[path][b["input"]["skill"]] += 1
            p = r.get("payload") if isinstance(r.get("payload"), dict) else None
            if p and p.get("type") == "function_call" and "/SKILL.md" in p.get("arguments", ""):
                name = re.search(r"skills/([a-z0-9-]+)/SKILL\.md", p["arguments"]).group(1)
                out.setdefault(path, {}).setdefault(name, 0)
                out[path][name] += 1
    return out


# ---------------------------------------------------------------------------------------------
# README.md of the demo world
# ---------------------------------------------------------------------------------------------

def find_line(path, pred) -> int:
    for i, r in enumerate(FILES[path], 1):
        if pred(r):
            return i
    raise KeyError(path)


def readme() -> str:
    by_key = {s["key"]: s for s in SESSIONS}
    n_claude = sum(1 for s in SESSIONS if s["tool"] == "claude")
    n_codex = sum(1 for s in SESSIONS if s["tool"] == "codex")
    total_lines = sum(len(v) for v in FILES.values())
    out = []
    w = out.append
    w("# The demo world\n")
    w("A small, hand-checkable world for `knowledge demo` and every acceptance test: three repositories, six "
      "skills, three agent definitions and "
      f"{len(SESSIONS)} agent sessions ({n_claude} Claude Code + {n_codex} Codex main sessions, plus "
      f"{len([s for s in SUBAGENTS if s['agent_id'] != '—'])} subagent / teammate / compaction transcripts; "
      f"{total_lines} JSONL lines in all), written in the real on-disk formats "
      "(see `realdata/FORMATS.md` in the research notes).\n")
    w("**Generated — do not edit by hand.** Source: `scripts/gen_demo.py` (deterministic: ids are SHA-256 of fixed "
      "labels, timestamps are fixed). Regenerate with `python3 scripts/gen_demo.py`; `--check` only validates.\n")
    w("## The `@DEMO@` placeholder\n")
    w("Every path inside a transcript is written relative to the literal placeholder `@DEMO@` "
      "(`\"cwd\":\"@DEMO@/repos/billing\"`, Edit `file_path` `@DEMO@/repos/billing/src/Config.php`, Codex "
      "`session_meta.cwd`, `<environment_context><cwd>`, `patch_apply_end.changes` keys, skill `Base directory`). "
      "The tool copies this folder to a temporary directory and replaces `@DEMO@` with that directory's absolute path "
      "**JSON-escaped** (a Windows path needs `\\\\`). Claude project directory names are the encoded cwd "
      "(`@DEMO@/repos/billing` → `-DEMO--repos-billing`); they are *not* re-encoded after the replacement, which is "
      "fine because a reader must take `cwd` from the records, never decode the directory name.\n")
    w("## Layout\n")
    w("```\nfixtures/demo/\n  README.md                      this file\n"
      "  repos/billing/                 PHP + SQL + YAML + bash (MySQL on 176.99.5.35)\n"
      "  repos/billing-archive/         3 files; a SIBLING whose name starts with \"billing\"\n"
      "  repos/webshop/                 TypeScript + Python + Go + Markdown + TOML\n"
      "  skills/<name>/SKILL.md         6 skills (+ clean-bom-crlf/scripts/check_bom_crlf.sh)\n"
      "  agents/<name>.md               3 agent definitions\n"
      "  claude/projects/<enc-cwd>/     Claude Code transcripts (+ <sessionId>/subagents/…)\n"
      "  codex/sessions/YYYY/MM/DD/     Codex rollouts (directory date = local time, Europe/Moscow)\n"
      "  .gitattributes                 `* -text`: no EOL conversion, the bytes stay exactly as generated\n```\n")
    w("## Sessions\n")
    w("Outcome is what a careful reader derives: an explicit user verdict at the end (\"спасибо, работает\", "
      "\"works now, thanks\", \"Still failing … let's stop here\", \"всё ещё не работает\"), errors in the last tool "
      "results, and the final assistant message.\n")
    w("| key | tool (version) | workspace | session id | date (UTC) | who | outcome | lang | notable facts |")
    w("|---|---|---|---|---|---|---|---|---|")
    for s in sorted(SESSIONS, key=lambda s: s["date"]):
        w(f"| {s['key']} | {s['tool']} {s['version']} | `{s['workspace']}` | `{s['sid']}` | {s['date']} | {s['who']} "
          f"| **{s['outcome']}** | {s['lang']} | {s['facts']} |")
    w("\nFiles:\n")
    for s in sorted(SESSIONS, key=lambda s: (s["key"][0], int(s["key"][1:]))):
        w(f"- {s['key']}: `{s['path']}`")
    w("\n### Subagents, teammates and other child transcripts\n")
    w("| key | kind | name / agentType | agent id | Skill uses | file | what it does |")
    w("|---|---|---|---|---|---|---|")
    for a in SUBAGENTS:
        w(f"| {a['key']} | {a['kind']} | `{a['name']}` | `{a['agent_id']}` | {a['skill_uses']} | `{a['path']}` | "
          f"{a['facts']} |")
    w("\nLinks parent → child: `toolUseResult.agentId` and the `agentId: … (for resuming…)` text tail of the "
      "Task/Agent tool_result (2.1.x), `agent_progress.data.agentId` + `parentToolUseID` (C1, C2, C3, C11, C12), "
      "`.meta.json` `toolUseId` (era 4). Teammates (C5) have a `.meta.json` **without** `toolUseId`; their link is "
      "the Agent tool_result (`agentId`) or the prompt text (line 1 of the teammate file equals the Agent `prompt`). "
      "Every child line carries the **parent's** `sessionId`.\n")
    w("## Skills\n")
    w("| skill | frontmatter variant | used by (session: actor × uses) |")
    w("|---|---|---|")
    variants = {s["name"]: s["readme"] for s in SKILL_LIST}
    for name in SKILL_ORDER:
        users = [f"{k}: {actor} ×{uses[name]}" for (k, actor), uses in EXPECTED_SKILL_USES.items() if name in uses]
        w(f"| `{name}` | {variants[name]} | {'; '.join(users) if users else '— (catalog only)'} |")
    w("\nA use is a Claude `Skill` tool_use (followed by the `Launching skill: …` tool_result and an `isMeta` user line "
      "starting `Base directory for this skill: @DEMO@/skills/<name>` with `sourceToolUseID`), or, in Codex (X3), an "
      "exec that reads `skills/<name>/SKILL.md`. **Not** uses: the `skill_listing` attachments in 2.1.1xx sessions "
      "and the skill list in Codex developer messages (they list every skill), the compaction summary that mentions "
      "a skill, and C12 running the skill's check script without invoking the skill.\n")
    w("**KD-3 (actor with the most skill uses):** `encoding-janitor` — 3 uses in C2 (the most of any single actor in "
      "one session) and 5 in total across C2 + C11, all of `clean-bom-crlf`. Every other actor has at most 1.\n")
    w("## Agent definitions\n")
    w("| file | name | tools | model | note |")
    w("|---|---|---|---|---|")
    w("| `agents/db-fixer.md` | db-fixer | comma string | sonnet | single-quoted description with a Russian example; "
      "the C1 subagent |")
    w("| `agents/code-reviewer.md` | code-reviewer | YAML list | inherit | the C3 and C6 reviewer |")
    w("| `agents/release-manager.md` | release-manager | comma string | haiku | description with `\\n` and "
      "`<example>`; `skills: [deploy-checklist]`; the C12 subagent |")
    w("\n`encoding-janitor` deliberately has **no** definition file: it is known only from transcripts "
      "(`subagent_type` in C2 and C11, `agentType` in their `.meta.json`).\n")
    w("## Planted secrets (canaries)\n")
    w("None of these strings may ever appear in any output of the tool (search results, snippets, handoff "
      "packages, logs). Tests should assert on the *assert substring* column.\n")
    w("| kind | canary as planted | assert substring | where |")
    w("|---|---|---|---|")
    where = CANARY_WHERE
    for kind, planted, sub in CANARIES:
        w(f"| {kind} | `{planted}` | `{sub}` | {where[kind]} |")
    w("\n## Questions this world answers (expected top answers, used by tests)\n")
    w("| question | expected top answer | also expected / must not |")
    w("|---|---|---|")
    q = [
        ("кто чинил доступ к MySQL на 176.99.5.35",
         "actor **`db-fixer`** — subagent of C1 (`" + by_key["C1"]["sid"] + "`, agent `a3f1c9e0b7d24e815`); its "
         "episodes say «доступ к MySQL восстановлен»; it edited `migrations/0004_grant_billing_app.sql` and "
         "`src/Config.php`",
         "C1 root session next (skill `mysql-access`); X1 is the same problem but **failure**; C9 (billing-archive) "
         "mentions MySQL on 176.99.5.35 too and must vanish with `workspaces:[\"<root>/repos/billing\"]`"),
        ("who fixed getUserName",
         "C3 root session (`" + by_key["C3"]["sid"] + "`), Edit of `src/cart.ts`",
         "code lane: `repos/webshop/src/cart.ts` `getUserName`; C6 edited cart.ts but not getUserName"),
        ("where is the MySQL connection configured",
         "code: `repos/billing/src/Config.php` (`Config::mysqlConnect`, `mysqlDsn`)",
         "then `src/Db/Connection.php`, `config/database.yml`; episodes C1/X1/X8 as secondary"),
        ("which skill checks BOM and CRLF", "skill **`clean-bom-crlf`**",
         "used_by: encoding-janitor (C2 ×3, C11 ×2), C7 root, X3"),
        ("stripe webhook signature",
         "episodes of C5 (**success**, team `payments-squad`, alice/bob) and C4 (**failure**); skill "
         "`stripe-webhooks`; code `repos/webshop/api/webhooks.py`",
         "`outcome:\"failure\"` → C4 only; `outcome:\"success\"` → C5 (and X7/C7 docs); docs/payments.md "
         "\"Signature verification\" in code"),
        ("почему падал деплой",
         "C2 (`" + by_key["C2"]["sid"] + "`): BOM + CRLF in `scripts/deploy.sh` (`/usr/bin/env: 'bash\\r'`)",
         "actors: C2 root and `encoding-janitor`; code `scripts/deploy.sh`; skills `clean-bom-crlf`, "
         "`deploy-checklist`"),
        ("encoding-janitor",
         "actor **`encoding-janitor`** (subagent in C2 and C11), skill `clean-bom-crlf` ×5",
         "it is also the answer to \"which actor used skills the most\" (KD-3)"),
        ("where is the cart total computed", "code: `repos/webshop/src/cart.ts` `computeTotals`",
         "episodes C13 (answers exactly this) and C6 (the refactor that introduced it)"),
        ("nightly backup S3 SignatureDoesNotMatch", "C10 (CRLF in ~/.aws/credentials)",
         "snippets must show `[REDACTED]` instead of the AWS keys / RSA block"),
        ("MySQL 176.99.5.35 with `workspaces:[\"<root>/repos/billing\"]`",
         "C1 (and its db-fixer), X1, X8 …", "**never** C9 — `repos/billing-archive` is not under `repos/billing` "
                                             "(path-boundary rule)"),
    ]
    for a, b, c in q:
        w(f"| {a} | {b} | {c} |")
    w("\n## Edge cases planted on purpose\n")
    c7 = by_key["C7"]["path"]
    c4 = by_key["C4"]["path"]
    c3 = by_key["C3"]["path"]
    c10 = by_key["C10"]["path"]
    c2 = by_key["C2"]["path"]
    torn = find_line(c7, lambda r: isinstance(r, str))
    nul = find_line(c4, lambda r: isinstance(r, bytes))
    atis = find_line(c3, lambda r: isinstance(r, dict) and r.get("type") == "atis-latch")
    null = find_line(c10, lambda r: isinstance(r, dict) and r.get("type") == "assistant"
                     and r["message"].get("content") is None)
    cb = find_line(c2, lambda r: isinstance(r, dict) and r.get("subtype") == "compact_boundary")
    w(f"- **Torn line** — `{c7}` line {torn}: the first 170 characters of the record that follows on line "
      f"{torn + 1} (truncated JSON). Skip and count it; the next line is intact.")
    w(f"- **Run of NUL bytes** — `{c4}` line {nul}: 96 × `\\0`.")
    w(f"- **Unknown record type** — `{c3}` line {atis}: `{{\"type\":\"atis-latch\",…}}` (valid JSON).")
    w(f"- **`assistant` with `content:null`** — `{c10}` line {null}.")
    w(f"- **compact_boundary** — `{c2}` line {cb}: `parentUuid:null`, `logicalParentUuid` set, followed by an "
      "`isCompactSummary` user line; the summarizer's own transcript is `…/subagents/agent-acompact-5b81e0.jsonl`.")
    w("- **All four Claude subagent eras**: era 1 inline sidechain (C8, `isSidechain:true` lines in the main file, no "
      "`agentId`), era 2 flat `agent-4c1e9a72.jsonl` beside the session file (C6, 2.0.31; 8 hex digits as in real "
      "2.0.x files), era 3 `<sid>/subagents/agent-a5c81e2.jsonl` without meta (C3, 2.1.39), era 4 17-hex ids with "
      "`.meta.json` (C1, C2, C5, C11, C12).")
    w("- **Claude envelope orders**: 2.0.x / 2.1.39 put `userType,cwd,sessionId,version,gitBranch` right after "
      "`isSidechain`; 2.1.1xx put `promptId`/`permissionMode` first and `userType,entrypoint,cwd,…` at the end (as "
      "in the real 2.1.152 sample).")
    w("- **Polymorphic fields**: `message.content` string vs block list; `tool_result.content` string vs block list "
      "(Task/Agent results); `toolUseResult` object vs string (`\"Error: Exit code 1…\"`); `is_error` absent / "
      "false / true.")
    w("- **Injected, non-human user lines**: `isMeta` skill bodies, the `Caveat:` line and `<command-name>/clear` / "
      "`/compact`, `<teammate-message …>` (incl. `teammate_id=\"system\"`), the compaction summary, Codex "
      "`<environment_context>` and developer messages.")
    w("- **Codex**: duplicated visible text (`response_item` message + `event_msg` user_message/agent_message); "
      "0.4x envelope (X4, X5: `shell` with command array, JSON-string outputs, no task events); 0.13x envelope (X1–X3, "
      "X6–X8: `exec_command` + `exec_command_end`, `custom_tool_call` apply_patch + `patch_apply_end`, "
      "`task_started`/`task_complete`, `turn_aborted` in X1, `phase: commentary|final_answer`); the legacy rollout L0; "
      "X8's directory date (2026/11/20, Moscow) differs from its UTC date (2026-11-19).")
    w("- **Team shapes are modelled on the documentation** (claude-code-log `dev-docs/teammates.md`), not on a real "
      "capture: `TeamCreate`/`TeamDelete`, the teammate-spawn tool_result text and `toolUseResult` "
      "(`status: teammate_spawned`) are plausible guesses; `<teammate-message>` and `teamName` follow the docs.")
    w("- **Code lane**: `repos/billing/.env` is deliberately not in `.gitignore` so the code lane must redact "
      "`DB_PASSWORD`; `repos/webshop/config.toml` holds the live Stripe key. `skills/php-migrations/SKILL.md` "
      "fails strict YAML.\n")
    w("## Counts\n")
    counts = {}
    legacy = by_key["L0"]["path"]
    for path, lines in FILES.items():
        for r in lines:
            if not isinstance(r, dict):
                k = "(broken line)"
            elif path == legacy:
                k = ("legacy: record_type=" + r["record_type"] if "record_type" in r
                     else "legacy: header" if "instructions" in r else "legacy: bare " + r.get("type", "?"))
            elif r.get("type") in ("response_item", "event_msg"):
                k = f"{r['type']}/{r['payload'].get('type')}"
            elif r.get("type") in ("system", "progress", "attachment"):
                sub = r.get("subtype") or (r.get("data") or {}).get("type") or (r.get("attachment") or {}).get("type")
                k = f"{r['type']}/{sub}"
            else:
                k = r.get("type")
            counts[k] = counts.get(k, 0) + 1
    w("| record type (/ subtype) | lines |")
    w("|---|---|")
    for k in sorted(counts, key=lambda k: (-counts[k], str(k))):
        w(f"| `{k}` | {counts[k]} |")
    w("")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# writing and checking
# ---------------------------------------------------------------------------------------------

def render() -> dict:
    """rel path -> (bytes, mode) of every file of the world."""
    files = {}

    def put(rel: str, data: bytes, mode=0o644):
        files[rel] = (data, mode)

    for repo, repo_files in REPOS.items():
        for rel, text in repo_files.items():
            put(f"repos/{repo}/{rel}", text.encode("utf-8"), 0o755 if rel.endswith(".sh") else 0o644)
    for name, text in SKILL_FILES.items():
        put(f"skills/{name}/SKILL.md", text.encode("utf-8"))
    for rel, text in SKILL_SCRIPTS.items():
        put(f"skills/{rel}", text.encode("utf-8"), 0o755 if rel.endswith(".sh") else 0o644)
    for name, text in AGENT_FILES.items():
        put(f"agents/{name}.md", text.encode("utf-8"))
    for rel, lines in FILES.items():
        chunks = []
        for r in lines:
            if isinstance(r, bytes):
                chunks.append(r)
            elif isinstance(r, str):
                chunks.append(r.encode("utf-8"))
            else:
                chunks.append(dumps(r).encode("utf-8"))
        put(rel, b"\n".join(chunks) + b"\n")
    for rel, doc in JSON_FILES.items():
        put(rel, dumps(doc).encode("utf-8"))
    for rel, data in OUTPUT.raw.items():
        put(rel, data)
    put("README.md", (readme() + gen_demo_agents.README).encode("utf-8"))
    # keep every byte as generated on any checkout (no EOL conversion, no diff filters)
    put(".gitattributes", b"# generated by scripts/gen_demo.py: byte-exact fixtures\n* -text\n")
    return files


def write_all(files: dict):
    if OUT.exists():
        shutil.rmtree(OUT)
    for rel, (data, mode) in sorted(files.items()):
        p = OUT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        os.chmod(p, mode)


def compare(files: dict) -> list[str]:
    """--check: the committed files must be byte-identical to a fresh render."""
    problems = []
    on_disk = {p.relative_to(OUT).as_posix() for p in OUT.rglob("*") if p.is_file()}
    for rel in sorted(on_disk - set(files)):
        problems.append(f"unexpected file {rel}")
    for rel, (data, _mode) in sorted(files.items()):
        p = OUT / rel
        if not p.is_file():
            problems.append(f"missing file {rel}")
        elif p.read_bytes() != data:
            problems.append(f"stale file {rel} (re-run scripts/gen_demo.py)")
    return problems


def build():
    for fn in ("L0-legacy", "C8-collation", "C6-cart-refactor", "X4-index", "C4-stripe-failed", "C3-get-user-name",
               "X5-healthcheck", "X1-mysql-failed", "C9-archive", "C10-backup", "C1-mysql-access", "C2-deploy-crlf",
               "X2-payments", "C5-stripe-team", "X6-jwt", "C11-ci-encoding", "X3-bom-migrations", "C7-docs", "C12-release",
               "X7-api-docs", "X8-phpunit", "C13-sdk-question"):
        fn() if callable(fn) else replay(fn, OUTPUT)
    gen_demo_agents.build(OUTPUT)


def check() -> list[str]:
    """Validate the files on disk. Returns a list of problems (empty = fine)."""
    problems = []
    total = 0
    broken = []
    claude_main, codex_main, sub_files, other_main = [], [], [], []
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            total += p.stat().st_size
    for p in sorted(OUT.rglob("*.jsonl")):
        rel = p.relative_to(OUT).as_posix()
        if rel.split("/")[0] in ("gemini", "pi", "copilot"):
            other_main.append(rel)
            continue
        if rel.startswith("claude/"):
            (sub_files if "/agent-" in rel else claude_main).append(rel)
        else:
            codex_main.append(rel)
        data = p.read_bytes()
        if not data.endswith(b"\n"):
            problems.append(f"{rel}: no trailing newline")
        recs = []
        for i, raw in enumerate(data.split(b"\n")[:-1], 1):
            try:
                recs.append(json.loads(raw.decode("utf-8")))
            except Exception:
                broken.append((rel, i))
                continue
        # uuid chains
        uuids = {r["uuid"] for r in recs if isinstance(r, dict) and r.get("uuid")}
        if rel.startswith("claude/"):
            for r in recs:
                if r.get("parentUuid") and r["parentUuid"] not in uuids:
                    problems.append(f"{rel}: dangling parentUuid {r['parentUuid']}")
                if "cwd" in r and not r["cwd"].startswith(DEMO + "/repos/"):
                    problems.append(f"{rel}: cwd without placeholder: {r['cwd']}")
                if r.get("timestamp") and not ("2026-09-01" <= r["timestamp"][:10] <= "2026-11-20"):
                    problems.append(f"{rel}: timestamp out of range {r['timestamp']}")
            ids_use = set()
            ids_res = set()
            for r in recs:
                c = (r.get("message") or {}).get("content") if isinstance(r.get("message"), dict) else None
                if isinstance(c, list):
                    for b in c:
                        if b.get("type") == "tool_use":
                            ids_use.add(b["id"])
                        if b.get("type") == "tool_result":
                            ids_res.add(b["tool_use_id"])
            if ids_use != ids_res:
                problems.append(f"{rel}: unpaired tool ids {sorted(ids_use ^ ids_res)}")
            sids = {r.get("sessionId") for r in recs if r.get("sessionId")}
            if len(sids) != 1:
                problems.append(f"{rel}: sessionIds {sids}")
            expect_dir = enc(next(r["cwd"] for r in recs if "cwd" in r))
            if f"claude/projects/{expect_dir}/" not in rel:
                problems.append(f"{rel}: project dir != encoded cwd {expect_dir}")
        else:
            first = recs[0]
            cwd = first.get("payload", {}).get("cwd") if "payload" in first else None
            if cwd is not None and not cwd.startswith(DEMO + "/repos/"):
                problems.append(f"{rel}: codex cwd {cwd}")
            calls = {r["payload"]["call_id"] for r in recs if r.get("type") == "response_item"
                     and r["payload"].get("type") in ("function_call", "custom_tool_call")}
            calls |= {r["call_id"] for r in recs if r.get("type") in ("function_call", "custom_tool_call")}
            outs = {r["payload"]["call_id"] for r in recs if r.get("type") == "response_item"
                    and r["payload"].get("type") in ("function_call_output", "custom_tool_call_output")}
            outs |= {r["call_id"] for r in recs if r.get("type") in ("function_call_output", "custom_tool_call_output")}
            if calls != outs:
                problems.append(f"{rel}: unpaired calls {calls ^ outs}")
        text = data.decode("utf-8", "replace")
        if "/home/" in text.replace("/home/backup/.aws", "") or "/Users/" in text:
            problems.append(f"{rel}: real-looking absolute path")
    expected_broken = 2
    if len(broken) != expected_broken:
        problems.append(f"expected {expected_broken} unparsable lines, found {broken}")
    if len(claude_main) != 13:
        problems.append(f"claude main sessions: {len(claude_main)}")
    if len(codex_main) != 9:
        problems.append(f"codex sessions: {len(codex_main)}")
    if len(other_main) != 3:
        problems.append(f"other agents' sessions: {len(other_main)}")
    problems += gen_demo_agents.check(OUT)
    for p in sorted(OUT.rglob("*.meta.json")):
        json.loads(p.read_text("utf-8"))
    # canaries: present in the world, absent from skills/agents/README-free zones
    everything = b"".join(p.read_bytes() for p in OUT.rglob("*") if p.is_file() and p.name != "README.md")
    for kind, _, sub in CANARIES:
        if sub.encode("utf-8") not in everything:
            problems.append(f"canary {kind} not planted")
        for p in list((OUT / "skills").rglob("*")) + list((OUT / "agents").rglob("*")):
            if p.is_file() and sub.encode("utf-8") in p.read_bytes():
                problems.append(f"canary {kind} leaked into {p}")
    # skill uses
    got = count_skill_uses()
    if got:
        key_of_path = {s["path"]: s["key"] for s in SESSIONS}
        for a in SUBAGENTS:
            key_of_path.setdefault(a["path"], a["key"].split("/")[0])
        flat = {}
        for path, uses in got.items():
            for skill, n in uses.items():
                flat[(key_of_path[path], skill)] = flat.get((key_of_path[path], skill), 0) + n
        want = {}
        for (k, _actor), uses in EXPECTED_SKILL_USES.items():
            for skill, n in uses.items():
                want[(k, skill)] = want.get((k, skill), 0) + n
        if flat != want:
            problems.append(f"skill uses {flat} != expected {want}")
    if total > 1_500_000:
        problems.append(f"world too large: {total} bytes")
    print(f"checked: {len(claude_main)} claude main + {len(sub_files)} claude child files, {len(codex_main)} codex "
          f"rollouts, {len(broken)} planted broken lines {broken}, {total} bytes")
    return problems


def main():
    global OUT
    if "--out" in sys.argv:  # write (or check) another directory instead of fixtures/demo
        OUT = Path(sys.argv[sys.argv.index("--out") + 1]).resolve()
    build()
    files = render()
    probs = []
    if "--check" in sys.argv:
        probs += compare(files)
    else:
        write_all(files)
        print(f"wrote {OUT}: {len(SESSIONS)} sessions, {len(FILES)} jsonl files, {len(files)} files")
    probs += check()
    for p in probs:
        print("PROBLEM:", p)
    sys.exit(1 if probs else 0)


if __name__ == "__main__":
    main()
