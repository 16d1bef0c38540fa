#!/usr/bin/env bash
# First contact (issue 28): what a new user does after the README's first command, on the service
# that command started. Run after `npm ci`, from the repository's root, with no server variable set:
#
#   bash .ci/first-contact.sh
#
# 1. `npm start`, exactly as the README's first command says, in its own process group; waits for
#    /api/health (prints how long it took), checks that it did not compile again (npm ci's `prepare`
#    built these sources) and that the embedded adapters answered.
# 2. Registers a user (curl), imports docs/examples/greeting.flow.json (two nodes, one connection)
#    with `npx flowctl flows import`, turns the flow's public trigger on and makes its key.
# 3. Runs the flow through POST /api/public/flows/{id}/trigger and reads the run back twice:
#    `npx flowctl runs tail --no-follow` (exit 0 only when the run completed) and GET /api/processes/{id}.
# 4. Opens the docs a newcomer opens: /api/docs (Swagger UI) and /api/openapi.json, and the web
#    console at / with the bundle its page names (built by npm ci's `prepare`).
# 5. Backs the running service up (`npm run backup`), stops it with SIGTERM, checks that it shut
#    down cleanly, and restores the backup into an empty DATA_DIR (`npm run restore`).
# Any step that fails prints the service's log and exits non-zero.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PORT="${PORT:-3000}"
BASE="http://127.0.0.1:$PORT/api"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/first-contact-XXXXXX")"
LOG="$WORK/service.log"
SERVICE_PID=""

say() { echo "[first-contact] $*"; }
fail() {
  say "FAILED: $*"
  if [ -f "$LOG" ]; then say "the service's log (last 40 lines):"; tail -n 40 "$LOG" | sed 's/^/    /'; fi
  exit 1
}
stop_service() {
  if [ -n "$SERVICE_PID" ] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -TERM -- "-$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$SERVICE_PID" 2>/dev/null || true
  fi
}
trap 'stop_service; rm -rf "$WORK"' EXIT
# A field of the JSON on stdin, by a dotted path; fails when it is missing.
json() { node -e 'let v=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))v=v?.[k];if(v===undefined)process.exit(3);process.stdout.write(typeof v==="string"?v:JSON.stringify(v))' "$1"; }
# curl answering "<status> <body>"; never fails on a 4xx/5xx, so the caller can say what it got.
call() { curl -sS -o "$WORK/body" -w '%{http_code}' "$@" || true; }

for var in EVENTSTORE_URL MONGODB_URL KAFKA_BROKERS; do
  [ -z "${!var:-}" ] || fail "$var is set: the first contact runs the embedded default the README's first command gives"
done
if curl -s -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; then fail "something already listens on port $PORT"; fi

say "npm start (the README's first command, after npm ci)"
started=$(date +%s%N)
setsid npm start >"$LOG" 2>&1 &
SERVICE_PID=$!
until curl -sf -o "$WORK/health" "$BASE/health" 2>/dev/null; do
  kill -0 "$SERVICE_PID" 2>/dev/null || fail "npm start exited before /api/health answered"
  [ $(( ($(date +%s%N) - started) / 1000000000 )) -lt 180 ] || fail "/api/health did not answer within 180 s"
  sleep 0.05
done
say "/api/health answered $(( ($(date +%s%N) - started) / 1000000 )) ms after npm start"
# npm ci's `prepare` built dist/: a start on unchanged sources must not compile again.
if grep -q '^build: ' "$LOG"; then fail "npm start compiled although npm ci had built these sources: $(grep '^build: ' "$LOG" | head -1)"; fi
for port in eventStore readStore bus; do
  [ "$(json "ports.$port.ok" <"$WORK/health")" = true ] || fail "health: $port is not ok: $(cat "$WORK/health")"
done
say "adapters: $(json ports.eventStore.adapter <"$WORK/health") event store, $(json ports.readStore.adapter <"$WORK/health") read store, $(json ports.bus.adapter <"$WORK/health") bus"

email="first-contact-$(date +%s)-$RANDOM@example.com"
status=$(call -X POST "$BASE/auth/register" -H 'content-type: application/json' -d "{\"email\":\"$email\",\"password\":\"correct horse battery staple\",\"name\":\"Ada\"}")
[ "$status" = 201 ] || fail "register answered $status: $(cat "$WORK/body")"
export FLOWCTL_TOKEN; FLOWCTL_TOKEN=$(json token <"$WORK/body")
export XDG_CONFIG_HOME="$WORK/config" # flowctl keeps nothing of this run in the user's home
say "registered $email"

npx flowctl --url "$BASE" --json flows import docs/examples/greeting.flow.json >"$WORK/import" || fail "flowctl flows import exited $?"
flow_id=$(json flowId <"$WORK/import")
[ "$(json nodes <"$WORK/import")" = 2 ] || fail "the imported flow does not have 2 nodes: $(cat "$WORK/import")"
say "flowctl imported the flow $flow_id (2 nodes, $(json edges <"$WORK/import") connection)"

