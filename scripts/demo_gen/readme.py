"""fixtures/demo/README.md: the template scripts/demo_world/world-README.md with its `@{NAME}`s
filled in from what the sessions wrote (tables, counts, line numbers, session ids)."""

from __future__ import annotations

from .replay import Output
from .world import CANARIES, CANARY_WHERE, DATA, SKILL_LIST, fill, load


def find_line(lines: list, pred) -> int:
    for i, r in enumerate(lines, 1):
        if pred(r):
            return i
    raise KeyError("no such line")


def record_kind(r, legacy: bool) -> str:
    """The README's `record type (/ subtype)` of one JSONL line."""
    if not isinstance(r, dict):
        return "(broken line)"
    if legacy:
        return ("legacy: record_type=" + r["record_type"] if "record_type" in r
                else "legacy: header" if "instructions" in r else "legacy: bare " + r.get("type", "?"))
    if r.get("type") in ("response_item", "event_msg"):
        return f"{r['type']}/{r['payload'].get('type')}"
    if r.get("type") in ("system", "progress", "attachment"):
        sub = r.get("subtype") or (r.get("data") or {}).get("type") or (r.get("attachment") or {}).get("type")
        return f"{r['type']}/{sub}"
    return r.get("type")


def values(out: Output, skill_uses: list[dict], other_agents: list[str]) -> dict:
    sessions, files = out.sessions, out.files
    by_key = {s["key"]: s for s in sessions}
    v = {"n_sessions": str(len(sessions)),
         "n_claude": str(sum(1 for s in sessions if s["tool"] == "claude")),
         "n_codex": str(sum(1 for s in sessions if s["tool"] == "codex")),
         "n_children": str(len([s for s in out.subagents if s["agent_id"] != "—"])),
         "total_lines": str(sum(len(lines) for lines in files.values()))}
    v["session_rows"] = "\n".join(
        f"| {s['key']} | {s['tool']} {s['version']} | `{s['workspace']}` | `{s['sid']}` | {s['date']} | {s['who']} "
        f"| **{s['outcome']}** | {s['lang']} | {s['facts']} |" for s in sorted(sessions, key=lambda s: s["date"]))
    v["session_files"] = "\n".join(f"- {s['key']}: `{s['path']}`"
                                   for s in sorted(sessions, key=lambda s: (s["key"][0], int(s["key"][1:]))))
    v["child_rows"] = "\n".join(
        f"| {a['key']} | {a['kind']} | `{a['name']}` | `{a['agent_id']}` | {a['skill_uses']} | `{a['path']}` | "
        f"{a['facts']} |" for a in out.subagents)
    rows = []
    for s in SKILL_LIST:
        users = [f"{u['session']}: {u['actor']} ×{u['uses']}" for u in skill_uses if u["skill"] == s["name"]]
        rows.append(f"| `{s['name']}` | {s['readme']} | {'; '.join(users) if users else '— (catalog only)'} |")
    v["skill_rows"] = "\n".join(rows)
    v["canary_rows"] = "\n".join(f"| {kind} | `{planted}` | `{sub}` | {CANARY_WHERE[kind]} |"
                                 for kind, planted, sub in CANARIES)
    for key in ("C1", "C2", "C3"):
        v["sid_" + key] = by_key[key]["sid"]
    for key in ("C2", "C3", "C4", "C7", "C10"):
        v["path_" + key] = by_key[key]["path"]
    lines = lambda key: files[by_key[key]["path"]]  # noqa: E731
    v["torn"] = str(find_line(lines("C7"), lambda r: isinstance(r, str)))
    v["torn_next"] = str(int(v["torn"]) + 1)
    v["nul"] = str(find_line(lines("C4"), lambda r: isinstance(r, bytes)))
    v["atis"] = str(find_line(lines("C3"), lambda r: isinstance(r, dict) and r.get("type") == "atis-latch"))
    v["null"] = str(find_line(lines("C10"), lambda r: isinstance(r, dict) and r.get("type") == "assistant"
                              and r["message"].get("content") is None))
    v["compact"] = str(find_line(lines("C2"), lambda r: isinstance(r, dict) and r.get("subtype") == "compact_boundary"))
    counts = {}
    legacy = by_key["L0"]["path"]
    for path, recs in files.items():
        for r in recs:
            k = record_kind(r, path == legacy)
            counts[k] = counts.get(k, 0) + 1
    v["count_rows"] = "\n".join(f"| `{k}` | {counts[k]} |" for k in sorted(counts, key=lambda k: (-counts[k], str(k))))
    docs = {name.split("-")[0]: load(f"sessions/{name}.toml") for name in other_agents}
    v.update(gemini_sid=docs["gemini"]["session_id"], pi_sid=docs["pi"]["session_id"],
             copilot_sid=docs["copilot"]["session_id"], cline_store=docs["cline"]["store"],
             cline_task=docs["cline"]["task"], openhands_id=docs["openhands"]["id"])
    return v


def render(out: Output, skill_uses: list[dict], other_agents: list[str]) -> str:
    template = (DATA / "world-README.md").read_text("utf-8")
    return fill(template, values(out, skill_uses, other_agents))
