#!/usr/bin/env bash
# Time and peak memory of cohort code similarity (issue 24): N generated submissions of about
# LINES Python lines each (10 files), every one with the same template (~300 lines) and, for the
# first PAIRS pairs, the second one a copy of the first's own code with every identifier renamed
# and the functions reordered. Three runs, each under /usr/bin/time -v:
#   1. `auditor similarity TREES --out OUT1 --template TPL`  (a directory of working trees)
#   2. `auditor similarity cohort.csv --out OUT2 --template TPL` (git repositories: each one
#      cloned at HEAD, fingerprinted, stored in OUT2/batch.sqlite)
#   3. the same again (every fingerprint from the store: what a resumed batch pays)
# and checks that exactly the PAIRS copies are flagged.
#
# Usage: scripts/bench-similarity.sh [N=200] [LINES=3000] [PAIRS=5]
# Measured 2026-11-26, release binary, 2 cores shared with other engineers' builds (load 3.6-5.1),
# 200 submissions x 3,135 lines (10 files + the 300-line template), 5 copies:
#   1. working trees:                  wall  9.15 s, peak RSS 49 MB
#   2. git repos, cloned and stored:   wall 21.87 s, peak RSS 55 MB (200 clones + SQLite writes)
#   3. git repos, from the store:      wall  0.64 s, peak RSS 52 MB (a resumed batch's cost)
#   the 5 copies flagged (82-84%), no other pair.
# Env:   AUDITOR=path/to/auditor (default: $CARGO_TARGET_DIR/release/auditor, built if missing)
#        KEEP=1 keeps the work directory.
set -euo pipefail
N=${1:-200}
LINES=${2:-3000}
PAIRS=${3:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${AUDITOR:-${CARGO_TARGET_DIR:-$ROOT/target}/release/auditor}
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && cargo build --release --bin auditor)
fi
WORK=$(mktemp -d)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK" "$N" "$LINES" "$PAIRS" <<'EOF'
import os, random, re, sys

work, n, lines, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
KW = set("False None True and as assert async await break class continue def del elif else except "
         "finally for from global if import in is lambda nonlocal not or pass raise return try while "
         "with yield".split())

def name(r):
    return r.choice(["get", "set", "load", "make", "run", "read", "parse", "check", "build", "fix"]) + \
        "_" + r.choice(["state", "node", "graph", "judge", "item", "row", "path", "text", "score"]) + str(r.randint(0, 99))

def expr(r, d=0):
    k = r.randint(0, 9 if d < 2 else 3)
    if k == 0: return name(r)
    if k == 1: return str(r.randint(0, 1000))
    if k == 2: return repr(r.choice(["a", "key", "value", "id", "x"]))
    if k == 3: return name(r) + "." + name(r)
    if k == 4: return "%s(%s)" % (name(r), ", ".join(expr(r, d + 1) for _ in range(r.randint(0, 3))))
    if k == 5: return "%s %s %s" % (expr(r, d + 1), r.choice("+-*/%<>"), expr(r, d + 1))
    if k == 6: return "[%s]" % ", ".join(expr(r, d + 1) for _ in range(r.randint(0, 3)))
    if k == 7: return "{%s: %s}" % (expr(r, d + 1), expr(r, d + 1))
    if k == 8: return "%s[%s]" % (name(r), expr(r, d + 1))
    return "not " + expr(r, d + 1)

def block(r, ind, budget, d=0):
    out = []
    while budget > 0:
        k = r.randint(0, 9 if d < 3 else 4)
        p = "    " * ind
        if k <= 2:
            out.append("%s%s = %s" % (p, name(r), expr(r))); budget -= 1
        elif k == 3:
            out.append("%s%s(%s)" % (p, name(r), expr(r))); budget -= 1
        elif k == 4:
            out.append("%sreturn %s" % (p, expr(r))); budget -= 1; break
        elif k == 5:
            out.append("%sif %s:" % (p, expr(r))); inner = block(r, ind + 1, r.randint(1, 4), d + 1)
            out += inner; budget -= 1 + len(inner)
        elif k == 6:
            out.append("%sfor %s in %s:" % (p, name(r), expr(r))); inner = block(r, ind + 1, r.randint(1, 4), d + 1)
            out += inner; budget -= 1 + len(inner)
        elif k == 7:
            out.append("%swhile %s:" % (p, expr(r))); inner = block(r, ind + 1, r.randint(1, 3), d + 1)
            out += inner; budget -= 1 + len(inner)
        elif k == 8:
            out.append("%stry:" % p); inner = block(r, ind + 1, r.randint(1, 3), d + 1)
            out += inner; out.append("%sexcept %s as error:" % (p, name(r)))
            inner2 = block(r, ind + 1, 1, d + 1); out += inner2; budget -= 2 + len(inner) + len(inner2)
        else:
            out.append("%swith %s as %s:" % (p, expr(r), name(r))); inner = block(r, ind + 1, r.randint(1, 3), d + 1)
            out += inner; budget -= 1 + len(inner)
    return out or ["    " * ind + "pass"]

