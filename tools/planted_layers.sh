#!/bin/sh
# tools/planted_layers.sh [--sample] [MODEL...] - the planted-layer matrix: whether a whole-model case catches one
# layer computed below the precision its backend declares, and names that layer (docs/oracle.md, "The planted-layer
# matrix").
#
# For every conv2d, linear and matmul node L of each model (cases/models/MODEL.json; default mobilenet_v2,
# efficientnet_lite0, transformer_encoder), the test plugin planted.so (tests/plugins/planted.c: the example backend
# with node L computed in another arithmetic) runs the model three ways:
#   planted[layer=L]                  declares f32, computes L in binary16 products and sums     must FAIL
#   planted[layer=L,mode=trunc12]     declares f32, drops every partial sum's 12 low bits         must FAIL
#   planted[layer=L,declare=f16]      declares f16, computes L in binary16: a correct backend     must PASS
# and every failing record is localized (`parity localize`, through the reference cache) to its first divergent
# node, which must be L. Prints one line per layer (verdict, worst error/budget and companion z of each way, the
# node each failure was localized to; z=A/B: A the outputs' companion, B that of the first node value over the
# bound of the case's node values where that failed the record, docs/oracle.md "The companion on every node") and
# the count line
#   planted-layers: P passed, F failed, S skipped
# over five checks a layer (the three verdicts, the two localizations; a PASS with no element judged, every budget
# infinite, is skipped: it proves nothing), then a summary.
# --sample: the first, middle and last such layer of each model only (`make check`, tests/report/test_planted_layers.sh);
# the whole matrix is for `make nightly` (tools/nightly.sh).
#
# Environment: PARITY (default build/parity), PLANTED (default build/tests/plugins/planted.so), JOBS (parallel runs
# and localizations, default 2), PLANTED_TIMEOUT (seconds a run of the model on one instance may take, default 600:
# the planted layer's binary16 arithmetic is emulated, a 1x1 conv2d of MobileNetV2 took over 60 s at load 25),
# PLANTED_OUT (the runs' reports and logs; default a temporary folder, removed),
# PARITY_CACHE_DIR / PARITY_CACHE_MAX_MB as for parity (the localizations read each model's reference of every node
# from the cache: about 0.5 GB a reference for MobileNetV2; the cap is raised to 2048 MB unless set).
# Exit status: 0 every check as required (or skipped), 1 some check not, 2 bad usage or a missing tool or file, 3 a run failed.
# POSIX sh; needs python3 (to read the reports).
set -u
parity=${PARITY:-build/parity}
plugin=${PLANTED:-build/tests/plugins/planted.so}
jobs=${JOBS:-2}
timeout=${PLANTED_TIMEOUT:-600}
export PARITY_CACHE_MAX_MB="${PARITY_CACHE_MAX_MB:-2048}"
sample=0
if [ "${1:-}" = --sample ]; then
    sample=1
    shift
fi
models=${*:-mobilenet_v2 efficientnet_lite0 transformer_encoder}
case $jobs in '' | *[!0-9]* | 0) echo "planted_layers: JOBS='$jobs' is not a positive number"; exit 2 ;; esac
case $timeout in '' | *[!0-9]* | 0) echo "planted_layers: PLANTED_TIMEOUT='$timeout' is not a number of seconds"; exit 2 ;; esac
[ -x "$parity" ] || { echo "planted_layers: $parity is missing (make builds it)"; exit 2; }
[ -f "$plugin" ] || { echo "planted_layers: $plugin is missing (make builds it)"; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "planted_layers: python3 is missing (it reads the reports)"; exit 2; }
if [ -n "${PLANTED_OUT:-}" ]; then
    out=$PLANTED_OUT
    mkdir -p "$out" || exit 2
else
    out=$(mktemp -d "${TMPDIR:-/tmp}/planted_layers_XXXXXX") || exit 2
    trap 'rm -rf "$out"' EXIT
fi

