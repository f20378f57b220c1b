#!/usr/bin/env python3
# Usage: scripts/mcp_pair.py BIN_A,BIN_B DATA_DIR ROUNDS
# Warm search latency through `knowledge mcp`: one server per binary, queries sent one at a
# time (rotating between the servers call by call), wall time from request to response.
import json, subprocess, sys, time
bins = sys.argv[1].split(",")
data = sys.argv[2]
rounds = int(sys.argv[3])
qs = ["кто чинил доступ к MySQL", "mysql connection timeout", "stripe webhook signature",
      "getUserName returns undefined", "деплой упал ошибка", "memory leak profile",
      "кодировка BOM CRLF", "retry cache invalidate", "nginx restart pod", "slow query index migration"]
def start(b):
    p = subprocess.Popen([b, "--data-dir", data, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
    send(p, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2024-11-05",
         "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    read(p, 0)
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return p
def send(p, m):
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def read(p, id):
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("server closed")
        try: m = json.loads(line)
        except Exception: continue
        if m.get("id") == id: return m
procs = [start(b) for b in bins]
n = 1
def call(p, q):
    global n
    n += 1
    send(p, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "knowledge_search",
         "arguments": {"schema": "knowledge.search/v1", "query": q}}})
    t = time.monotonic(); read(p, n); return (time.monotonic() - t) * 1e3
for p in procs:  # warm: every question once (also fills each process's counts)
    for q in qs: call(p, q)
res = [[] for _ in bins]
for r in range(rounds):
    for i, q in enumerate(qs):
        order = list(range(len(bins)))
        if (r + i) % 2: order.reverse()
        for k in order: res[k].append(call(procs[k], q))
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
for b, v in zip(bins, res):
    print(f"{b}: n={len(v)} P50 {pct(v,50):.1f} ms P95 {pct(v,95):.1f} ms")
for p in procs: p.stdin.close(); p.wait()
