"""The Gemini CLI session writer: `gemini/tmp/<project>/chats/session-….jsonl`, a header line, then the
messages, each `gemini` message written once as it streams and again with its `toolCalls`, and
`$set` lines that update the header (`lastUpdated`, the `summary`)."""

from __future__ import annotations


class Gemini:
    def __init__(self, session_id, project_hash, start):
        self.lines = [{"sessionId": session_id, "projectHash": project_hash, "startTime": start,
                       "lastUpdated": start, "kind": "main"}]
        self.last = None

    def user(self, id, at, text):
        self.lines.append({"id": id, "timestamp": at, "type": "user", "content": [{"text": text}]})

    def gemini(self, id, at, content, thoughts, tokens, model):
        self.last = {"id": id, "timestamp": at, "type": "gemini", "content": content, "thoughts": thoughts,
                     "tokens": tokens, "model": model}
        self.lines.append(self.last)

    def tool_calls(self, calls):
        """The last `gemini` message again, now with the tool calls it made and their results."""
        self.lines.append(dict(self.last, toolCalls=[
            {"id": c["id"], "name": c["name"], "args": c["args"],
             "result": [{"functionResponse": {"id": c["id"], "name": c["name"], "response": {"output": c["output"]}}}],
             "status": "success", "timestamp": c["at"], "resultDisplay": c["display"],
             "description": c["description"], "displayName": c["display_name"], "renderOutputAsMarkdown": True}
            for c in calls]))

    def updated(self, at):
        self.lines.append({"$set": {"lastUpdated": at}})

    def summary(self, text):
        self.lines.append({"$set": {"summary": text}})
