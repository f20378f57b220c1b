"""The Cline task writer (VS Code extension): `tasks/<Date.now()>/ui_messages.json` (the store: what
the person saw, each message with its time), `api_conversation_history.json` (what the model was
sent), `task_metadata.json`, and the task's entry in `state/taskHistory.json` beside `tasks/` (its
cwd). JSON documents written whole, compact as `JSON.stringify` writes them, no trailing newline.
Shapes: cline/cline `ExtensionMessage.ts` (`ClineMessage`, `ClineSayTool`, `ClineApiReqInfo`),
`HistoryItem.ts`; read by src/sources/episodes/vscode_tasks.rs."""

from __future__ import annotations

import hashlib
import json


def compact(doc) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def ulid(ms: int, label: str) -> str:
    """A ULID (Crockford base32: 48-bit time, 80 bits of randomness) with the randomness taken from
    `label`, so the file is the same on every run."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (ms << 80) | int.from_bytes(hashlib.sha256(label.encode()).digest()[:10], "big")
    return "".join(alphabet[(n >> (5 * i)) & 31] for i in reversed(range(26)))


class Cline:
    """One task; times (`at`) are milliseconds after the task started (its id is `Date.now()`)."""

    def __init__(self, task, model):
        self.task, self.t0, self.model = task, int(task), model
        self.ui: list[dict] = []
        self.api: list[dict] = []

    def _message(self, type, kind, at, text, index, extra):
        self.ui.append(dict({"ts": self.t0 + at, "type": type, type: kind, "text": text}, **extra,
                            conversationHistoryIndex=index))

    def say(self, at, say, index, text="", **extra):
        self._message("say", say, at, text, index, extra)

    def ask(self, at, ask, index, text="", **extra):
        self._message("ask", ask, at, text, index, extra)

    def api_req(self, at, index, request, tokens_in, tokens_out, cache_writes, cache_reads, cost):
        """An `api_req_started` message: the request's text, tokens and cost, as JSON in its text."""
        self.say(at, "api_req_started", index, compact(
            {"request": request, "tokensIn": tokens_in, "tokensOut": tokens_out, "cacheWrites": cache_writes,
             "cacheReads": cache_reads, "cost": cost}),
                 modelInfo={"providerId": "cline", "modelId": self.model, "mode": "act"})

    def tool(self, at, index, tool):
        """A `tool` message: what the tool did (ClineSayTool), as JSON in its text."""
        self.say(at, "tool", index, compact(tool))

    def files(self, store, cwd, api, metadata, history):
        """The task folder and the task's entry in the history index, path -> bytes."""
        meta = {"files_in_context": [
            {"path": f["path"], "record_state": f["state"], "record_source": f["source"],
             "cline_read_date": self.t0 + f["read_at"], "cline_edit_date": self.t0 + f["edit_at"]}
            for f in metadata["files"]],
            "model_usage": [{"ts": self.t0 + metadata["model_used_at"], "model_id": self.model,
                             "model_provider_id": "cline", "mode": "act"}],
            "environment_history": []}
        task_dir = f"{store}/tasks/{self.task}/"
        files = {task_dir + "ui_messages.json": compact(self.ui).encode("utf-8"),
                 task_dir + "api_conversation_history.json": compact(api).encode("utf-8"),
                 task_dir + "task_metadata.json": compact(meta).encode("utf-8")}
        entry = [{"id": self.task, "ulid": ulid(self.t0, history["ulid_label"]), "ts": self.ui[-1]["ts"],
                  "task": self.ui[0]["text"], "tokensIn": history["tokens_in"], "tokensOut": history["tokens_out"],
                  "cacheWrites": history["cache_writes"], "cacheReads": history["cache_reads"],
                  "totalCost": history["total_cost"], "size": sum(len(b) for b in files.values()),
                  "shadowGitConfigWorkTree": cwd, "cwdOnTaskInitialization": cwd, "isFavorited": False,
                  "modelId": self.model}]
        files[f"{store}/state/taskHistory.json"] = compact(entry).encode("utf-8")
        return files
