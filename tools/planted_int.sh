#!/bin/sh
# planted_int.sh [BUILD [SECONDS]] - how fast the planted bugs of the integer forms are found: every bug of
# tests/plugins/int4.c (linear_8da4w: nibble block sign zp order tieaway; the 16a8w linear: tie16 wrap16 chan16;
# linear_qd8 / matmul_qd8: qd8tie qd8per qd8zp qd8trans; tieaway and qd8tie with strict=1, the only way a tie rule is
# judged exactly), each measured twice:
#   - the quick suite's cases of its op (linear_8da4w; linear with dt=qs16; linear_qd8 and matmul_qd8): how many FAIL;
#   - `parity fuzz` with the default weights for SECONDS (default 60) on one job, graph seeds in order: the first
#     finding's graph seed (graphs to the first finding), the campaign's rate, and the seconds to the first finding
#     that rate gives (seed / rate), or "none".
# One line per bug on stdout; the campaigns' folders are left in $TMPDIR. Reads the reports with python3. A
# measurement, not a test: it passes or fails nothing.
set -u
B=${1:-build}
S=${2:-60}
P="$B/parity"
PL="$B/tests/plugins/int4.so"
T=$(mktemp -d "${TMPDIR:-/tmp}/planted_int.XXXXXX") || exit 2
export PARITY_CACHE=0
printf '%-22s %-26s %12s %12s %10s %10s\n' bug op quick_fail first_seed graphs_s first_s
for spec in nibble:linear_8da4w block:linear_8da4w sign:linear_8da4w zp:linear_8da4w order:linear_8da4w \
            tieaway,strict=1:linear_8da4w tie16:linear tie16,strict=1:linear wrap16:linear chan16:linear \
            qd8tie,strict=1:linear_qd8,matmul_qd8 qd8per:linear_qd8,matmul_qd8 qd8zp:linear_qd8,matmul_qd8 \
            qd8trans:linear_qd8,matmul_qd8; do
    bug=${spec%%:*} ops=${spec#*:}
    name=$(printf '%s' "$bug" | tr ',=' '__')
    filt=""
    [ "$ops" = linear ] && filt="-k dt=qs16"
    # shellcheck disable=SC2086
    "$P" run --suite quick -o "$ops" $filt --plugin "$PL" -b "int4[bug=$bug]" --no-progress --repeat 1 \
        --out "$T/q_$name" >"$T/q_$name.log" 2>&1
    "$P" fuzz --plugin "$PL" -b "int4[bug=$bug]" --time "$S" -j 1 --no-reduce --no-progress \
        --out "$T/f_$name" >"$T/f_$name.log" 2>&1
    python3 - "$bug" "$ops" "$T/q_$name/report.json" "$T/f_$name.log" "$T/f_$name/findings/index.json" <<'PY'
import json, os, re, sys
bug, ops, rq, flog, fidx = sys.argv[1:]
try:
    v = [x["verdict"] for x in json.load(open(rq))["results"]]
    quick = "%d/%d" % (v.count("FAIL") + v.count("ERROR"), len(v))
except Exception as e:
    quick = "no report"
m = re.search(r"^fuzz: (\d+) graphs in ([\d.]+) s", open(flog).read(), re.M)
graphs, secs = (int(m.group(1)), float(m.group(2))) if m else (0, 0.0)
rate = graphs / secs if secs else 0.0
first = None
if os.path.exists(fidx):
    seeds = [f["first_seed"] for f in json.load(open(fidx))["findings"]]
    first = min(seeds) if seeds else None
print("%-22s %-26s %12s %12s %10.0f %10s" % (bug, ops, quick, first if first else "none", rate,
      "%.1f" % (first / rate) if first and rate else "none"))
PY
done
echo "campaigns: $T" >&2
