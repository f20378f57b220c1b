"""Diffs as the agents record them: Claude's Edit `structuredPatch`, Codex's apply_patch text and
`patch_apply_end` unified diff, and Read's numbered lines."""

from __future__ import annotations

import difflib


def hunks(old: str, new: str, context: int = 3) -> list[dict]:
    a = old.split("\n")
    b = new.split("\n")
    if a and a[-1] == "":
        a = a[:-1]
    if b and b[-1] == "":
        b = b[:-1]
    out = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in sm.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        lines = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + x for x in a[a1:a2]]
            if tag in ("replace", "delete"):
                lines += ["-" + x for x in a[a1:a2]]
            if tag in ("replace", "insert"):
                lines += ["+" + x for x in b[b1:b2]]
        out.append({"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1, "lines": lines})
    return out


def unified(old: str, new: str) -> str:
    text = ""
    for h in hunks(old, new):
        text += f"@@ -{h['oldStart']},{h['oldLines']} +{h['newStart']},{h['newLines']} @@\n"
        text += "\n".join(h["lines"]) + "\n"
    return text


def apply_patch_update(rel: str, old: str, new: str) -> str:
    body = ""
    for h in hunks(old, new):
        body += "@@\n" + "\n".join(h["lines"]) + "\n"
    return f"*** Begin Patch\n*** Update File: {rel}\n{body}*** End Patch"


def apply_patch_add(rel: str, content: str) -> str:
    lines = content.split("\n")
    if lines[-1] == "":
        lines = lines[:-1]
    return f"*** Begin Patch\n*** Add File: {rel}\n" + "\n".join("+" + x for x in lines) + "\n*** End Patch"


def numbered(content: str, start: int = 1) -> str:
    lines = content.split("\n")
    if lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, start))


def nlines(content: str) -> int:
    return len(content.rstrip("\n").split("\n"))
