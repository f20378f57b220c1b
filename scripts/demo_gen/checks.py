"""The checks `scripts/gen_demo.py` runs on the demo world as written on disk: every JSONL line of a
session parses (but the planted broken ones), chains and tool calls pair up, paths use the @DEMO@
placeholder, the canaries are planted where they may be and nowhere else, and the skill uses are the
ones scripts/demo_world/world.toml declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .ids import DEMO
from .replay import Output, enc
from .world import CANARIES

OTHER_JSONL = ("gemini", "pi", "copilot")  # the other agents whose sessions are JSONL


def count_skill_uses(files: dict) -> dict:
    """Skill tool calls in Claude files, SKILL.md reads in Codex rollouts, keyed by file path."""
    out = {}
    for path, lines in files.items():
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


def check(root: Path, out: Output, skill_uses: list[dict]) -> list[str]:
    """Validate the files on disk under `root` against what the sessions wrote (`out`). Returns a
    list of problems (empty = fine)."""
    problems = []
    total = 0
    broken = []
    claude_main, codex_main, sub_files, other_main = [], [], [], []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            total += p.stat().st_size
    for p in sorted(root.rglob("*.jsonl")):
        rel = p.relative_to(root).as_posix()
        if rel.split("/")[0] in OTHER_JSONL:
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
    # as many files and planted broken lines as the sessions wrote
    expected_broken = sum(1 for lines in out.files.values() for r in lines if not isinstance(r, dict))
    if len(broken) != expected_broken:
        problems.append(f"expected {expected_broken} unparsable lines, found {broken}")
    for tool, found in (("claude", claude_main), ("codex", codex_main)):
        want = sum(1 for s in out.sessions if s["tool"] == tool)
        if len(found) != want:
            problems.append(f"{tool} main sessions: {len(found)}, want {want}")
    want = sum(1 for rel in out.files if rel.split("/")[0] in OTHER_JSONL)
    if len(other_main) != want:
        problems.append(f"other agents' sessions: {len(other_main)}, want {want}")
    for p in sorted(root.rglob("*.meta.json")):
        json.loads(p.read_text("utf-8"))
    # canaries: present in the world, absent from skills and agent definitions
    everything = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "README.md")
    for kind, _, sub in CANARIES:
        if sub.encode("utf-8") not in everything:
            problems.append(f"canary {kind} not planted")
        for p in list((root / "skills").rglob("*")) + list((root / "agents").rglob("*")):
            if p.is_file() and sub.encode("utf-8") in p.read_bytes():
                problems.append(f"canary {kind} leaked into {p}")
    # skill uses
    got = count_skill_uses(out.files)
    if got:
        key_of_path = {s["path"]: s["key"] for s in out.sessions}
        for a in out.subagents:
            key_of_path.setdefault(a["path"], a["key"].split("/")[0])
        flat = {}
        for path, uses in got.items():
            for skill, n in uses.items():
                flat[(key_of_path[path], skill)] = flat.get((key_of_path[path], skill), 0) + n
        want = {}
        for u in skill_uses:
            want[(u["session"], u["skill"])] = want.get((u["session"], u["skill"]), 0) + u["uses"]
        if flat != want:
            problems.append(f"skill uses {flat} != expected {want}")
    if total > 1_500_000:
        problems.append(f"world too large: {total} bytes")
    print(f"checked: {len(claude_main)} claude main + {len(sub_files)} claude child files, {len(codex_main)} codex "
          f"rollouts, {len(broken)} planted broken lines {broken}, {total} bytes")
    return problems
