#!/usr/bin/env bash
# Peak memory and wall time of `auditor` on hostile submissions (issue 14): each bomb is built
# here (git CLI, python3), audited with offline judges, and measured with /usr/bin/time.
# The bar: every case under 1 GB peak RSS and under 30 s.
#
#   diff       a 2 MB repository whose history rewrites a 200 MB compressible file 4 times
#   image      a 0.4 MB PDF declaring one 20000x20000 RGB image (1.2 GB once decoded)
#   findings   one Python line with 150,000 os.system calls
#   padded     os.system hidden in a .py file padded to 3 MB (over the 2 MB parse limit)
#   bigpdf     a sparse 3 GB --pdf (refused before it is read: exit 2)
#   paths      a 1000-page PDF listing 400,000 distinct file paths (issue 25 item 3, ten times the
#              issue's 40k), 1,000 of them in the repository
#
# Measured 2026-11-23, debug binary (AUDITOR=$CARGO_TARGET_DIR/debug/auditor), 2 shared cores:
#   diff      exit 3  peak RSS   32.9 MB  wall   0.24 s   (was 19 GB before the diff caps)
#   image     exit 0  peak RSS   48.3 MB  wall   0.23 s   (was 4 GB)
#   findings  exit 3  peak RSS  365.3 MB  wall   2.55 s   (was 111 s, 1.2 GB, 231 MB JSON;
#                                                           now 111 KB JSON)
#   padded    exit 3  peak RSS   37.2 MB  wall   0.21 s   (os.system found by the textual scan)
#   bigpdf    exit 2  peak RSS   20.6 MB  wall   0.02 s   (was 3 GB read before the check)
# Measured 2026-11-26 (issue 25 item 3), same debug binary, 2 cores shared with other builds
# (load 5):
#   paths     exit 3  peak RSS  238.1 MB  wall  24.53 s   (12.0 s of CPU; 178 KB JSON, 76 KB
#                                                           HTML; the issue measured 300 s,
#                                                           1.55 GB, 223 MB JSON at 120k)
#   the same PDF in `auditor batch`: parent peak 72 MB, evidence child 244 MB, store 24 MB
#
# Usage: scripts/hostile-bombs.sh        Env: AUDITOR=path/to/auditor (default
# target/release/auditor, built if missing), KEEP=1 keeps the work directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${AUDITOR:-$ROOT/target/release/auditor}
if [[ ! -x $BIN ]]; then
  (cd "$ROOT" && cargo build --release --bin auditor)
fi
WORK=$(mktemp -d)
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export GIT_AUTHOR_NAME=s GIT_AUTHOR_EMAIL=s@example.org GIT_COMMITTER_NAME=s GIT_COMMITTER_EMAIL=s@example.org

new_repo() { rm -rf "$1"; mkdir -p "$1/src"; git -C "$1" init -q; }
commit() { git -C "$1" add -A; git -C "$1" commit -qm "$2"; }

# diff bomb
new_repo diff
printf 'def f():\n    return 1\n' > diff/src/app.py
for i in 0 1 2 3; do
  python3 -c "import sys; l=(b'line %d ' % $i) * 4 + b'\n'; open('diff/data.txt','wb').write(l * (200*1024*1024 // len(l)))"
  commit diff "rewrite $i"
done
git -C diff gc -q --aggressive
rm diff/data.txt

# image bomb
python3 - <<'EOF'
import zlib
w = h = 20000
data = zlib.compress(bytes(w * h * 3), 9)
content = (b"q 180 0 0 180 10 10 cm /Im0 Do Q\n"
           b"BT /F1 9 Tf 10 190 Td (Architecture report: the detectives run in parallel.) Tj ET\n")
objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im0 5 0 R >> /Font << /F1 6 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (w, h, len(data)) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
out = bytearray(b"%PDF-1.4\n"); offs = []
for i, b in enumerate(objs):
    offs.append(len(out)); out += b"%d 0 obj\n" % (i + 1) + b + b"\nendobj\n"
x = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
for o in offs:
    out += b"%010d 00000 n \n" % o
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
open("image.pdf", "wb").write(out)
EOF
new_repo plain
printf 'x = 1\n' > plain/src/app.py
commit plain init

# finding explosion
new_repo findings
python3 -c "open('findings/src/x.py','w').write('import os\n' + 'os.system(1);' * 150000 + '\n')"
commit findings init

# padded shell call
new_repo padded
python3 -c "
t = 'import os\n\ndef clone(url):\n    os.system(\"git clone \" + url)\n'
open('padded/src/tools.py','w').write(t + ('# ' + 'padding ' * 12 + '\n') * 32000)"
commit padded init

# a sparse 3 GB PDF
printf '%%PDF-1.4\n' > big.pdf
truncate -s 3G big.pdf

# a report listing 400,000 file paths (400 per page, 1000 pages), and a repository holding 1000
new_repo paths
python3 - <<'PY'
import os, zlib
for i in range(1000):
    d = "paths/src/pkg%d" % (i % 97)
    os.makedirs(d, exist_ok=True)
    open("%s/module_%d.py" % (d, i), "w").write("x = %d\n" % i)
n, per_page, pages, i = 400000, 400, [], 0
while i < n:
    lines = [b"BT /F1 4 Tf 10 1000 Td 5 TL (Architecture report: the files of the project.) Tj T*"]
    for _ in range(per_page):
        if i >= n:
            break
        lines.append(b"(src/pkg%d/module_%d.py) Tj T*" % (i % 97, i))
        i += 1
    lines.append(b"ET")
    pages.append(b"\n".join(lines))
objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>", 3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
kids, nxt = [], 4
for content in pages:
    c = zlib.compress(content)
    objs[nxt] = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(c) + c + b"\nendstream"
    objs[nxt + 1] = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 1010] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % nxt
    kids.append(b"%d 0 R" % (nxt + 1))
    nxt += 2
objs[2] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(kids)
out, offs = bytearray(b"%PDF-1.4\n"), {}
for k in sorted(objs):
    offs[k] = len(out)
    out += b"%d 0 obj\n" % k + objs[k] + b"\nendobj\n"
x, size = len(out), max(objs) + 1
out += b"xref\n0 %d\n0000000000 65535 f \n" % size
for k in range(1, size):
    out += b"%010d 00000 n \n" % offs[k]
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, x)
open("paths.pdf", "wb").write(out)
PY
commit paths init

measure() {
  local name=$1; shift
  local code=0
  /usr/bin/time -f "%M %e" -o "$name.time" "$BIN" "$@" >"$name.out" 2>"$name.err" || code=$?
  read -r kb secs < <(tail -n 1 "$name.time")
  printf '%-9s exit %s  peak RSS %6.1f MB  wall %6.2f s\n' "$name" "$code" "$(echo "$kb/1024" | bc -l)" "$secs"
}

echo "auditor: $BIN"
measure diff     --repo diff     --judges offline --output out/diff.md
measure image    --repo plain    --pdf image.pdf --judges offline --output out/image.md
measure findings --repo findings --judges offline --output out/findings.md
measure padded   --repo padded   --judges offline --output out/padded.md
measure bigpdf   --repo plain    --pdf big.pdf --judges offline --output out/big.md
measure paths    --repo paths    --pdf paths.pdf --judges offline --output out/paths.md
ls -la out/ | awk 'NR>1 {print "  " $5 "\t" $9}'
