"""Deterministic ids and timestamps of the demo world: every id is derived from SHA-256 of a fixed
label, every time from a fixed start, so re-running the generator writes byte-identical files."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime, timedelta, timezone

DEMO = "@DEMO@"  # the demo root inside every transcript; `knowledge demo` replaces it
MSK = timezone(timedelta(hours=3))  # the people of this world live in Europe/Moscow

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def sha(label: str) -> bytes:
    return hashlib.sha256(label.encode("utf-8")).digest()


def hexof(label: str, n: int) -> str:
    return hashlib.sha256(label.encode("utf-8")).hexdigest()[:n]


def b62(label: str, n: int) -> str:
    num = int.from_bytes(sha(label) + sha(label + "#2"), "big")
    out = []
    for _ in range(n):
        num, r = divmod(num, 62)
        out.append(B62[r])
    return "".join(out)


def uuid4_of(label: str) -> str:
    h = list(hexof(label, 32))
    h[12] = "4"
    h[16] = "89ab"[int(h[16], 16) % 4]
    s = "".join(h)
    return f"{s[0:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:32]}"


def uuid7_of(label: str, when: datetime) -> str:
    ms = int(when.timestamp() * 1000)
    rest = list(hexof(label, 20))
    s = f"{ms:012x}" + "7" + "".join(rest[0:3]) + "89ab"[int(rest[3], 16) % 4] + "".join(rest[4:19])
    return f"{s[0:8]}-{s[8:12]}-{s[12:16]}-{s[16:20]}-{s[20:32]}"


def msg_id(label: str) -> str:
    return "msg_01" + b62("msg:" + label, 22)


def toolu_id(label: str) -> str:
    return "toolu_01" + b62("toolu:" + label, 22)


def req_id(label: str) -> str:
    return "req_011C" + b62("req:" + label, 20)


def call_id(label: str) -> str:
    return "call_" + b62("call:" + label, 24)


def signature(label: str) -> str:
    return "Eu8BCkYICBgCKkD" + base64.b64encode(sha("sig:" + label) + sha("sig2:" + label)).decode()


def encrypted(label: str) -> str:
    raw = b"".join(sha(f"enc:{label}:{i}") for i in range(5))
    return "gAAAAABp" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def utc(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def small_int(label: str, lo: int, hi: int) -> int:
    return lo + int.from_bytes(sha(label)[:4], "big") % (hi - lo + 1)