# the dot-product layers of a case, one name a line, in node order (--sample: first, middle, last)
layers_of() {
    python3 - "$1" "$sample" <<'PY'
import json, sys
try:
    nodes = json.load(open(sys.argv[1]))["nodes"]
    names = [n["name"] for n in nodes if n.get("op") in ("conv2d", "linear", "matmul")]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit("planted_layers: %s: cannot read its nodes (%s)" % (sys.argv[1], e))
if sys.argv[2] == "1" and len(names) > 3:
    names = [names[0], names[len(names) // 2], names[-1]]
print("\n".join(names))
PY
}

# One model's chunk of layers: one parity run (three instances a layer; a run takes a case's instances one after
# the other, so chunks run JOBS at a time), then `parity localize` on each of its failing records. A chunk whose
# verdicts and localizations are in PLANTED_OUT already is not run again (a matrix cut short resumes there).
loc_one() { # model layer way
    spec="planted[layer=$2]"
    [ "$3" = trunc12 ] && spec="planted[layer=$2,mode=trunc12]"
    "$parity" localize "cases/models/$1.json" -b "$spec" --plugin "$plugin" --timeout "$timeout" \
        >"$out/loc-$1-$2-$3.txt" 2>&1
    first=$(sed -n "s/^first divergent node: [0-9]* '\([^']*\)'.*/\1/p" "$out/loc-$1-$2-$3.txt")
    echo "$1 $2 $3 ${first:--}"
}
run_chunk() { # model chunk-file
    dir=$out/run-$1-${2##*.}
    [ -s "$dir.verdicts" ] && [ -f "$dir.localized" ] && return
    if [ ! -s "$dir.verdicts" ]; then
        specs=$(awk '{ s = s (NR > 1 ? "," : "") "planted[layer=" $1 "],planted[layer=" $1 ",mode=trunc12]," \
                       "planted[layer=" $1 ",declare=f16]" } END { print s }' "$2")
        "$parity" run "cases/models/$1.json" --plugin "$plugin" -b "$specs" --no-localize --no-progress --repeat 1 \
            --warmup 0 --timeout "$timeout" --out "$dir" >"$dir.log" 2>&1
        r=$?
        if [ $r -gt 1 ] || [ ! -s "$dir/report.json" ]; then
            echo "planted_layers: parity run of $1 exited $r (log $dir.log):"
            tail -n 5 "$dir.log"
            echo "$1 ${2##*.}" >>"$out/failed_runs.txt"
            return
        fi
        # model layer way verdict max_ratio stat_z judged n node_z, one line per record (node_z: the companion on
        # every node's value where it failed the record, else -)
        python3 - "$dir/report.json" "$1" >"$dir.verdicts.tmp" <<'PY'
import json, re, sys
for r in json.load(open(sys.argv[1]))["results"]:
    spec = re.match(r"planted\[layer=([^,\]]+)(?:,(mode=trunc12|declare=f16))?\]$", r["backend"])
    if not spec:
        continue
    way = {None: "f16", "mode=trunc12": "trunc12", "declare=f16": "declared_f16"}[spec.group(2)]
    m = r.get("metrics") or {}
    ratio, z = m.get("max_ratio"), m.get("stat_z")
    judged = (m.get("n") or 0) - (m.get("n_unbounded") or 0)
    node = re.match(r"statistical companion at node '[^']*' \([^)]*\): .*? is ([0-9.e+-]+) over", r.get("reason", ""))
    print(sys.argv[2], spec.group(1), way, r["verdict"], "-" if ratio is None else "%.3g" % ratio,
          "-" if z is None else "%.3g" % z, judged, m.get("n") or 0, node.group(1) if node else "-")
PY
        mv "$dir.verdicts.tmp" "$dir.verdicts"
    fi
    # the failing records of the two ways that must fail, localized one after the other
    awk '$3 != "declared_f16" && $4 == "FAIL" { print $1, $2, $3 }' "$dir.verdicts" | while read -r m l w; do
        loc_one "$m" "$l" "$w"
    done >"$dir.localized.tmp"
    mv "$dir.localized.tmp" "$dir.localized"
}

: >"$out/failed_runs.txt"
for m in $models; do
    case_file=cases/models/$m.json
    [ -f "$case_file" ] || { echo "planted_layers: $case_file: no such model case"; exit 2; }
    layers_of "$case_file" >"$out/$m.layers" || exit 2
    # 5 layers (15 backend instances) a run (parity run takes 32 instances at most)
    split -l 5 "$out/$m.layers" "$out/$m.chunk."
done
n=0 first=1
for m in $models; do
    for chunk in "$out/$m".chunk.*; do
        if [ $first = 1 ]; then # a model's first chunk alone: it fills the reference cache the others read
            run_chunk "$m" "$chunk"
            first=0
            continue
        fi
        run_chunk "$m" "$chunk" &
        n=$((n + 1))
        [ $((n % jobs)) -eq 0 ] && wait
    done
    wait
    first=1
done
wait
[ -s "$out/failed_runs.txt" ] && exit 3
cat "$out"/run-*.verdicts >"$out/verdicts.txt"

cat "$out"/run-*.localized >"$out/localized.txt"

python3 - "$out/verdicts.txt" "$out/localized.txt" "$models" <<'PY'
import sys
rows, loc = {}, {}
order = sys.argv[3].split()
for line in open(sys.argv[1]):
    m, l, w, v, ratio, z, judged, n, *node_z = line.split() # (node_z absent in a folder from before it)
    if m in order: # (a resumed PLANTED_OUT may hold other models)
        rows.setdefault((m, l), {})[w] = (v, ratio, z + ("/" + node_z[0] if node_z and node_z[0] != "-" else ""),
                                          int(judged), int(n))
for line in open(sys.argv[2]):
    m, l, w, first = line.split()
    loc[(m, l, w)] = first
want = {"f16": "FAIL", "trunc12": "FAIL", "declared_f16": "PASS"}
good = bad = skipped = 0 # checks: three verdicts and two localizations a layer
count = {w: 0 for w in want}
vacuous = n_loc = n_exact = 0
print("%-20s %-26s %-26s %-26s %-26s %s" % ("model", "layer", "f32 declared, f16", "f32 declared, trunc12",
                                            "f16 declared, f16", "localized (f16 / trunc12)"))
for key in sorted(rows, key=lambda k: order.index(k[0])):
    r = rows[key]
    cells, notes = [], []
    for w in ("f16", "trunc12", "declared_f16"):
        v, ratio, z, judged, n = r.get(w, ("MISSING", "-", "-", 0, 0))
        cells.append("%s r=%s z=%s" % (v, ratio, z) + ("" if judged == n else " judged %d/%d" % (judged, n)))
        if v != want[w]:
            bad += 1
            notes.append("%s is %s" % (w, v))
        elif v == "PASS" and judged == 0:
            # a PASS with no element judged (every budget infinite) proves nothing: skipped, not passed
            skipped += 1
            vacuous += 1
            notes.append("declared f16: nothing judged")
        else:
            good += 1
        count[w] += v == want[w]
    where = []
    for w in ("f16", "trunc12"):
        if r.get(w, ("",))[0] != "FAIL":
            where.append("-")
            continue
        first = loc.get((key[0], key[1], w), "-")
        n_loc += 1
        n_exact += first == key[1]
        good += first == key[1]
        bad += first != key[1]
        if first != key[1]:
            notes.append("%s localized to %s" % (w, first))
        where.append(first)
    print("%-20s %-26s %-26s %-26s %-26s %s%s" % (key[0], key[1], cells[0], cells[1], cells[2], " / ".join(where),
                                                  "   <- " + "; ".join(notes) if notes else ""))
n = len(rows)
print("planted-layers: %d passed, %d failed, %d skipped" % (good, bad, skipped))
print("planted-layers: %d layers of %s: declared f32, f16 FAIL %d/%d, trunc12 FAIL %d/%d; declared f16 PASS %d/%d "
      "(%d of them with no element judged: every budget infinite); %d of %d failures localized to the planted node"
      % (n, ", ".join(order), count["f16"], n, count["trunc12"], n, count["declared_f16"], n, vacuous, n_exact,
         n_loc))
sys.exit(0 if bad == 0 else 1)
PY
