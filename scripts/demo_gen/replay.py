"""Replays a session's data file (scripts/demo_world/sessions/<name>.toml) through the writer of its
agent (`agent = "claude"`, "codex", "gemini", "pi", "copilot", "cline" or "openhands").

A session file holds the session's header (`key`, `id` — the label its ids derive from —,
`workspace`, `version`, `start`, …), its row in the README (`[readme]`, `[[readme.children]]`), the
texts it quotes more than once (`[text]`), line numbers and diffs it quotes (`[line]`, `[diff]`),
and its script: `[[step]]`s in order, each `do = "<what>"` plus that step's fields. A step is done by
the session's root actor unless `by` names another (a subagent, a teammate, the compaction
summarizer). Every string may quote `@{NAME}`: a text of the world (world.TEXTS: repository files
and their versions, canaries, workspaces, `CHECK`), the session id (`sid`) or the session's own
[text], [line] and [diff] entries.

Claude steps are the writer's methods (prompt, say, read, bash, edit, write, grep, skill, injected,
turn_end, finish, …; the step's fields are the method's arguments) and `call` (any tool: `tool`,
`input`, `content`, `result`), plus the steps that make children and move clocks:
  spawn        a Task/Agent tool_use; the child `as` (agent id `agent`, stored `file` = "subagents",
               "flat" or "inline", `.meta.json` when `meta`, optional `model`) gets `input.prompt`
  spawn_result the tool_result of the spawn `of` a child, when the child is done
  open         a child without a spawn (a teammate, the /compact summarizer): starts at the mark
               `at` or `back` seconds before its parent's clock, `team` to carry the team name,
               `prompt` its first line, `meta` its .meta.json as written
  mark         remembers the actor's clock and line count under `name`
  clock        sets the actor's clock to `after` another actor's plus `plus` seconds, or to at least
               the mark `at_least` plus `plus` seconds
  team         sets (`name`) or clears the team name the actor's lines carry
  tear         inserts a torn line before the line marked `at` (its first `chars` characters)
Claude's writer also has steps for the planted oddities: summary (a 2.0.x title record),
compact_boundary, assistant_null (content null), nul_run (a line of NUL bytes).
Codex steps are the writer's methods: user, reason, shell, say, patch (`changes`: `file`, `old`
— absent for an added file —, `new`), token_count, abort, complete.

The other agents' sessions (`agent = "gemini"`, "pi", "copilot", "cline", "openhands") are one
writer each too (demo_gen/<agent>.py): their steps (Copilot: `[[event]]`s) are that writer's
methods, and the header fields name the files (see each data file).
"""

from __future__ import annotations

import re
from datetime import timedelta

from .claude import Claude, subagent
from .cline import Cline
from .codex import Codex
from .copilot import Copilot
from .diffs import hunks
from .gemini import Gemini
from .ids import DEMO, hexof, ts, utc, uuid4_of, uuid7_of
from .openhands import OpenHands
from .pi import Pi
from .world import TEXTS, WORKSPACES, fill, load

CLAUDE_STEPS = {"session_start", "skill_listing", "prompt", "say", "skill", "read", "bash", "edit", "write", "grep",
                "glob", "injected", "turn_end", "finish", "meta", "summary", "queue", "tick", "compact_boundary",
                "assistant_null", "nul_run"}
CODEX_STEPS = {"user", "reason", "shell", "say", "token_count", "abort", "complete"}
# the fields of the steps the driver does itself (a writer method rejects unknown arguments itself)
DRIVER_STEPS = {"spawn": {"tool", "as", "agent", "file", "meta", "model", "text", "think", "input"},
                "spawn_result": {"of", "progress"},
                "open": {"as", "agent", "at", "back", "team", "prompt", "meta", "model"},
                "mark": {"name"}, "clock": {"after", "at_least", "plus"}, "team": {"name"}, "tear": {"at", "chars"},
                "call": {"tool", "input", "content", "result", "is_error", "think", "text", "hooks", "key", "delay",
                         "caller"}}


class Output:
    """What the sessions write: JSONL files (records, raw lines), .meta.json sidecars, README rows."""

    def __init__(self):
        self.files: dict[str, list] = {}       # relative path -> records (dict) / raw lines (str) / raw bytes
        self.json_files: dict[str, dict] = {}  # relative path -> JSON document
        self.raw: dict[str, bytes] = {}        # relative path -> bytes written as they are
        self.sessions: list[dict] = []         # README's session table
        self.subagents: list[dict] = []        # README's child table

    def register(self, key, tool, cwd, path, sid, start, version, row):
        self.sessions.append({"key": key, "tool": tool, "workspace": cwd.replace(DEMO + "/", ""), "path": path,
                              "sid": sid, "date": ts(start)[:10], "who": row["who"], "outcome": row["outcome"],
                              "lang": row["lang"], "facts": row["facts"], "version": version})


