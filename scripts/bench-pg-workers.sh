#!/usr/bin/env bash
# One worker vs two workers on one cohort through a shared PostgreSQL store (issue 17):
# `auditor batch --store postgres://…` with LLM judges against scripts/fake-openai-server.py
# (answers after LATENCY_MS), each worker limited to CONC LLM requests in flight
# (--max-concurrency) and SUBS submissions at once (--concurrency).
#
# Cohort as in scripts/bench-batch-llm.sh: `auditor sample` once, then N clones with one commit of
# their own (every submission its own requests: no cache hit across submissions).
# A throwaway PostgreSQL server (Debian's postgresql package: initdb + pg_ctl in the work
# directory, as the postgres user when run as root) holds one database per run.
#
# Reports for each run: wall time, judge requests the server counted, jobs done / graded more
# than once, request keys asked more than once, grades.csv rows of each worker, and the ideal
# time (requests / (workers x CONC) x latency).
#
# Usage: scripts/bench-pg-workers.sh [N=200] [LATENCY_MS=1000] [CONC=16] [SUBS=8]
# Env:   AUDITOR=path/to/auditor (default target/release/auditor; built if missing)
#        RUNS="1 2" (default) which runs: 1 = one worker, 2 = two workers, kill = two workers
#          with worker-1 SIGKILLed after KILL_AT seconds (default 60) and a lease of LEASE
#          seconds (default 10): worker-2 takes its jobs over
#          restart = one worker, the database restarted (pg_ctl restart -m fast: every
#          connection ended) at each of RESTART_AT seconds (default "30 60") after the start:
#          compare its requests with RUNS=1's
#        KEEP=1 keeps the work directory; PY=python3
#
# Measured 2026-11-23, debug binary (dependencies at opt-level 2) of branch pg, 2 shared cores
# (load 4.0-4.6: other engineers' builds), PostgreSQL 15 (fsync on), 200 submissions x (30
# judge requests + 1 vision request) = 6200 requests, latency 1 s, per worker --concurrency 8
# --max-concurrency 16:
#   1 worker:  wall 405.9 s (ideal 387.5 s = 95%); 6200 requests counted by the server; store:
#              6000 judge requests asked, 6000 distinct, 0 asked twice; 200/200 done, max runs 1
#   2 workers: wall 209.9 s (ideal 193.8 s = 92%), 1.93x faster; 6200 requests counted; 6000
#              asked, 0 twice; 200/200 done, max runs 1, graded by both; each worker's
#              grades.csv has the 200 rows
#   RUNS=kill KILL_AT=100 LEASE=10 (2 workers, worker-1 SIGKILLed at 100 s holding 8 unfinished
#   jobs): wall 313.2 s; 200/200 done; the 8 jobs taken over by worker-2 (runs 2), every other
#   job run once; the server counted 6217 requests = 6200 + 17 sent again (bound: worker-1's
#   16 judge requests in flight + 1 vision request per evidence collection in flight, <= 8).
#   The store's "asked" counter (6195, 195 keys twice) counts requests handed to the limiter,
#   queued ones included: requests that never reached the server are counted there too.
# Measured 2026-11-26 (issue 25 item 9), debug binary, PostgreSQL 15, load 4.3-5.1:
#   AUDITOR=<debug auditor> RUNS="1 restart" RESTART_AT="8 16" scripts/bench-pg-workers.sh 12 300 16 4
#   clean run:                   372 requests counted by the server, 12/12 done, exit 0
#   database restarted at 8 s and 16 s (wall 20.9 s): 372 requests, 0 keys asked twice,
#                                12/12 done, every job run once (claims kept), exit 0
set -euo pipefail
N=${1:-200}
LATENCY_MS=${2:-1000}
CONC=${3:-16}
SUBS=${4:-8}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${AUDITOR:-$ROOT/target/release/auditor}
PY=${PY:-python3}
for v in "$N" "$LATENCY_MS" "$CONC" "$SUBS"; do
  [[ $v =~ ^[0-9]+$ ]] && (( v > 0 )) || { echo "bench-pg-workers: arguments must be positive integers: N LATENCY_MS CONC SUBS (got '$v')" >&2; exit 2; }
