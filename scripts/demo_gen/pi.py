"""The Pi session writer: `pi/sessions/<encoded cwd>/<start>_<id>.jsonl`, a `session` header, then
entries that form a tree (`id`, `parentId`): messages of the user, the assistant (content blocks,
usage, stop reason) and tool results, and `session_info` (the session's name)."""

from __future__ import annotations


class Pi:
    def __init__(self, session_id, start, cwd, *, model, provider, api, usage, assistant_ms):
        self.lines = [{"type": "session", "version": 3, "id": session_id, "timestamp": start, "cwd": cwd}]
        self.model, self.provider, self.api, self.usage, self.assistant_ms = model, provider, api, usage, assistant_ms

    def entry(self, kind, id, parent, at, **body):
        self.lines.append(dict(type=kind, id=id, parentId=parent, timestamp=at, **body))

    def user(self, id, at, text, ms, parent=None):
        self.entry("message", id, parent, at, message={"role": "user", "content": [{"type": "text", "text": text}],
                                                       "timestamp": ms})

    def assistant(self, id, parent, at, content, stop):
        self.entry("message", id, parent, at, message={
            "role": "assistant", "content": content, "api": self.api, "provider": self.provider, "model": self.model,
            "usage": self.usage, "stopReason": stop, "timestamp": self.assistant_ms})

    def tool_result(self, id, parent, at, call, tool, text, ms, is_error=False):
        self.entry("message", id, parent, at, message={
            "role": "toolResult", "toolCallId": call, "toolName": tool, "content": [{"type": "text", "text": text}],
            "isError": is_error, "timestamp": ms})

    def session_info(self, id, parent, at, name):
        self.entry("session_info", id, parent, at, name=name)
