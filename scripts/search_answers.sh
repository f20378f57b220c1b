#!/usr/bin/env bash
# The answers of one build over a set of questions, for checking that a speed change moves no
# result: run it with the before and the after binary over the same data dir, then `diff -r`
# the two output dirs (nothing may differ).
#
#   scripts/search_answers.sh BIN DATA_DIR OUT_DIR
#
# DATA_DIR is never written: the stores are linked into a private data dir per setting, with
# its own config.toml (semantic on or off, a lane deadline of 60 s so no lane is cut short by
# the machine's load) and its own request log. Each answer is the response document without
# what changes from call to call by itself (the trace's timings, the observed-at clock).
set -euo pipefail

bin=${1:?usage: search_answers.sh BIN DATA_DIR OUT_DIR}
data=$(realpath "${2:?usage: search_answers.sh BIN DATA_DIR OUT_DIR}")
out=${3:?usage: search_answers.sh BIN DATA_DIR OUT_DIR}
command -v jq >/dev/null || { echo "search_answers.sh: jq is needed" >&2; exit 2; }
[ -f "$data/episodes.sqlite" ] || { echo "search_answers.sh: no episodes.sqlite in $data" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

questions=(
  "кто чинил доступ к MySQL"
  "mysql connection timeout"
  "stripe webhook signature"
  "getUserName returns undefined"
  "деплой упал ошибка"
  "memory leak profile"
  "кодировка BOM CRLF"
  "retry cache invalidate"
  "who fixed the router policy"
  "nginx restart pod"
  "пароль сервер восстановлен"
  "slow query index migration"
  "payment cart service handler"
  "как исправил тесты"
  "token refresh session user"
  "quantum entanglement of teapots"
)

for semantic in true false; do
  dir="$work/data-$semantic"
  mkdir -p "$dir"
  # The stores and what is derived beside them (full-text indexes, message vectors): without
  # those every answer would be the lane's "index does not exist yet".
  for f in "$data"/*.sqlite "$data"/*.lexical "$data"/*.vectors; do
    if [ -e "$f" ]; then ln -s "$f" "$dir/"; fi
  done
  printf '[search]\nsemantic = %s\n[lanes]\ntimeout_ms = 60000\n' "$semantic" >"$dir/config.toml"
  i=0
  for q in "${questions[@]}"; do
    i=$((i + 1))
    for variant in plain code agent since; do
      case $variant in
        plain) extra=() ;;
        code) extra=(--mode find_code) ;;
        agent) extra=(--mode find_agent --limit 5) ;;
        since) extra=(--since 2026-01-01T00:00:00Z --include episodes) ;;
      esac
      "$bin" --data-dir "$dir" search -q "$q" "${extra[@]}" \
        | jq -S 'del(.trace) | del(.. | .observed_at?)' \
        >"$out/semantic-$semantic.q$(printf %02d $i).$variant.json"
    done
  done
done
echo "wrote $(ls "$out" | wc -l) answers to $out"