status=$(call -X PUT "$BASE/flows/$flow_id/trigger" -H "authorization: Bearer $FLOWCTL_TOKEN" -H 'content-type: application/json' -d '{"enabled":true}')
[ "$status" = 200 ] || fail "PUT /flows/{id}/trigger answered $status: $(cat "$WORK/body")"
status=$(call -X POST "$BASE/flows/$flow_id/trigger/regenerate-key" -H "authorization: Bearer $FLOWCTL_TOKEN")
[ "$status" = 200 ] || fail "POST /flows/{id}/trigger/regenerate-key answered $status: $(cat "$WORK/body")"
key=$(json key <"$WORK/body")

status=$(call -X POST "$BASE/public/flows/$flow_id/trigger" -H "X-Trigger-Key: $key" -H 'content-type: application/json' -d '{"name":"Ada"}')
[ "$status" = 200 ] || fail "the public trigger answered $status: $(cat "$WORK/body")"
process_id=$(json processId <"$WORK/body")
say "the public trigger ran the flow: process $process_id, $(json status <"$WORK/body")"

npx flowctl --url "$BASE" runs tail "$process_id" --no-follow >"$WORK/tail" 2>&1 || { cat "$WORK/tail"; fail "flowctl runs tail exited $? (0 only for a completed run)"; }
sed 's/^/    /' "$WORK/tail"
status=$(call "$BASE/processes/$process_id" -H "authorization: Bearer $FLOWCTL_TOKEN")
[ "$status" = 200 ] || fail "GET /processes/{id} answered $status: $(cat "$WORK/body")"
[ "$(json process.status <"$WORK/body")" = completed ] || fail "the run is not completed: $(cat "$WORK/body")"
shout=$(json process.outputs.shout <"$WORK/body") || fail "the run has no output of the node shout: $(cat "$WORK/body")"
[ "$shout" = 'hello Ada!' ] || fail "the last node's output is '$shout', not 'hello Ada!'"
say "GET /processes/$process_id: completed, the last node said '$shout'"

status=$(call "$BASE/docs")
[ "$status" = 200 ] && grep -q 'swagger-ui' "$WORK/body" || fail "/api/docs answered $status without Swagger UI"
status=$(call "$BASE/openapi.json")
[ "$status" = 200 ] || fail "/api/openapi.json answered $status"
say "/api/docs serves Swagger UI over /api/openapi.json ($(json openapi <"$WORK/body"), $(node -e 'process.stdout.write(String(Object.keys(JSON.parse(require("fs").readFileSync(0,"utf8")).paths).length))' <"$WORK/body") paths)"
status=$(call "http://127.0.0.1:$PORT/cli/device?user_code=ABCD-EFGH")
[ "$status" = 200 ] && grep -q '<div id="root">' "$WORK/body" || fail "the console's device page /cli/device answered $status: $(head -c 300 "$WORK/body")"
bundle=$(grep -o '/assets/main-[A-Za-z0-9]*\.js' "$WORK/body" | head -1)
[ -n "$bundle" ] || fail "the console's page names no bundle: $(head -c 300 "$WORK/body")"
status=$(call "http://127.0.0.1:$PORT$bundle")
[ "$status" = 200 ] || fail "the console's bundle $bundle answered $status"
say "the web console answers at / and /cli/device, with its bundle $bundle ($(wc -c <"$WORK/body") bytes)"

npm run --silent backup -- "$WORK/backup" >"$WORK/backup.out" 2>&1 || { cat "$WORK/backup.out"; fail "npm run backup exited $? while the service ran"; }
backup_events=$(tail -n 1 "$WORK/backup.out" | json events) || fail "npm run backup printed no summary: $(cat "$WORK/backup.out")"
say "npm run backup (service running): $backup_events events, $(tail -n 1 "$WORK/backup.out" | json files) files"

kill -TERM -- "-$SERVICE_PID"
for _ in $(seq 1 150); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SERVICE_PID" 2>/dev/null && fail "the service did not stop within 15 s of SIGTERM"
wait "$SERVICE_PID" 2>/dev/null || true
grep -q '"shutting down"' "$LOG" || fail "the service's log has no graceful shutdown"
SERVICE_PID=""
say "stopped on SIGTERM"

DATA_DIR="$WORK/restored" npm run --silent restore -- "$WORK/backup" >"$WORK/restore.out" 2>&1 || { cat "$WORK/restore.out"; fail "npm run restore exited $?"; }
[ "$(tail -n 1 "$WORK/restore.out" | json events)" = "$backup_events" ] || fail "the restore does not hold the backup's $backup_events events: $(cat "$WORK/restore.out")"
say "npm run restore into an empty DATA_DIR: $backup_events events; passed"