done
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x $PGBIN/initdb && -x $PGBIN/pg_ctl ]] || { echo "bench-pg-workers: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): apt-get install postgresql" >&2; exit 2; }
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && cargo build --release --bin auditor)
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")

WORK=$(mktemp -d /tmp/bench-pg-workers.XXXXXX)
chmod 755 "$WORK"
AS=()
if [[ $(id -u) == 0 ]]; then AS=(runuser -u postgres --); fi
SERVER_PID=
cleanup() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null || true
  if [[ -d $WORK/pg/data ]]; then "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate -w stop > /dev/null 2>&1 || true; fi
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- PostgreSQL -----------------------------------------------------------------------------
mkdir -p "$WORK/pg"
[[ ${#AS[@]} -gt 0 ]] && chown postgres:postgres "$WORK/pg"
PGPORT=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
"${AS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync > /dev/null
"${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -w \
  -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=50" start > /dev/null
psql() { "$PGBIN/psql" -X -A -t -h 127.0.0.1 -p "$PGPORT" -U postgres "$@"; }
echo "postgres: $("$PGBIN/postgres" --version) on 127.0.0.1:$PGPORT"

# --- cohort ---------------------------------------------------------------------------------
t0=$(date +%s.%N)
"$BIN" sample --out "$WORK/sample" > /dev/null
mkdir -p "$WORK/repos"
echo "id,repo,pdf" > "$WORK/cohort.csv"
for i in $(seq 0 $((N - 1))); do
  d="$WORK/repos/s$i"
  git clone -q "$WORK/sample/repo" "$d"
  (
    cd "$d"
    printf '# Student %s\n' "$i" > STUDENT.md
    git add STUDENT.md
    GIT_AUTHOR_DATE="2026-01-10T10:00:00Z" GIT_COMMITTER_DATE="2026-01-10T10:00:00Z" \
      git -c user.name="s$i" -c user.email="s$i@example.org" commit -qm "Add student note for s$i"
  )
  echo "s$i,$d,$WORK/sample/report.pdf" >> "$WORK/cohort.csv"
done
printf 'cohort: %d submissions built in %.1f s\n' "$N" "$("$PY" -c "print($(date +%s.%N) - $t0)")"

# --- fake LLM server ------------------------------------------------------------------------
"$PY" "$ROOT/scripts/fake-openai-server.py" --port 0 --latency-ms "$LATENCY_MS" \
  > "$WORK/server.out" 2> "$WORK/server.err" &
SERVER_PID=$!
PORT=
for _ in $(seq 1 100); do
  PORT=$(awk '/^listening on/ {print $3}' "$WORK/server.out" 2>/dev/null || true)
  [[ -n $PORT ]] && break
  sleep 0.1
done
[[ -n $PORT ]] || { echo "fake server did not start" >&2; cat "$WORK/server.err" >&2; exit 1; }
served() { "$PY" -c "import json,urllib.request; print(json.load(urllib.request.urlopen('http://127.0.0.1:$PORT/stats', timeout=10))['requests'])"; }

# --- runs -----------------------------------------------------------------------------------
# run WORKERS: a fresh database, WORKERS workers started together, each with its own --out.
run() {
  local workers=$1 db="w$1" kill_at=${2:-0} lease=${3:-60} restarts=${4:-} before after start end pids=() codes=() restarter=
  [[ $kill_at == 0 ]] || db="kill"
  [[ -z $restarts ]] || db="restart"
  psql -d postgres -c "CREATE DATABASE $db" > /dev/null
  before=$(served)
  start=$(date +%s.%N)
  for w in $(seq 1 "$workers"); do
    env -u AUDITOR_VISION_MODEL -u AUDITOR_RPM -u OTEL_EXPORTER_OTLP_ENDPOINT \
      OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=sk-bench AUDITOR_MODEL=bench-model \
      AUDITOR_WORKER_ID="worker-$w" AUDITOR_BATCH_LEASE_SECS="$lease" \
      "$BIN" batch "$WORK/cohort.csv" --out "$WORK/out-$db-$w" --judges llm \
        --store "postgres://postgres:bench@127.0.0.1:$PGPORT/$db" \
        --concurrency "$SUBS" --max-concurrency "$CONC" --progress-every 30 \
        < /dev/null > "$WORK/run-$db-$w.out" 2> "$WORK/run-$db-$w.err" &
    pids+=($!)
  done
  if [[ -n $restarts ]]; then
    (
      t=0
      for at in $restarts; do
        sleep $((at - t)); t=$at
        "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/log" -m fast -w restart > /dev/null
        echo "  database restarted at ${at} s"
      done
    ) &
    restarter=$!
  fi
  if [[ $kill_at != 0 ]]; then
    sleep "$kill_at"
    kill -9 "${pids[0]}"
    echo "  worker-1 SIGKILLed after ${kill_at} s; $(psql -d "$db" -c "SELECT count(*) FROM auditor_jobs WHERE claimed_by = 'worker-1' AND status = 'running'") of its jobs unfinished"
  fi
  for p in "${pids[@]}"; do
    if wait "$p"; then codes+=(0); else codes+=($?); fi
  done
  end=$(date +%s.%N)
  [[ -z $restarter ]] || wait "$restarter" || true
  after=$(served)
  local q="SELECT count(*) FILTER (WHERE status='done'), count(*), COALESCE(max(runs),0), count(DISTINCT claimed_by), count(*) FILTER (WHERE runs > 1) FROM auditor_jobs"
  local jobs; jobs=$(psql -d "$db" -c "$q")
  local asked; asked=$(psql -d "$db" -c "SELECT COALESCE(sum(asked),0), count(*), count(*) FILTER (WHERE asked > 1) FROM auditor_requests")
  local rows=""
  for w in $(seq 1 "$workers"); do
    if [[ -f $WORK/out-$db-$w/grades.csv ]]; then
      rows+=" $(($(wc -l < "$WORK/out-$db-$w/grades.csv") - 1))"
    else
      rows+=" none"
    fi
  done
  "$PY" - "$workers" "$start" "$end" "$before" "$after" "$jobs" "$asked" "$rows" "${codes[*]}" "$CONC" "$LATENCY_MS" <<'PY'
import sys
w, start, end, before, after, jobs, asked, rows, codes, conc, lat = sys.argv[1:]
wall = float(end) - float(start)
requests = int(after) - int(before)
done, total, max_runs, claimers, taken = jobs.split("|")
a_sum, a_keys, a_twice = asked.split("|")
ideal = requests / (int(w) * int(conc)) * int(lat) / 1000
print(f"{w} worker(s): wall {wall:.1f} s (ideal {ideal:.1f} s = {100 * ideal / wall:.0f}%); exit codes {codes}")
print(f"  server counted {requests} requests; store: {a_sum} asked, {a_keys} distinct keys, {a_twice} asked more than once")
print(f"  jobs {done}/{total} done, max runs per job {max_runs} ({taken} jobs run more than once), graded by {claimers} worker(s); grades.csv rows per worker:{rows}")
PY
}
echo "per worker: --concurrency $SUBS --max-concurrency $CONC; latency ${LATENCY_MS} ms; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in ${RUNS:-1 2}; do
  case $r in
    1) run 1 ;;
    2) run 2 ;;
    kill) run 2 "${KILL_AT:-60}" "${LEASE:-10}" ;;
    restart) run 1 0 60 "${RESTART_AT:-30 60}" ;;
    *) echo "bench-pg-workers: unknown run '$r' in RUNS (1, 2, kill, restart)" >&2; exit 2 ;;
  esac
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
