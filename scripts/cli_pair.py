#!/usr/bin/env python3
# Usage: scripts/cli_pair.py BIN_A,BIN_B DATA_DIR_SEMANTIC_ON DATA_DIR_SEMANTIC_OFF ROUNDS
# One-shot CLI wall time, interleaved call by call: every (binary, semantic) cell per question,
# the order rotated each question.
import subprocess, sys, time
bins = sys.argv[1].split(","); dirs = {"on": sys.argv[2], "off": sys.argv[3]}; rounds = int(sys.argv[4])
qs = ["кто чинил доступ к MySQL", "mysql connection timeout", "stripe webhook signature",
      "getUserName returns undefined", "деплой упал ошибка", "memory leak profile",
      "кодировка BOM CRLF", "retry cache invalidate", "nginx restart pod", "slow query index migration"]
cells = [(b, s) for b in bins for s in ("off", "on")]
res = {c: [] for c in cells}
for r in range(rounds):
    for i, q in enumerate(qs):
        k = (r * len(qs) + i) % len(cells)
        for c in cells[k:] + cells[:k]:
            t = time.monotonic()
            subprocess.run([c[0], "--data-dir", dirs[c[1]], "search", "-q", q], stdout=subprocess.DEVNULL, check=True)
            res[c].append((time.monotonic() - t) * 1e3)
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
for c in cells:
    v = res[c]; print(f"{c[0]} semantic {c[1]}: n={len(v)} P50 {pct(v,50):.1f} ms P95 {pct(v,95):.1f} ms")
