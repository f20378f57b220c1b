"""Sessions of the demo world written by agents other than Claude Code and Codex (issues 18, 35).

Imported by gen_demo.py (deterministic, no clock): one Gemini CLI, one Pi, one Copilot CLI, one
Cline and one OpenHands CLI session on the same piece of work in repos/webshop (the newsletter
unsubscribe link), so one question ("newsletter unsubscribe") returns evidence from five agents.
Their content is data (scripts/demo_world/sessions/<agent>-newsletter.toml); the writer of each
format is demo_gen/<agent>.py, in the agents' exact on-disk formats (see docs/formats/); cwds use
the @DEMO@ placeholder. Gemini, Pi and Copilot write JSONL (lines); Cline's task folder and
OpenHands' conversation folder are JSON documents written whole, compact as `JSON.stringify` and
pydantic's `model_dump_json` write them, with no trailing newline.
"""

import json

from demo_gen.replay import replay
from demo_gen.world import WORKSPACES, load

CWD = WORKSPACES["webshop"]
# Where Cline's store sits in the world, laid out as on a real machine (src/demo.rs names the roots).
CLINE_EXT_DIR = load("sessions/cline-newsletter.toml")["store"]


def build(out, sessions: list[str]):
    """The sessions (world.toml's `other_agents`), into `out` (demo_gen.replay.Output): JSONL
    lines, and the files that are not JSONL lines (the Gemini slot's project root, Cline's task
    folder and its history index, OpenHands' conversation folder). The README's section on them is
    in scripts/demo_world/world-README.md."""
    for name in sessions:
        replay(name, out)


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
