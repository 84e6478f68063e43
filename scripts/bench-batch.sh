#!/usr/bin/env bash
# Memory and throughput of `auditor batch` (issue 6, item 7).
#
# Builds N fixture student repositories (git CLI, dated commits), then grades them with
# `--concurrency C` against judges that answer after LATENCY_MS behind a limiter of LIMIT
# requests at once (the hidden --simulate-* options: offline judges standing in for an
# OpenAI-compatible server with that latency behind the LLM limiter). Those options exist only
# in builds with debug assertions: the script builds the `sim` profile (release optimisation
# plus debug assertions), never the release binary users get. Reports peak RSS
# (/usr/bin/time -v) and throughput against the limiter's ceiling (LIMIT / latency requests/s).
#
# Usage: scripts/bench-batch.sh [N=200] [C=32] [LATENCY_MS=1000] [LIMIT=32]
# Measured 2026-11-22 on 2 shared cores (load ~11), 200 submissions x 30 requests,
# --concurrency 32, 1 s latency, limiter 32 (ceiling 32 req/s, 187.5 s):
#   release binary: wall 188.8 s = 99.3% of the ceiling; peak RSS 22.5 MB.
#   debug binary:   wall 191.7 s = 97.8%; peak RSS 25.4 MB.
#   debug, AUDITOR_BATCH_SYNC=full (fsync per commit): 218.2 s = 85.9%; 25.3 MB.
# Remeasured 2026-11-22 (release binary) after the switch to mimalloc (src/lib.rs), 2 shared
# cores with another engineer's CPU benchmarks running:
#   mimalloc defaults (load 2.6-3.3):                   wall 189.0 s = 99.2%; peak RSS 94.3 MB.
#   no THP + purge_delay 0 (src/main.rs tune_mimalloc; load 1.8-0.5, run alongside
#   scripts/bench-batch-llm.sh):                        wall 189.0 s = 99.2%; peak RSS 40.7 MB.
#   (N=40: defaults 92.9 MB, of which 56 MB AnonHugePages; without THP only: 39.8 MB.)
# Env:   AUDITOR=path/to/auditor (default: target/sim/auditor, built if missing)
#        KEEP=1 keeps the work directory.
set -euo pipefail
N=${1:-200}
C=${2:-32}
LATENCY_MS=${3:-1000}
LIMIT=${4:-32}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${AUDITOR:-${CARGO_TARGET_DIR:-$ROOT/target}/sim/auditor}
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && cargo build --profile sim --bin auditor)
fi
WORK=$(mktemp -d)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/repos"
echo "id,repo,pdf" > "$WORK/cohort.csv"
for i in $(seq 0 $((N - 1))); do
  d="$WORK/repos/s$i"
  mkdir -p "$d/src"
  (
    cd "$d"
    git init -q
    for step in 1 2 3; do
      printf 'from langgraph.graph import StateGraph\n# student %s step %s\n' "$i" "$step" > "src/graph_$step.py"
      git add .
      GIT_AUTHOR_DATE="2026-01-0${step}T10:00:00Z" GIT_COMMITTER_DATE="2026-01-0${step}T10:00:00Z" \
        git -c user.name="s$i" -c user.email="s$i@example.org" commit -qm "step $step"
    done
  )
  echo "s$i,repos/s$i," >> "$WORK/cohort.csv"
done
DIMS=$(python3 -c "import json,sys; print(len(json.load(open('$ROOT/rubric.json'))['dimensions']))")
REQUESTS=$((N * DIMS * 3))
cd "$WORK"
echo "cohort: $N submissions x $DIMS criteria x 3 judges = $REQUESTS judge requests"
echo "run: --concurrency $C, latency ${LATENCY_MS} ms, limiter $LIMIT in flight"
start=$(date +%s.%N)
set +e
/usr/bin/time -v "$BIN" batch cohort.csv --out out --judges offline --concurrency "$C" \
  --simulate-latency-ms "$LATENCY_MS" --simulate-max-in-flight "$LIMIT" --progress-every 15 \
  < /dev/null > run.out 2> time.err
code=$?
set -e
end=$(date +%s.%N)
grep -E '^batch:' time.err | tail -2 || true
cat run.out
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' time.err)
python3 - "$start" "$end" "$REQUESTS" "$LIMIT" "$LATENCY_MS" "$rss_kb" "$code" <<'PY'
import sys
start, end, req, limit, lat, rss, code = sys.argv[1:]
wall = float(end) - float(start)
req, limit, lat = int(req), int(limit), int(lat)
ceiling = limit / (lat / 1000.0)          # requests/s the limiter allows
ideal = req / ceiling
print(f"exit code {code}")
print(f"wall {wall:.1f} s; ideal (limiter-bound) {ideal:.1f} s")
print(f"throughput {req / wall:.2f} req/s of {ceiling:.2f} allowed = {100 * ideal / wall:.1f}%")
print(f"peak RSS {int(rss) / 1024:.1f} MB")
PY
