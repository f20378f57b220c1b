"""The demo world's content, read from scripts/demo_world/: repositories, skills, agent definitions,
planted secrets, and the named texts sessions quote (`@{NAME}`).

A data file says what the world holds; this module only reads it, fills in `@{NAME}` references and
derives each repository file's earlier versions (the ones the sessions read, edit and diff) from the
current file and the fragments an edit replaces.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import tomllib
from pathlib import Path

from .ids import DEMO

DATA = Path(__file__).resolve().parent.parent / "demo_world"
REF = re.compile(r"@\{([A-Za-z0-9_]+)\}")


def load(rel: str) -> dict:
    """One TOML file under scripts/demo_world/."""
    with open(DATA / rel, "rb") as fh:
        return tomllib.load(fh)


def fill(value, names: dict):
    """`value` with every `@{NAME}` in its strings replaced by names[NAME] (recursively through
    lists and tables). An unknown name is an error, so a typo cannot write a literal `@{…}`."""
    if isinstance(value, str):
        return REF.sub(lambda m: names[m.group(1)], value) if "@{" in value else value
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value


# -- planted secrets ---------------------------------------------------------------------------------

CANARY_LIST = load("canaries.toml")["canary"]
# (kind, as shown in the README, the substring tests assert on)
CANARIES = [(c["kind"], c.get("shown", c["value"]), c.get("assert", c["value"])) for c in CANARY_LIST]
CANARY_WHERE = {c["kind"]: c["where"] for c in CANARY_LIST}

# Everything a data file may quote as @{NAME}: the canaries, the workspaces, the repositories' files
# and fragments (below), and what a session adds for itself (replay.py).
TEXTS: dict[str, str] = {c["name"]: c["value"] for c in CANARY_LIST}


def _b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


_head, _body, _sig = TEXTS["CANARY_JWT"].split(".")
assert _sig == _b64u(hmac.new(b"demo-jwt-key", f"{_head}.{_body}".encode(), hashlib.sha256).digest()), \
    "CANARY_JWT must stay a valid HS256 token signed with demo-jwt-key"
assert len(TEXTS["CANARY_AWS_KEY"]) == 20 and len(TEXTS["CANARY_AWS_SECRET"]) == 40

BILLING = f"{DEMO}/repos/billing"
WEBSHOP = f"{DEMO}/repos/webshop"
ARCHIVE = f"{DEMO}/repos/billing-archive"
CHECK = f"bash {DEMO}/skills/clean-bom-crlf/scripts/check_bom_crlf.sh"
TEXTS.update(DEMO=DEMO, BILLING=BILLING, WEBSHOP=WEBSHOP, ARCHIVE=ARCHIVE, CHECK=CHECK)
WORKSPACES = {"billing": BILLING, "webshop": WEBSHOP, "billing-archive": ARCHIVE}

# -- repositories ------------------------------------------------------------------------------------

REPOS: dict[str, dict[str, str]] = {}  # repo -> {path: text}, in the order of the data files
for _repo in ("billing", "billing-archive", "webshop"):
    _doc = load(f"repos/{_repo}.toml")
    REPOS[_repo] = {}
    for _f in _doc["file"]:
        REPOS[_repo][_f["path"]] = TEXTS[_f["name"]] = fill(_f["text"], TEXTS)
    for _name, _text in _doc.get("text", {}).items():
        TEXTS[_name] = fill(_text, TEXTS)


def _derive(T: dict):
    """Earlier versions of the repositories' files: what each session saw before its edit."""

    def undo(text, new, old):
        assert text.count(new) == 1, new[:60]
        return text.replace(new, old)

    T["CONFIG_PHP_V0"] = undo(T["CONFIG_PHP_FINAL"], T["CONFIG_PHP_NEW_DOC"], T["CONFIG_PHP_OLD_DOC"])
    T["CONFIG_PHP_X1"] = T["CONFIG_PHP_V0"].replace(T["CONFIG_PHP_X1_OLD"], T["CONFIG_PHP_X1_NEW"])
    T["MIG_0004_V0"] = undo(T["MIG_0004"], T["MIG_0004_NEW_PART"], T["MIG_0004_OLD_PART"])
    T["CHANGELOG_V0"] = undo(T["CHANGELOG"], T["CHANGELOG_ADD"], "")
    T["CONFIG_TOML_V0"] = undo(T["CONFIG_TOML"], T["CONFIG_TOML_TODO"], "")
    # src/cart.ts: V0 before C6's refactor, V1 after it (getUserName still broken), FINAL after C3
    T["CART_TS_V1"] = undo(T["CART_TS_FINAL"], T["GETUSER_FIXED"], T["GETUSER_BUGGY"])
    v1, split = T["CART_TS_V1"], T["CART_PRICING_SPLIT"]
    T["CART_TS_V0"] = v1[:v1.index(split)] + T["CART_V0_TAIL"]
    T["CART_REFACTOR_OLD"] = T["CART_TS_V0"][T["CART_TS_V0"].index("export class CartService"):]
    T["CART_REFACTOR_NEW"] = v1[v1.index(split):]
    assert T["CART_TS_V0"].replace(T["CART_REFACTOR_OLD"], T["CART_REFACTOR_NEW"]) == v1
    # tests/cart.test.ts before C3 added the getUserName tests
    test, head = T["CART_TEST_TS"], T["CART_TEST_TS_V0_HEAD"]
    T["CART_TEST_GETUSER"] = ('import { CartService, computeTotals, getUserName } from "../src/cart";\n\n'
                              + test[test.index('describe("getUserName"'):test.index('describe("computeTotals"')]
                              + 'describe("computeTotals"')
    T["CART_TEST_TS_V0"] = test.replace(T["CART_TEST_GETUSER"], head)
    assert T["CART_TEST_TS_V0"].replace(head, T["CART_TEST_GETUSER"]) == test
    # api/webhooks.py: V0 before C4, V1 after C4's partial fix, V1B halfway through C5's fix
    T["WEBHOOKS_PY_V0"] = undo(undo(T["WEBHOOKS_PY_FINAL"], T["WH_NEW_BLOCK"], T["WH_OLD_BLOCK"]),
                               T["WH_HEAD_FINAL"], T["WH_HEAD_OLD"])
    T["WEBHOOKS_PY_V1"] = undo(T["WEBHOOKS_PY_V0"], T["WH_OLD_BLOCK"], T["WH_MID_BLOCK"])
    T["WEBHOOKS_PY_V1B"] = undo(T["WEBHOOKS_PY_V1"], T["WH_MID_BLOCK"], T["WH_NEW_BLOCK"])
    assert T["WEBHOOKS_PY_V1B"].replace(T["WH_HEAD_OLD"], T["WH_HEAD_FINAL"]) == T["WEBHOOKS_PY_FINAL"]
    T["DOCS_SETUP_V0"] = undo(T["DOCS_SETUP"], T["DOCS_SETUP_STRIPE_ROW"], "")
    for doc in ("DOCS_PAYMENTS", "DOCS_API"):
        assert T[doc].endswith(T[doc + "_ADD"])
        T[doc + "_V0"] = T[doc][:-len(T[doc + "_ADD"])]


_derive(TEXTS)

# -- skills and agent definitions ----------------------------------------------------------------------

SKILL_LIST = load("skills.toml")["skill"]
SKILL_FILES = {s["name"]: s["file"] for s in SKILL_LIST}
SKILL_ORDER = [s["name"] for s in SKILL_LIST]
SKILL_SCRIPTS = {f"{s['name']}/scripts/{n}": text for s in SKILL_LIST for n, text in s.get("scripts", {}).items()}
# the catalog the writers list and launch: name -> short description, allowed tools, body after the frontmatter
SKILLS = {s["name"]: {"short": s["short"], "tools": s.get("tools", []),
                      "body": s["file"].split("\n---\n", 1)[1].lstrip("\n")} for s in SKILL_LIST}
for _s in SKILL_LIST:
    assert f"\nname: {_s['name']}\n" in _s["file"]
    TEXTS["SKILL_" + _s["name"].upper().replace("-", "_")] = _s["file"]

AGENT_FILES = {a["name"]: a["file"] for a in load("agents.toml")["agent"]}
