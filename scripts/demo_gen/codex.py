"""The Codex rollout writer: one `Codex` per rollout, in three styles: "legacy" (pre-envelope),
"old" (0.4x envelopes) and "new" (0.13x envelopes)."""

from __future__ import annotations

from datetime import timedelta

from .diffs import apply_patch_add, apply_patch_update, unified
from .ids import DEMO, MSK, call_id, dumps, encrypted, hexof, small_int, ts, uuid7_of


BASE_INSTRUCTIONS = ("You are Codex, a coding agent based on GPT-5. You and the user share the same workspace "
                     "and collaborate to achieve the user's goals. [base instructions trimmed for the demo world]")


class Codex:
    """Writes one Codex rollout. `style` is "old" (0.4x), "new" (0.13x) or "legacy" (pre-envelope).
    `skills` is the world's skill catalog (name -> {"short", ...}, in listing order), set by the driver."""

    skills: dict = {}

    def __init__(self, sid, cwd, cli_version, start, *, style="new", originator="codex_cli_rs", model=None,
                 branch="main", repo=None, label=None, effort="medium"):
        self.sid, self.cwd, self.cli_version, self.t = sid, cwd, cli_version, start
        self.start = start
        self.style = style
        self.originator = originator
        self.model = model or ("gpt-5.5" if style == "new" else "gpt-5-codex")
        self.branch = branch
        self.repo = repo
        self.label = label or sid
        self.lines = []
        self.n = 0
        self.turn_id = None
        self.turn_start = None
        self.last_msg = ""
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
                      "total_tokens": 0}
        self.effort = effort

    def tick(self, sec=1.0):
        self.t += timedelta(seconds=sec)
        return ts(self.t)

    def key(self, what):
        self.n += 1
        return f"{self.label}:{what}:{self.n}"

    def env(self, typ, payload, sec=0.3):
        stamp = self.tick(sec)
        if self.style == "legacy":
            self.lines.append(payload)
        else:
            self.lines.append({"timestamp": stamp, "type": typ, "payload": payload})

    def item(self, payload, sec=0.3):
        self.env("response_item", payload, sec)

    def event(self, payload, sec=0.05):
        if self.style == "legacy":
            return
        self.env("event_msg", payload, sec)

    # -- session start ---------------------------------------------------------------------------
    def open(self, git_hash):
        git = {"commit_hash": git_hash, "branch": self.branch,
               "repository_url": self.repo or f"git@git.example.com:demo/{self.cwd.rsplit('/', 1)[-1]}.git"}
        if self.style == "legacy":
            self.lines.append({"id": self.sid, "timestamp": ts(self.t), "instructions": None, "git": git})
            self.lines.append({"record_type": "state"})
            return
        if self.style == "old":
            payload = {"id": self.sid, "timestamp": ts(self.t), "cwd": self.cwd, "originator": self.originator,
                       "cli_version": self.cli_version, "instructions": None, "source": "cli", "git": git}
        else:
            payload = {"id": self.sid, "timestamp": ts(self.t), "cwd": self.cwd, "originator": self.originator,
                       "cli_version": self.cli_version, "source": "cli", "thread_source": "user",
                       "model_provider": "openai", "base_instructions": {"text": BASE_INSTRUCTIONS}, "git": git}
        self.lines.append({"timestamp": ts(self.t + timedelta(milliseconds=12)), "type": "session_meta",
                           "payload": payload})
        self.t += timedelta(milliseconds=15)

    def env_context(self):
        local = self.t.astimezone(MSK)
        if self.style == "new":
            text = (f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
                    f"  <current_date>{local:%Y-%m-%d}</current_date>\n  <timezone>Europe/Moscow</timezone>\n"
                    f"</environment_context>")
        else:
            text = (f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
                    f"  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
                    f"  <shell>bash</shell>\n</environment_context>")
        msg = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        if self.style == "legacy":
            msg = {"type": "message", "id": None, "role": "user", "content": [{"type": "input_text", "text": text}]}
        self.item(msg, 0.0)

    def developer(self, skills_listing=True):
        text = ("<permissions instructions>\nFilesystem sandboxing: workspace-write. Network access is restricted. "
                "Approval policy: on-request.\n</permissions instructions>")
        if skills_listing:
            text += ("\n\n## Skills\nA skill is a set of local instructions stored in a `SKILL.md` file. "
                     "Available skills:\n" + "\n".join(
                         f"- {n}: {s['short']} (file: {DEMO}/skills/{n}/SKILL.md)" for n, s in self.skills.items())
                     + "\nTo use a skill, open its SKILL.md and follow it.")
        self.item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}, 0.0)

    def turn_context(self):
        local = self.t.astimezone(MSK)
        if self.style == "old":
            payload = {"cwd": self.cwd, "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"},
                       "model": self.model, "effort": self.effort, "summary": "auto"}
        else:
            payload = {"turn_id": self.turn_id, "cwd": self.cwd, "current_date": f"{local:%Y-%m-%d}",
                       "timezone": "Europe/Moscow", "approval_policy": "on-request",
                       "sandbox_policy": {"type": "workspace-write", "writable_roots": [], "network_access": False,
                                          "exclude_tmpdir_env_var": False, "exclude_slash_tmp": False},
                       "model": self.model, "personality": "pragmatic",
                       "collaboration_mode": {"mode": "default", "settings": {"model": self.model,
                                                                               "reasoning_effort": self.effort,
                                                                               "developer_instructions": None}},
                       "realtime_active": False, "effort": self.effort, "summary": "auto"}
        self.env("turn_context", payload, 0.0)

    def user(self, text, *, first=False, skills_listing=True):
        """Start a turn with a message a person typed."""
        if not first:
            self.t += timedelta(seconds=small_int(f"{self.label}:think:{self.n}", 20, 120))
        self.turn_id = uuid7_of(self.label + f":turn:{self.n}", self.t)
        self.turn_start = self.t
        self.n += 1
        if self.style == "new":
            self.event({"type": "task_started", "turn_id": self.turn_id, "started_at": int(self.t.timestamp()),
                        "model_context_window": 258400, "collaboration_mode_kind": "default"}, 0.004)
            if first:
                self.developer(skills_listing)
                self.env_context()
            self.turn_context()
            self.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, 0.008)
            self.event({"type": "user_message", "message": text, "images": [], "local_images": [],
                        "text_elements": []}, 0.0)
        elif self.style == "old":
            if first:
                self.env_context()
            self.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}, 0.0)
            self.event({"type": "user_message", "message": text, "kind": "plain"}, 0.0)
            self.turn_context()
        else:  # legacy
            if first:
                self.env_context()
            self.item({"type": "message", "id": None, "role": "user",
                       "content": [{"type": "input_text", "text": text}]})

    def reason(self, summary):
        k = self.key("rs")
        self.event({"type": "agent_reasoning", "text": summary}, 2.2)
        if self.style != "legacy":
            self.tokens(k)
        payload = {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "content": None,
                   "encrypted_content": encrypted(k)}
        if self.style == "legacy":
            payload = {"type": "reasoning", "id": "rs_" + hexof(k, 40),
                       "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": encrypted(k)}
        self.item(payload, 0.01)

    def tokens(self, k):
        inp = small_int(k + "i", 3000, 40000)
        cached = inp - small_int(k + "u", 200, 2500)
        out = small_int(k + "o", 40, 1200)
        rs = small_int(k + "r", 0, out)
        last = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": rs, "total_tokens": inp + out}
        for kk in self.total:
            self.total[kk] += last[kk]
        if self.style == "new":
            rl = {"limit_id": "codex", "limit_name": None,
                  "primary": {"used_percent": float(small_int(k, 3, 40)), "window_minutes": 300,
                              "resets_at": int(self.t.timestamp()) + 9000},
                  "secondary": {"used_percent": float(small_int(k + "s", 1, 20)), "window_minutes": 10080,
                                "resets_at": int(self.t.timestamp()) + 400000},
                  "credits": None, "plan_type": "pro", "rate_limit_reached_type": None}
        else:
            rl = {"primary_used_percent": float(small_int(k, 1, 30)), "secondary_used_percent": 4.0,
                  "primary_to_secondary_ratio_percent": 0.0, "primary_window_minutes": 299,
                  "secondary_window_minutes": 10079}
        self.event({"type": "token_count", "info": {"total_token_usage": dict(self.total), "last_token_usage": last,
                                                    "model_context_window": 258400 if self.style == "new" else 272000},
                    "rate_limits": rl}, 0.02)

    def token_count(self):
        """A `token_count` event on its own (after an interrupted tool call)."""
        self.tokens(self.key("tk"))

    def shell(self, cmd, output="", *, exit_code=0, stderr="", workdir=None, parsed=None, secs=0.2):
        k = self.key("sh")
        cid = call_id(k)
        wd = workdir or self.cwd
        if self.style == "new":
            self.item({"type": "function_call", "name": "exec_command",
                       "arguments": dumps({"cmd": cmd, "workdir": wd, "yield_time_ms": 10000,
                                           "max_output_tokens": 6000}), "call_id": cid}, 1.1)
            agg = output + (stderr if stderr else "")
            self.event({"type": "exec_command_end", "call_id": cid, "process_id": str(small_int(k, 20000, 60000)),
                        "turn_id": self.turn_id, "command": ["/bin/bash", "-lc", cmd], "cwd": wd,
                        "parsed_cmd": parsed or [{"type": "unknown", "cmd": cmd}], "source": "unified_exec",
                        "stdout": output, "stderr": stderr, "aggregated_output": agg, "exit_code": exit_code,
                        "duration": {"secs": int(secs), "nanos": int((secs % 1) * 1e9)},
                        "status": "completed" if exit_code == 0 else "failed"}, secs)
            body = (f"Chunk ID: {hexof(k, 6)}\nWall time: {secs:.4f} seconds\nProcess exited with code {exit_code}\n"
                    f"Original token count: {max(1, len(agg) // 4)}\nOutput:\n{agg}")
            self.item({"type": "function_call_output", "call_id": cid, "output": body}, 0.01)
        else:
            args = dumps({"command": ["bash", "-lc", cmd], "workdir": wd, "timeout_ms": 120000})
            fc = {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid}
            if self.style == "legacy":
                fc = {"type": "function_call", "id": "fc_" + hexof(k, 40), "name": "shell", "arguments": args,
                      "call_id": cid}
            self.item(fc, 1.1)
            out = output + (stderr if stderr else "")
            self.item({"type": "function_call_output", "call_id": cid,
                       "output": dumps({"output": out, "metadata": {"exit_code": exit_code,
                                                                    "duration_seconds": round(secs, 1)}})}, secs)
        return cid

    def patch(self, changes, *, ok=True):
        """changes: list of (rel, old_or_None, new) — None means Add File."""
        k = self.key("patch")
        cid = call_id(k)
        texts = []
        ev_changes = {}
        summary = []
        for rel, old, new in changes:
            p = f"{self.cwd}/{rel}"
            if old is None:
                texts.append(apply_patch_add(rel, new))
                ev_changes[p] = {"type": "add", "content": new}
                summary.append(f"A {rel}")
            else:
                texts.append(apply_patch_update(rel, old, new))
                ev_changes[p] = {"type": "update", "unified_diff": unified(old, new), "move_path": None}
                summary.append(f"M {rel}")
        text = texts[0] if len(texts) == 1 else (
            "*** Begin Patch\n" + "".join(t[len("*** Begin Patch\n"):-len("*** End Patch")] for t in texts)
            + "*** End Patch")
        self.item({"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch",
                   "input": text}, 1.4)
        stdout = "Success. Updated the following files:\n" + "\n".join(summary) + "\n"
        if self.style == "new":
            self.event({"type": "patch_apply_end", "call_id": cid, "turn_id": self.turn_id, "stdout": stdout,
                        "stderr": "", "success": ok, "changes": ev_changes, "status": "completed"}, 0.1)
            self.item({"type": "custom_tool_call_output", "call_id": cid,
                       "output": f"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n{stdout}"}, 0.01)
        else:
            self.item({"type": "custom_tool_call_output", "call_id": cid,
                       "output": dumps({"output": stdout, "metadata": {"exit_code": 0, "duration_seconds": 0.0}})},
                      0.1)
        return cid

    def say(self, text, *, final=True):
        self.last_msg = text
        phase = "final_answer" if final else "commentary"
        if self.style == "new":
            self.event({"type": "agent_message", "message": text, "phase": phase, "memory_citation": None}, 2.0)
            self.item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}],
                       "phase": phase}, 0.001)
        elif self.style == "old":
            self.event({"type": "agent_message", "message": text}, 2.0)
            self.item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
                      0.001)
        else:
            self.item({"type": "message", "id": None, "role": "assistant",
                       "content": [{"type": "output_text", "text": text}]}, 2.0)
        if final and self.style != "legacy":
            self.tokens(self.key("tk"))

    def complete(self):
        if self.style == "new":
            dur = int((self.t - self.turn_start).total_seconds() * 1000)
            self.event({"type": "task_complete", "turn_id": self.turn_id, "last_agent_message": self.last_msg,
                        "completed_at": int(self.t.timestamp()), "duration_ms": dur,
                        "time_to_first_token_ms": small_int(self.turn_id, 900, 4000)}, 0.02)
        elif self.style == "legacy":
            self.lines.append({"record_type": "state"})

    def abort(self, reason="interrupted"):
        if self.style == "new":
            self.event({"type": "turn_aborted", "turn_id": self.turn_id, "reason": reason}, 0.5)
        else:
            self.event({"type": "turn_aborted", "reason": reason}, 0.5)

    def filename(self):
        local = self.start.astimezone(MSK)
        return (f"codex/sessions/{local:%Y/%m/%d}/rollout-{local:%Y-%m-%dT%H-%M-%S}-{self.sid}.jsonl")
