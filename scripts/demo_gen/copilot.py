"""The Copilot CLI session writer: `copilot/session-state/<id>/events.jsonl`, one event a line
(`type`, `data`), numbered `dm-NN`, each the child of the one before."""

from __future__ import annotations


class Copilot:
    def __init__(self):
        self.lines = []

    def event(self, type, at, data):
        n = len(self.lines) + 1
        self.lines.append({"type": type, "data": data, "id": "dm-%02d" % n, "timestamp": at,
                           "parentId": ("dm-%02d" % (n - 1)) if n > 1 else None})
