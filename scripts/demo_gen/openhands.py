"""The OpenHands CLI (V1, software-agent-sdk) conversation writer: `<id as 32 hex>/base_state.json`
and `events/event-<idx:05d>-<event id>.json`, one event per file, each the child of the one before,
timestamps in the writer's local time without a zone. JSON documents written whole, compact as
pydantic's `model_dump_json` writes them, no trailing newline. Shapes: the SDK's `event/**`,
`tool/builtins/finish.py`, the terminal and file_editor tools; read by src/sources/episodes/openhands.rs."""

from __future__ import annotations

import hashlib
import json


def compact(doc) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def content(t):
    """A text as the SDK's content list."""
    return [{"cache_prompt": False, "type": "text", "text": t}]


class OpenHands:
    def __init__(self, cwd, event_id, first_event):
        self.cwd = cwd
        self.event_id, self.first_event = event_id, first_event  # event n's id: event_id % (first_event + n)
        self.events: list[dict] = []

    def ev(self, kind, at, source, **body):
        n = len(self.events)
        eid = lambda i: self.event_id % (self.first_event + i)  # noqa: E731
        self.events.append(dict({"kind": kind, "id": eid(n), "timestamp": at, "source": source,
                                 "parent_id": eid(n - 1) if n else "__root__"}, **body))

    def system(self, at, prompt, tools):
        self.ev("SystemPromptEvent", at, "agent", system_prompt={"cache_prompt": False, "type": "text", "text": prompt},
                tools=[{"type": "function", "function": {"name": n}} for n in tools])

    def message(self, at, text):
        self.ev("MessageEvent", at, "user",
                llm_message={"role": "user", "content": content(text), "cache_enabled": False, "vision_enabled": False,
                             "function_calling_enabled": True, "force_string_serializer": False},
                activated_skills=[], extended_content=[])

    def act(self, at, call, tool, action, thought="", reasoning=None):
        """An ActionEvent: the agent calls `tool` (tool call id `call`) with `action`."""
        args = {k: v for k, v in action.items() if k != "kind"}
        body = {"thought": content(thought) if thought else []}
        if reasoning:
            body["reasoning_content"] = reasoning
        body.update({"thinking_blocks": [], "action": action, "tool_name": tool, "tool_call_id": call,
                     "tool_call": {"id": call, "name": tool, "arguments": json.dumps(args, ensure_ascii=False),
                                   "origin": "completion"},
                     "llm_response_id": "chatcmpl-%s" % hashlib.sha256(call.encode()).hexdigest()[:12],
                     "security_risk": "LOW"})
        self.ev("ActionEvent", at, "agent", **body)

    def observe(self, at, tool, call, observation):
        self.ev("ObservationEvent", at, "environment", observation=observation, action_id=self.events[-1]["id"],
                tool_name=tool, tool_call_id=call)

    def terminal(self, at, call, command, output, exit_code):
        self.observe(at, "terminal", call, {
            "kind": "TerminalObservation", "content": content(output), "is_error": False, "command": command,
            "exit_code": exit_code, "timeout": False,
            "metadata": {"exit_code": exit_code, "pid": -1, "username": "dev", "hostname": "webshop-dev",
                         "working_dir": self.cwd, "py_interpreter_path": "/usr/bin/python3", "prefix": "",
                         "suffix": "\n[The command completed with exit code %d.]" % exit_code}})

    def edited(self, at, call, path, snippet):
        self.observe(at, "file_editor", call, {
            "kind": "FileEditorObservation",
            "content": content("The file %s has been edited. Here's the result of running `cat -n` on a snippet of "
                            "%s:\n%s\nReview the changes and make sure they are as expected. Edit the file again "
                            "if necessary." % (path, path, snippet)),
            "is_error": False, "command": "str_replace", "path": path, "prev_exist": True})

    def edit_failed(self, at, call, path, old_str):
        self.observe(at, "file_editor", call, {
            "kind": "FileEditorObservation",
            "content": content("ERROR:\nNo replacement was performed, old_str `%s` did not appear verbatim in %s."
                            % (old_str, path)),
            "is_error": True, "command": "str_replace", "path": path, "prev_exist": True})

    def finished(self, at, call, message):
        self.observe(at, "finish", call, {"kind": "FinishObservation", "content": content(message), "is_error": False})

    def state_update(self, at, key, value):
        self.ev("ConversationStateUpdateEvent", at, "environment", key=key, value=value)

    def files(self, conversation_dir, state):
        """base_state.json and one file per event, path -> bytes."""
        files = {f"{conversation_dir}/base_state.json": compact(state).encode("utf-8")}
        for n, e in enumerate(self.events):
            files["%s/events/event-%05d-%s.json" % (conversation_dir, n, e["id"])] = compact(e).encode("utf-8")
        return files
