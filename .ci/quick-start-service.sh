#!/usr/bin/env bash
# The README's start command, run exactly as written (on a fresh embedded database folder and an
# ephemeral port): the service must start on the pinned runtime, print its first-run token,
# answer a create with that token, and stop cleanly on SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."

start_command=$(sed -n '/<!-- quick-start:start -->/,/^```$/p' README.md | grep -m1 '^npx ')
if [ -z "$start_command" ]; then
  echo "FAIL: README.md has no quick-start start command" >&2
  exit 1
fi
pin="v$(sed -n 's/^  node: *//p' pnpm-workspace.yaml | head -n 1)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== ${start_command}   (PORT=0, DATA_DIR=${work}/data)"

# Its own process group, so that SIGTERM reaches pnpm and the service alike.
PORT=0 DATA_DIR="$work/data" setsid bash -c "$start_command" >"$work/stdout" 2>"$work/stderr" &
group=$!
stop() { kill -TERM -- "-$group" 2>/dev/null || true; }
fail() {
  echo "FAIL: $1" >&2
  echo "-- stdout" >&2 && tail -n 40 "$work/stdout" >&2
  echo "-- stderr" >&2 && tail -n 40 "$work/stderr" >&2
  stop
  exit 1
}

listening=""
for _ in $(seq 1 300); do
  listening=$(grep -m1 '"message":"listening"' "$work/stderr" || true)
  [ -n "$listening" ] && break
  kill -0 "$group" 2>/dev/null || fail "the start command exited before the service listened"
  sleep 1
done
[ -n "$listening" ] || fail "the service did not listen within 300 s"
echo "$listening"

url=$(sed -E 's/.*"url":"([^"]+)".*/\1/' <<<"$listening")
runtime=$(sed -E 's/.*"node":"([^"]+)".*/\1/' <<<"$listening")
[ "$runtime" = "$pin" ] || fail "the service runs on Node $runtime, not the pinned $pin"
token=$(sed -n 's/^ *PLANT_STORE_TOKEN=//p' "$work/stdout" | head -n 1)
[ -n "$token" ] || fail "no first-run token was printed"

curl -fsS "$url/healthz" >/dev/null || fail "GET /healthz did not answer 200"
body='{"id": 9007199254740993, "name": "Monstera", "tag": "aroid"}'
answer=$(curl -sS -X POST "$url/plants" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$body")
[ "$answer" = '{"id":9007199254740993,"name":"Monstera","tag":"aroid"}' ] || fail "POST /plants answered $answer"
echo "POST /plants with the printed token: $answer"

stop
# Every process of the group, not only its leader: bash and pnpm may be gone while the service
# still drains and writes its last lines (the access lines and "stopped" go out at exit).
for _ in $(seq 1 30); do
  kill -0 -- "-$group" 2>/dev/null || break
  sleep 1
done
kill -0 -- "-$group" 2>/dev/null && fail "still running 30 s after SIGTERM"
grep -q '"message":"stopped"' "$work/stderr" || fail "the service did not log that it stopped"
echo "started on $runtime (the pin), served, and stopped on SIGTERM"