def functions(r, total):
    fs, count = [], 0
    while count < total:
        body = block(r, 1, r.randint(8, 30))
        f = ["def %s(%s):" % (name(r), ", ".join(name(r) for _ in range(r.randint(0, 3))))] + body + [""]
        fs.append("\n".join(f)); count += len(f)
    return fs

def rename_reorder(src_files):
    ident = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
    names = {}
    def sub(m):
        w = m.group(0)
        if w in KW: return w
        return names.setdefault(w, "q%d" % len(names))
    return [ident.sub(sub, "\n".join(reversed(fs))) for fs in reversed(src_files)]

tpl_r = random.Random(12345)
template = "\n".join(functions(tpl_r, 300))
os.makedirs(os.path.join(work, "template"), exist_ok=True)
open(os.path.join(work, "template", "skeleton.py"), "w").write(template)
own = {}
for i in range(n):
    r = random.Random(i)
    per_file = (lines - 300) // 10
    files = [functions(r, per_file) for _ in range(10)]
    if i % 2 == 1 and i // 2 < pairs:
        texts = rename_reorder(own[i - 1])
    else:
        texts = ["\n".join(f) for f in files]
    own[i] = files
    d = os.path.join(work, "trees", "s%03d" % i)
    os.makedirs(os.path.join(d, "src", "pkg"), exist_ok=True)
    open(os.path.join(d, "src", "skeleton.py"), "w").write(template)
    for j, t in enumerate(texts):
        open(os.path.join(d, "src", "pkg", "m%d.py" % j), "w").write(t + "\n")
EOF

echo "id,repo,pdf" > "$WORK/cohort.csv"
for d in "$WORK"/trees/*/; do
  id=$(basename "$d")
  (cd "$d" && git init -q && git add -A && GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
     git -c user.name=s -c user.email=s@e commit -qm code) 
  echo "$id,$d," >> "$WORK/cohort.csv"
done
(cd "$WORK/template" && git init -q && git add -A && git -c user.name=s -c user.email=s@e commit -qm tpl)
lines=$(cat "$WORK"/trees/s000/src/*.py "$WORK"/trees/s000/src/pkg/*.py | wc -l)
echo "cohort: $N submissions, $lines Python lines in s000, $PAIRS renamed+reordered copies; $(nproc) cores"

measure() {
  local label=$1; shift
  /usr/bin/time -v "$@" > "$WORK/out.txt" 2> "$WORK/time.txt" || true
  local wall rss
  wall=$(grep 'Elapsed (wall clock)' "$WORK/time.txt" | awk '{print $NF}')
  rss=$(grep 'Maximum resident set size' "$WORK/time.txt" | awk '{print $NF}')
  local user sys
  user=$(grep 'User time' "$WORK/time.txt" | awk '{print $NF}')
  sys=$(grep 'System time' "$WORK/time.txt" | awk '{print $NF}')
  echo "$label: wall $wall (user $user s, sys $sys s), peak RSS $((rss / 1024)) MB"
  grep -E '^Compared|^  ' "$WORK/out.txt" | head -8
}

measure "1. working trees" "$BIN" similarity "$WORK/trees" --out "$WORK/out1" --template "$WORK/template"
measure "2. git repos, cloned and stored" "$BIN" similarity "$WORK/cohort.csv" --out "$WORK/out2" --template "$WORK/template"
measure "3. git repos, from the store" "$BIN" similarity "$WORK/cohort.csv" --out "$WORK/out2" --template "$WORK/template"
flagged=$(($(wc -l < "$WORK/out1/similarity.csv") - 1))
echo "flagged pairs: $flagged (expected $PAIRS)"
[[ $flagged == "$PAIRS" ]]
