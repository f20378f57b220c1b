"""The Claude Code transcript writer: one `Claude` per main session or subagent file, with a method
per record kind (prompt, assistant blocks, tool call + result, hooks, progress, system lines) and per
tool (Read, Bash, Edit, Write, Grep, Glob, Skill, Task/Agent spawns)."""

from __future__ import annotations

from datetime import timedelta

from .diffs import hunks, nlines, numbered
from .ids import DEMO, dumps, hexof, msg_id, req_id, signature, small_int, toolu_id, ts, uuid4_of


def vtuple(v: str) -> tuple:
    return tuple(int(x) for x in v.split("."))


class Claude:
    """Writes one Claude Code transcript (a main session file or a subagent file).

    `lines` may be shared with a parent builder (era-1 inline sidechains). `skills` is the world's
    skill catalog (name -> {"short", "tools", "body"}, in listing order), set once by the driver."""

    skills: dict = {}

    def __init__(self, sid, cwd, version, branch, start, *, slug=None, entrypoint="cli", model=None,
                 agent_id=None, sidechain=False, team=None, lines=None, perm="default", label=None):
        self.sid, self.cwd, self.version, self.branch = sid, cwd, version, branch
        self.t = start
        self.slug = slug
        self.entrypoint = entrypoint
        self.new = vtuple(version) >= (2, 1, 100)
        self.model = model or ("claude-opus-4-7" if self.new else
                               "claude-opus-4-6" if vtuple(version) >= (2, 1, 0) else "claude-sonnet-4-5-20250929")
        self.agent_id = agent_id
        self.sidechain = sidechain
        self.team = None
        self.lines = lines if lines is not None else []
        self.perm = perm
        self.label = label or (sid + ":" + (agent_id or "main"))
        self.n = 0
        self.last = None
        self.tool_line = {}
        self.tool_calls = 0
        self.tokens = 0
        self.final_text = ""
        self.prompt_id = None
        self.first_time = start
        self.turn_t0 = start
        if team:
            self.team = team

    # -- low level -----------------------------------------------------------------------------
    def uid(self) -> str:
        self.n += 1
        return uuid4_of(f"{self.label}:{self.n}")

    def tick(self, sec: float = 1.0) -> str:
        self.t += timedelta(seconds=sec)
        return ts(self.t)

    def _wrap(self, body: list, tail: list | None = None, parent="__last__") -> dict:
        parent = self.last if parent == "__last__" else parent
        d = {"parentUuid": parent, "isSidechain": self.sidechain}
        if not self.new:
            d.update({"userType": "external", "cwd": self.cwd, "sessionId": self.sid, "version": self.version,
                      "gitBranch": self.branch})
            if self.agent_id:
                d["agentId"] = self.agent_id
            if self.slug:
                d["slug"] = self.slug
            for k, v in body:
                d[k] = v
            for k, v in tail or []:
                d[k] = v
            return d
        if self.agent_id:
            d["agentId"] = self.agent_id
        for k, v in body:
            d[k] = v
        for k, v in tail or []:
            d[k] = v
        d.update({"userType": "external", "entrypoint": self.entrypoint, "cwd": self.cwd, "sessionId": self.sid,
                  "version": self.version, "gitBranch": self.branch})
        if self.slug:
            d["slug"] = self.slug
        if self.team:
            d["teamName"] = self.team
        return d

    def push(self, rec, chain=True):
        self.lines.append(rec)
        if chain and isinstance(rec, dict) and rec.get("uuid"):
            self.last = rec["uuid"]
        return rec

    def usage(self, key: str) -> dict:
        out_t = small_int(key + "o", 8, 900)
        cc = small_int(key + "c", 100, 6000)
        cr = small_int(key + "r", 12000, 90000)
        self.tokens += out_t + cc
        if self.new:
            return {"input_tokens": small_int(key + "i", 1, 9), "cache_creation_input_tokens": cc,
                    "cache_read_input_tokens": cr, "output_tokens": out_t,
                    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                    "service_tier": "standard",
                    "cache_creation": {"ephemeral_1h_input_tokens": cc, "ephemeral_5m_input_tokens": 0},
                    "inference_geo": "not_available", "iterations": [], "speed": "standard"}
        u = {"input_tokens": small_int(key + "i", 1, 9), "cache_creation_input_tokens": cc,
             "cache_read_input_tokens": cr,
             "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
             "output_tokens": out_t, "service_tier": "standard"}
        if vtuple(self.version) >= (2, 1, 0):
            u["inference_geo"] = "global"
        return u

    # -- records with a uuid ---------------------------------------------------------------------
    def prompt(self, text, *, snapshot=True, extra_tail=None, content=None):
        """A prompt a person typed (message.content is a string)."""
        u = self.uid()
        if self.last is not None and not self.sidechain:
            self.tick(small_int(f"{self.label}:think:{self.n}", 25, 140))  # the person reads and types
        if snapshot and not self.sidechain:
            self.snapshot(u)
        stamp = self.tick(2)
        self.turn_t0 = self.t
        if self.new:
            self.prompt_id = uuid4_of(f"{self.label}:prompt:{self.n}")
            body = ([] if self.sidechain else [("promptId", self.prompt_id)]) + [("type", "user"),
                    ("message", {"role": "user", "content": content if content is not None else text}),
                    ("uuid", u), ("timestamp", stamp)]
            tail = [("permissionMode", self.perm)] + (extra_tail or [])
        else:
            body = [("type", "user"), ("message", {"role": "user", "content": content if content is not None else text}),
                    ("uuid", u), ("timestamp", stamp)]
            tail = [] if self.sidechain else [("thinkingMetadata", {"maxThinkingTokens": 31999}), ("todos", []),
                                              ("permissionMode", self.perm)]
            tail += extra_tail or []
        parent = None if (self.last is None) else "__last__"
        return self.push(self._wrap(body, tail, parent=parent))

    def injected(self, content, *, is_meta=True, source_tool=None, extra=None):
        """An injected user line (skill body, caveat, teammate message, compact summary)."""
        u = self.uid()
        body = [("type", "user"), ("message", {"role": "user", "content": content})]
        if is_meta:
            body.append(("isMeta", True))
        for k, v in extra or []:
            body.append((k, v))
        body += [("uuid", u), ("timestamp", self.tick(0.4))]
        tail = [("sourceToolUseID", source_tool)] if source_tool else []
        return self.push(self._wrap(body, tail))

    def assistant(self, blocks, *, model=None, key=None):
        key = key or f"{self.label}:a{self.n}"
        mid = msg_id(key)
        rid = req_id(key)
        usage = self.usage(key)
        recs = []
        for i, b in enumerate(blocks):
            stop = None
            if self.new and i == len(blocks) - 1:
                stop = "tool_use" if b.get("type") == "tool_use" else "end_turn"
            message = {"model": model or self.model, "id": mid, "type": "message", "role": "assistant",
                       "content": [b], "stop_reason": stop, "stop_sequence": None, "usage": usage}
            if self.new:
                message = {"model": model or self.model, "id": mid, "type": "message", "role": "assistant",
                           "content": [b], "stop_reason": stop, "stop_sequence": None, "stop_details": None,
                           "usage": usage}
            u = self.uid()
            rec = self._wrap([("message", message), ("requestId", rid), ("type", "assistant"), ("uuid", u),
                              ("timestamp", self.tick(0.6 if i else 2.5))])
            self.push(rec)
            if b.get("type") == "tool_use":
                self.tool_line[b["id"]] = u
                self.tool_calls += 1
            if b.get("type") == "text":
                self.final_text = b["text"]
            recs.append(rec)
        return recs

    def say(self, text, *, think=None, model=None):
        blocks = []
        if think:
            blocks.append({"type": "thinking", "thinking": think, "signature": signature(self.label + text[:20])})
        blocks.append({"type": "text", "text": text})
        return self.assistant(blocks, model=model)

    def result(self, tuid, content, tur, *, is_error=None, delay=1.5):
        block = {"tool_use_id": tuid, "type": "tool_result", "content": content}
        if is_error is not None:
            block = {"type": "tool_result", "content": content, "is_error": is_error, "tool_use_id": tuid}
        u = self.uid()
        body = [("type", "user"), ("message", {"role": "user", "content": [block]}), ("uuid", u),
                ("timestamp", self.tick(delay)), ("toolUseResult", tur),
                ("sourceToolAssistantUUID", self.tool_line.get(tuid))]
        return self.push(self._wrap(body))

    def hook(self, event, tool, tuid, command="${CLAUDE_PLUGIN_ROOT}/scripts/tool-call-capture.sh"):
        u = self.uid()
        data = {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:{tool}" if tool else event,
                "command": command}
        body = [("type", "progress"), ("data", data), ("parentToolUseID", tuid), ("toolUseID", tuid),
                ("timestamp", self.tick(0.05)), ("uuid", u)]
        return self.push(self._wrap(body))

    def bash_progress(self, tuid, output, elapsed, n):
        u = self.uid()
        data = {"type": "bash_progress", "output": output, "fullOutput": output, "elapsedTimeSeconds": elapsed,
                "totalLines": output.count("\n") + 1, "timeoutMs": 120000}
        body = [("type", "progress"), ("data", data), ("toolUseID", f"bash-progress-{n}"),
                ("parentToolUseID", tuid), ("uuid", u), ("timestamp", self.tick(1.0))]
        return self.push(self._wrap(body))

    def agent_progress(self, tuid, agent_id, prompt, child_rec):
        u = self.uid()
        inner = {"type": child_rec["type"], "message": child_rec["message"], "uuid": child_rec["uuid"],
                 "timestamp": child_rec["timestamp"]}
        if child_rec["type"] == "assistant":
            inner = {"type": "assistant", "timestamp": child_rec["timestamp"], "message": child_rec["message"],
                     "requestId": child_rec.get("requestId"), "uuid": child_rec["uuid"]}
        data = {"message": inner, "normalizedMessages": [], "type": "agent_progress", "prompt": prompt,
                "agentId": agent_id}
        body = [("type", "progress"), ("data", data), ("toolUseID", "agent_" + child_rec["message"].get("id", "msg")),
                ("parentToolUseID", tuid), ("uuid", u), ("timestamp", child_rec["timestamp"])]
        return self.push(self._wrap(body))

    def system(self, subtype, fields, *, level=None):
        u = self.uid()
        body = [("type", "system"), ("subtype", subtype)] + list(fields.items())
        if level:
            body.append(("level", level))
        body += [("timestamp", self.tick(0.1)), ("uuid", u)]
        return self.push(self._wrap(body))

    def turn_end(self, duration_ms=None, *, stop_hooks=True):
        if stop_hooks:
            u = self.uid()
            body = [("type", "system"), ("subtype", "stop_hook_summary"), ("hookCount", 1),
                    ("hookInfos", [{"command": "~/.claude/hooks/notify-done.sh", "durationMs": 41}]),
                    ("hookErrors", []), ("preventedContinuation", False), ("stopReason", ""), ("hasOutput", False),
                    ("level", "suggestion"), ("timestamp", self.tick(0.2)), ("uuid", u),
                    ("toolUseID", uuid4_of(self.label + ":stop:" + str(self.n)))]
            self.push(self._wrap(body))
        u = self.uid()
        duration_ms = int((self.t - self.turn_t0).total_seconds() * 1000)
        body = [("type", "system"), ("subtype", "turn_duration"), ("durationMs", duration_ms),
                ("timestamp", self.tick(0.03)), ("uuid", u), ("isMeta", False)]
        self.push(self._wrap(body))

    def compact_boundary(self, pre_tokens, delay, trigger="manual"):
        """The `compact_boundary` system line of a /compact: it starts a new chain (`parentUuid` null,
        `logicalParentUuid` the line before)."""
        before = self.last
        u = self.uid()
        self.push({"parentUuid": None, "logicalParentUuid": before, "isSidechain": False, "type": "system",
                   "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                   "timestamp": self.tick(delay), "uuid": u, "level": "info",
                   "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
                   "userType": "external", "entrypoint": self.entrypoint, "cwd": self.cwd, "sessionId": self.sid,
                   "version": self.version, "gitBranch": self.branch, "slug": self.slug})

    def assistant_null(self, delay):
        """An `assistant` record whose message.content is null (a known type with a malformed body)."""
        u = self.uid()
        key = self.label + ":null"
        self.push(self._wrap([("message", {"model": self.model, "id": msg_id(key), "type": "message",
                                           "role": "assistant", "content": None, "stop_reason": None,
                                           "stop_sequence": None, "usage": self.usage(key)}),
                              ("requestId", req_id(key)), ("type", "assistant"), ("uuid", u),
                              ("timestamp", self.tick(delay))]))

    def attachment(self, att):
        u = self.uid()
        body = [("attachment", att), ("type", "attachment"), ("uuid", u), ("timestamp", self.tick(0.1))]
        return self.push(self._wrap(body))

    def session_start(self):
        self.hook("SessionStart", "startup", uuid4_of(self.label + ":ss"), command="~/.claude/hooks/session-start.sh")

    def skill_listing(self):
        self.attachment({"type": "skill_listing", "isInitial": True, "names": list(self.skills),
                         "skillCount": len(self.skills),
                         "content": "\n".join(f"- {n}: {s['short']}" for n, s in self.skills.items())})

    # -- records without a uuid ------------------------------------------------------------------
    def snapshot(self, message_id, tracked=None, update=False):
        self.push({"type": "file-history-snapshot", "messageId": message_id,
                   "snapshot": {"messageId": message_id, "trackedFileBackups": tracked or {},
                                "timestamp": ts(self.t)}, "isSnapshotUpdate": update}, chain=False)

    def queue(self, op, content=None):
        rec = {"type": "queue-operation", "operation": op, "timestamp": ts(self.t), "sessionId": self.sid}
        if content is not None:
            rec["content"] = content
        self.push(rec, chain=False)

    def meta(self, record):
        self.push(record, chain=False)

    def summary(self, text, leaf):
        """A 2.0.x `summary` record (the title of an earlier conversation, `leaf` labels its leaf uuid)."""
        self.meta({"type": "summary", "summary": text, "leafUuid": uuid4_of(leaf)})

    def nul_run(self, n):
        """A line that is a run of NUL bytes, as left by a crash mid-write."""
        self.lines.append(b"\x00" * n)

    def tear(self, index, chars):
        """A torn write before line `index`: the first `chars` characters of that line's record."""
        self.lines.insert(index, dumps(self.lines[index])[:chars])

    def finish(self, title=None):
        """The trailing records of a 2.1.1xx session: `custom-title` and `last-prompt`."""
        if title:
            self.meta({"type": "custom-title", "customTitle": title, "sessionId": self.sid})
        last_prompt = None
        for r in reversed(self.lines):
            if isinstance(r, dict) and r.get("type") == "user" and isinstance(r["message"]["content"], str) \
                    and not r.get("isMeta") and not r["message"]["content"].startswith("<"):
                last_prompt = r
                break
        if last_prompt:
            self.meta({"type": "last-prompt", "lastPrompt": last_prompt["message"]["content"], "leafUuid": self.last,
                       "sessionId": self.sid})

    # -- tools ---------------------------------------------------------------------------------------
    def call(self, name, inp, content, tur, *, is_error=None, think=None, text=None, hooks=False, key=None,
             delay=1.5, caller=True):
        key = key or f"{self.label}:{name}:{self.n}"
        tuid = toolu_id(key)
        block = {"type": "tool_use", "id": tuid, "name": name, "input": inp}
        if caller and vtuple(self.version) >= (2, 1, 0):
            block["caller"] = {"type": "direct"}
        blocks = []
        if think:
            blocks.append({"type": "thinking", "thinking": think, "signature": signature(key)})
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append(block)
        self.assistant(blocks, key=key)
        if hooks:
            self.hook("PreToolUse", name, tuid)
        self.result(tuid, content, tur, is_error=is_error, delay=delay)
        if hooks:
            self.hook("PostToolUse", name, tuid)
        return tuid

    def abspath(self, rel):
        return rel if rel.startswith("/") or rel.startswith("~") else f"{self.cwd}/{rel}"

    def read(self, path, content, **kw):
        p = self.abspath(path)
        n = nlines(content)
        return self.call("Read", {"file_path": p}, numbered(content),
                         {"type": "text", "file": {"filePath": p, "content": content.rstrip("\n"), "numLines": n,
                                                   "startLine": 1, "totalLines": n}}, **kw)

    def bash(self, command, description, stdout="", *, stderr="", error=None, exit_code=1, progress=None, **kw):
        inp = {"command": command, "description": description}
        if error is not None:
            body = f"Exit code {exit_code}\n{error}"
            return self.call("Bash", inp, body, "Error: " + body, is_error=True, **kw)
        key = kw.pop("key", None) or f"{self.label}:Bash:{self.n}"
        if progress:
            tuid = toolu_id(key)
            block = {"type": "tool_use", "id": tuid, "name": "Bash", "input": inp}
            if vtuple(self.version) >= (2, 1, 0):
                block["caller"] = {"type": "direct"}
            blocks = []
            if kw.get("think"):
                blocks.append({"type": "thinking", "thinking": kw["think"], "signature": signature(key)})
            if kw.get("text"):
                blocks.append({"type": "text", "text": kw["text"]})
            self.assistant(blocks + [block], key=key)
            acc = ""
            for i, chunk in enumerate(progress):
                acc = chunk
                self.bash_progress(tuid, acc, 2 * (i + 1), i)
            self.result(tuid, stdout, {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False,
                                       "noOutputExpected": False}, is_error=False)
            return tuid
        return self.call("Bash", inp, stdout,
                         {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False,
                          "noOutputExpected": False}, is_error=False, key=key, **kw)

    def edit(self, path, before, after, old_string, new_string, *, track=True, **kw):
        p = self.abspath(path)
        assert old_string in before, (path, old_string[:40])
        assert before.replace(old_string, new_string, 1) == after, ("edit mismatch", path)
        tuid = self.call("Edit", {"file_path": p, "old_string": old_string, "new_string": new_string,
                                  "replace_all": False},
                         f"The file {p} has been updated successfully.",
                         {"filePath": p, "oldString": old_string, "newString": new_string, "originalFile": before,
                          "structuredPatch": hunks(before, after), "userModified": False, "replaceAll": False}, **kw)
        if track and not self.sidechain:
            self.snapshot(self.last, {path: {"backupFileName": hexof(self.label + path, 16) + "@v1", "version": 1,
                                            "backupTime": ts(self.t)}}, update=True)
        return tuid

    def write(self, path, content, **kw):
        p = self.abspath(path)
        return self.call("Write", {"file_path": p, "content": content}, f"File created successfully at: {p}",
                         {"type": "create", "filePath": p, "content": content, "structuredPatch": []}, **kw)

    def grep(self, pattern, path, matches, *, mode="content", **kw):
        inp = {"pattern": pattern, "path": path, "output_mode": mode}
        if mode == "content":
            inp["-n"] = True
            content = "\n".join(matches)
            tur = {"mode": "content", "numFiles": 0, "filenames": [], "content": content, "numLines": len(matches)}
        else:
            content = f"Found {len(matches)} files\n" + "\n".join(matches)
            tur = {"mode": "files_with_matches", "filenames": matches, "numFiles": len(matches)}
        return self.call("Grep", inp, content, tur, **kw)

    def glob(self, pattern, files, **kw):
        return self.call("Glob", {"pattern": pattern}, "\n".join(files),
                         {"filenames": files, "durationMs": small_int(pattern, 5, 90), "numFiles": len(files),
                          "truncated": False}, **kw)

    def skill(self, name, args=None, *, text=None, think=None):
        inp = {"skill": name}
        if args:
            inp["args"] = args
        tuid = self.call("Skill", inp, f"Launching skill: {name}",
                         {"success": True, "commandName": name, "allowedTools": self.skills[name]["tools"]},
                         text=text, think=think, delay=0.8)
        body = self.skills[name]["body"]
        self.injected([{"type": "text", "text": f"Base directory for this skill: {DEMO}/skills/{name}\n\n{body}"}],
                      source_tool=tuid)
        return tuid

    def spawn(self, tool, inp, child: "Claude", *, text=None, think=None, progress_every=3, key=None):
        """Task/Agent spawn: the tool_use, agent_progress noise, and the final tool_result."""
        key = key or f"{self.label}:{tool}:{self.n}"
        tuid = toolu_id(key)
        block = {"type": "tool_use", "id": tuid, "name": tool, "input": inp}
        if vtuple(self.version) >= (2, 1, 0):
            block["caller"] = {"type": "direct"}
        blocks = []
        if think:
            blocks.append({"type": "thinking", "thinking": think, "signature": signature(key)})
        if text:
            blocks.append({"type": "text", "text": text})
        self.assistant(blocks + [block], key=key)
        return tuid

    def spawn_result(self, tuid, inp, child: "Claude", *, progress=True):
        if progress and child.agent_id and vtuple(self.version) >= (2, 1, 0):
            recs = [r for r in child.lines if isinstance(r, dict) and r.get("type") in ("user", "assistant")]
            picks = recs[1:-1:3][:3]
            for r in picks:
                self.agent_progress(tuid, child.agent_id, inp["prompt"], r)
        self.t = max(self.t, child.t) + timedelta(seconds=1.2)
        duration = int((child.t - child.first_time).total_seconds() * 1000)
        tail = (f"agentId: {child.agent_id} (for resuming to continue this agent's work if needed)\n"
                f"<usage>total_tokens: {child.tokens}\ntool_uses: {child.tool_calls}\nduration_ms: {duration}</usage>")
        content = [{"type": "text", "text": child.final_text}]
        if child.agent_id and vtuple(self.version) >= (2, 1, 0):
            content.append({"type": "text", "text": tail})
        tur = {"status": "completed", "prompt": inp["prompt"], "agentId": child.agent_id,
               "content": [{"type": "text", "text": child.final_text}], "totalDurationMs": duration,
               "totalTokens": child.tokens, "totalToolUseCount": child.tool_calls,
               "usage": {"input_tokens": 41, "cache_creation_input_tokens": 2210, "cache_read_input_tokens": 18730,
                         "output_tokens": 612, "service_tier": "standard"}}
        if not child.agent_id:
            tur.pop("agentId")
        self.result(tuid, content, tur, delay=0.3)


def subagent(parent: Claude, agent_id, start=None, *, model=None, team=None, inline=False):
    """A child transcript: its own file (eras 2-4) or inline sidechain lines (era 1)."""
    c = Claude(parent.sid, parent.cwd, parent.version, parent.branch, start or parent.t, slug=parent.slug,
               entrypoint=parent.entrypoint,
               model=model or ("claude-sonnet-4-6" if parent.new else "claude-sonnet-4-5-20250929"),
               agent_id=None if inline else agent_id, sidechain=True, team=team,
               lines=parent.lines if inline else None, perm=parent.perm,
               label=f"{parent.sid}:sub:{agent_id}")
    return c