def enc(cwd: str) -> str:
    """A Claude project directory's name: the cwd with every non-alphanumeric character as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return i
    raise KeyError(needle)


def names_of(doc: dict, sid: str) -> dict:
    """What the session's strings may quote: the world's texts, `sid`, and its [line], [diff], [text]."""
    names = dict(TEXTS, sid=sid)
    for name, (text, needle) in doc.get("line", {}).items():
        names[name] = str(line_of(TEXTS[text], needle))
    for name, (old, new) in doc.get("diff", {}).items():
        names[name] = "".join(f"{x}\n" for h in hunks(TEXTS[old], TEXTS[new]) for x in h["lines"])
    for name, text in doc.get("text", {}).items():
        names[name] = fill(text, names)
    return names


def replay(name: str, out: Output):
    doc = load(f"sessions/{name}.toml")
    {"claude": claude, "codex": codex, "gemini": gemini, "pi": pi, "copilot": copilot, "cline": cline,
     "openhands": openhands}[doc["agent"]](doc, out)


def claude(doc: dict, out: Output):
    start = utc(doc["start"])
    sid = uuid4_of(doc["id"])
    cwd = WORKSPACES[doc["workspace"]]
    root = Claude(sid, cwd, doc["version"], doc["branch"], start, slug=doc.get("slug"),
                  entrypoint=doc.get("entrypoint", "cli"), perm=doc.get("perm", "default"))
    names = names_of(doc, sid)
    project = f"claude/projects/{enc(cwd)}"
    main_path = f"{project}/{sid}.jsonl"
    actors = {"root": root}
    children = {}  # actor name -> {"actor", "agent", "file", "tuid", "input", "meta"}
    marks = {}
    for step in doc["step"]:
        step = fill(step, names)
        who = actors[step.pop("by", "root")]
        op = step.pop("do")
        if set(step) - DRIVER_STEPS.get(op, set(step)):
            raise ValueError(f"{doc['key']}: step {op!r} has no field {sorted(set(step) - DRIVER_STEPS[op])}")
        if op == "spawn":
            inp = step["input"]
            tuid = who.spawn(step["tool"], inp, None, text=step.get("text"), think=step.get("think"))
            child = subagent(who, step["agent"], model=step.get("model"), inline=step.get("file") == "inline")
            child.prompt(inp["prompt"])
            meta = {"agentType": inp["subagent_type"], "description": inp["description"], "toolUseId": tuid,
                    "spawnDepth": 1} if step.get("meta") else None
            actors[step["as"]] = child
            children[step["as"]] = {"actor": child, "agent": step["agent"], "file": step.get("file", "subagents"),
                                    "tuid": tuid, "input": inp, "meta": meta}
        elif op == "spawn_result":
            ch = children[step["of"]]
            if ch["file"] == "inline":  # the sidechain's lines sit in this file: continue after the spawn
                who.last = who.tool_line[ch["tuid"]]
                who.t = ch["actor"].t
            who.spawn_result(ch["tuid"], ch["input"], ch["actor"], progress=step.get("progress", True))
        elif op == "open":
            at = marks[step["at"]][0] if "at" in step else who.t - timedelta(seconds=step.get("back", 0))
            child = subagent(who, step["agent"], start=at, model=step.get("model"),
                             team=who.team if step.get("team") else None)
            if "prompt" in step:
                child.prompt(step["prompt"])
            actors[step["as"]] = child
            children[step["as"]] = {"actor": child, "agent": step["agent"], "file": "subagents",
                                    "meta": step.get("meta")}
        elif op == "mark":
            marks[step["name"]] = (who.t, len(who.lines))
        elif op == "clock":
            plus = timedelta(seconds=step.get("plus", 0))
            if "after" in step:
                who.t = actors[step["after"]].t + plus
            else:
                who.t = max(who.t, marks[step["at_least"]][0] + plus)
        elif op == "team":
            who.team = step.get("name")
        elif op == "tear":
            who.tear(marks[step["at"]][1], step["chars"])
        elif op == "call":
            who.call(step.pop("tool"), step.pop("input"), step.pop("content"), step.pop("result"), **step)
        elif op in CLAUDE_STEPS:
            getattr(who, op)(**step)
        else:
            raise ValueError(f"{doc['key']}: unknown step {op!r}")
    out.files[main_path] = root.lines
    paths = {}
    for name, ch in children.items():
        if ch["file"] == "inline":
            paths[name] = main_path
            continue
        where = f"{project}/{sid}/subagents" if ch["file"] == "subagents" else project
        paths[name] = f"{where}/agent-{ch['agent']}.jsonl"
        out.files[paths[name]] = ch["actor"].lines
        if ch["meta"]:
            out.json_files[paths[name].replace(".jsonl", ".meta.json")] = ch["meta"]
    row = doc["readme"]
    out.register(doc["key"], "claude", cwd, main_path, sid, start, root.version, row)
    for c in row.get("children", []):
        ch = children[c["actor"]]
        out.subagents.append({"key": c["key"], "parent": doc["key"], "path": paths[c["actor"]],
                              "agent_id": "—" if ch["file"] == "inline" else ch["agent"], "kind": c["kind"],
                              "name": c["name"], "skill_uses": c.get("skill_uses", 0), "facts": c["facts"]})


def codex(doc: dict, out: Output):
    key, style = doc["key"], doc["style"]
    start = utc(doc["start"])
    sid = uuid4_of(doc["id"]) if style == "legacy" else uuid7_of(doc["id"], start)
    cwd = WORKSPACES[doc["workspace"]]
    x = Codex(sid, cwd, doc.get("version", ""), start, style=style, originator=doc.get("originator", "codex_cli_rs"),
              branch=doc.get("branch", "main"), label=doc["id"])
    x.open(hexof("git:" + key, 40))
    names = names_of(doc, sid)
    for step in doc["step"]:
        step = fill(step, names)
        op = step.pop("do")
        if op == "patch":
            x.patch([(c["file"], c.get("old"), c["new"]) for c in step.pop("changes")], **step)
        elif op in CODEX_STEPS:
            getattr(x, op)(**step)
        else:
            raise ValueError(f"{key}: unknown step {op!r}")
    out.files[x.filename()] = x.lines
    out.register(key, "codex", cwd, x.filename(), sid, start,
                 x.cli_version if style != "legacy" else "legacy (pre-0.3x)", doc["readme"])


def steps(doc: dict, writer, allowed: set, sid: str):
    """Each step of a session done by the writer method it names."""
    names = names_of(doc, sid)
    for step in doc["step"]:
        step = fill(step, names)
        op = step.pop("do")
        if op not in allowed:
            raise ValueError(f"{sid}: unknown step {op!r}")
        getattr(writer, op)(**step)
    return names


def gemini(doc: dict, out: Output):
    g = Gemini(doc["session_id"], doc["project_hash"], doc["start"])
    steps(doc, g, {"user", "gemini", "tool_calls", "updated", "summary"}, doc["session_id"])
    chats = f"gemini/tmp/{doc['project']}"
    out.files[f"{chats}/chats/{doc['file']}"] = g.lines
    out.raw[f"{chats}/.project_root"] = (WORKSPACES[doc["workspace"]] + "\n").encode("utf-8")


def pi(doc: dict, out: Output):
    p = Pi(doc["session_id"], doc["start"], WORKSPACES[doc["workspace"]], model=doc["model"],
           provider=doc["provider"], api=doc["api"], usage=doc["usage"], assistant_ms=doc["assistant_ms"])
    steps(doc, p, {"user", "assistant", "tool_result", "session_info"}, doc["session_id"])
    out.files[doc["file"]] = p.lines


def copilot(doc: dict, out: Output):
    c = Copilot()
    names = names_of(doc, doc["session_id"])
    for ev in doc["event"]:
        c.event(**fill(ev, names))
    out.files[f"copilot/session-state/{doc['session_id']}/events.jsonl"] = c.lines


def cline(doc: dict, out: Output):
    c = Cline(doc["task"], doc["model"])
    names = steps(doc, c, {"say", "ask", "api_req", "tool"}, doc["task"])
    out.raw.update(c.files(doc["store"], WORKSPACES[doc["workspace"]], fill(doc["api"], names), doc["metadata"],
                           doc["history"]))


def openhands(doc: dict, out: Output):
    o = OpenHands(WORKSPACES[doc["workspace"]], doc["event_id"], doc["first_event"])
    names = steps(doc, o, {"system", "message", "act", "terminal", "edited", "edit_failed", "finished",
                           "state_update"}, doc["id"])
    conversation_dir = "openhands/conversations/" + doc["id"].replace("-", "")
    names.update(conversation_dir=conversation_dir, last_user_message=o.events[doc["user_event"]]["id"],
                 leaf_event=o.events[-1]["id"])
    out.raw.update(o.files(conversation_dir, fill(doc["state"], names)))
