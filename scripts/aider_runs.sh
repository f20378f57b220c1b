#!/usr/bin/env bash
# The L3 incremental-update measure (docs/PERFORMANCE.md, "One Aider history of 100,000 runs"):
# writes an Aider chat history of N runs (default 100,000) under target/aider-runs, indexes it
# with the release binary, then appends one run at a time and indexes again, ROUNDS times
# (default 5), printing each run's L3 line: the full build first, then the updates.
# Usage: scripts/aider_runs.sh [N] [ROUNDS]   (after `cargo build --release`)
set -euo pipefail
n=${1:-100000}
rounds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/release/knowledge"
dir="$root/target/aider-runs"
rm -rf "$dir"
mkdir -p "$dir/repo" "$dir/data"
printf '[search]\nsemantic = false\n' >"$dir/data/config.toml"
python3 - "$dir/repo/.aider.chat.history.md" "$n" <<'PY'
import sys
out, n = sys.argv[1], int(sys.argv[2])
with open(out, "w") as f:
    for i in range(n):
        d, h, m, s = 1 + (i // 86400) % 28, (i // 3600) % 24, (i // 60) % 60, i % 60
        f.write(f"\n# aider chat started at 2026-01-{d:02d} {h:02d}:{m:02d}:{s:02d}\n\n")
        f.write(f"#### fix the parser bug number {i} in src/mod{i % 50}.rs  \n\n")
        f.write(f"I changed src/mod{i % 50}.rs to handle case {i}.\n\n")
        f.write(f"> Applied edit to src/mod{i % 50}.rs  \n")
PY
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" --data-dir "$dir/data" index --sessions "$dir/repo" 2>&1 | grep '^skills and actors'
for r in $(seq 1 "$rounds"); do
    printf '\n# aider chat started at 2026-02-01 10:%02d:00\n\n#### one more fix  \n\nDone.\n' "$r" \
        >>"$dir/repo/.aider.chat.history.md"
    "$bin" --data-dir "$dir/data" index --sessions "$dir/repo" 2>&1 | grep '^skills and actors'
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
