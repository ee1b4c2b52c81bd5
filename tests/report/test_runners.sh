# test_runners.sh - runtimes through a runner process (docs/runners.md, backends/runner/, exec/companion.c), end to
# end with the runners of tests/runners/: a correct one (relu.py) passes; each misbehaving one costs its own
# records only: a crash is a CRASH with the runner's signal, a hang a TIMEOUT within --timeout, a flood of the protocol
# stream an ERROR naming the 1 MiB line bound, 100 MB of well-framed output an ERROR naming the size expected, a flood
# of stderr ends in the record's output tail, wrong shapes, garbage and a lie about its time an ERROR saying what was
# wrong (and the next case, on a fresh runner, its own verdict), NaN a FAIL, memory held by the runner counts against
# --mem-limit; a runner that writes the reference cache, a file in it, the output folder or /tmp writes nothing of
# the harness's (its world is read-only but its home and a temporary folder of its own, TMPDIR); a runner whose
# runtime is missing, or that dies before hello, makes
# its instance unusable (exit 2 with -b, the reason named); after a crash the next case runs on a fresh runner and
# passes; cpu's records beside them are untouched; openvino[precision=f16] is unusable, naming FP16, on a CPU
# whose plugin lacks it; no runner process is left running. Needs build/venv/bin/python with
# numpy (make deps); skipped, never passed, without it.
. tests/report/lib.sh

PY=build/venv/bin/python
if ! "$PY" -c 'import numpy' 2>/dev/null; then
    skip "no build/venv with numpy (make deps creates it)"
    finish
fi
CASE="relu(x=[2,3,6,7],in=hazard:huge)#seed=1"
# run NAME [ARGS...]: cpu beside runner[cmd=tests/runners/NAME.py] on one relu case; output in $T/NAME
run() {
    n=$1
    shift
    "$PARITY" run --case "$CASE" -b "cpu,runner[cmd=tests/runners/$n.py,format=onnx]" --timeout 3 -j 1 --no-progress \
        --out "$T/$n" "$@" >"$T/$n.log" 2>&1
}
# verdicts NAME: the runner's verdicts, one per line, and cpu's
verdicts() { python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    print(("cpu" if x["backend"] == "cpu" else "runner"), x["verdict"], x["reason"].replace("\n", " "))' "$T/$1/report.json"; }
# expect NAME VERDICT TEXT: the runner's record VERDICT with TEXT in the reason, cpu's PASS
expect() {
    n=$1 v=$2 text=$3
    if [ ! -s "$T/$n/report.json" ]; then
        no "$n: no report ($(tail -2 "$T/$n.log"))"
        return
    fi
    verdicts "$n" >"$T/$n.v"
    [ "$(grep -c "^runner $v .*$text" "$T/$n.v")" = 1 ] && ok ||
        no "$n: expected the runner's record $v with '$text'; got: $(grep '^runner' "$T/$n.v" | head -2 | tr '\n' '|')"
    [ "$(grep -c '^cpu PASS' "$T/$n.v")" = 1 ] && ok || no "$n: cpu's record touched: $(grep '^cpu' "$T/$n.v" | tr '\n' '|')"
}

run relu
expect relu PASS ''
grep -q 'median' "$T/relu.log" && ok || no "relu: no device time line (the runner's run_ms)"

run crash
expect crash CRASH 'killed by signal 11'

start=$(date +%s)
run hang
expect hang TIMEOUT 'no result after 3 s'
took=$(($(date +%s) - start))
[ $took -le 8 ] && ok || no "hang: a 3 s time-out took ${took} s"

run flood_stdout
expect flood_stdout ERROR '1 MiB'

run flood_stderr
expect flood_stderr PASS ''
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
x = [x for x in r["results"] if x["backend"] != "cpu"][0]
sys.exit(0 if x["output_bytes"] >= 100 * 2**20 and x["output_dropped"] > 0 and len(x["output"]) > 0 else 1)' \
    "$T/flood_stderr/report.json" && ok || no "flood_stderr: 100 MB of stderr not counted in output_bytes, or no tail kept"

run wrong_shape
expect wrong_shape ERROR 'shape'

run big_output
expect big_output ERROR "blob 0's size is not an integer within the 1008 bytes expected"

run garbage
expect garbage ERROR 'not a JSON object'

run nan
expect nan FAIL 'non-finite'

run liar
expect liar ERROR 'device time'

# its memory counts with the child's: 600 MiB held by the runner is over --mem-limit 300M
run hog --mem-limit 300M
expect hog CRASH "out of memory (RSS > 300 MiB, its companion process's included)"

# a runner whose runtime is missing: unusable, its reason named, exit 2 with -b; without -b it is skipped
"$PARITY" run --case "$CASE" -b 'runner[cmd=tests/runners/missing.py,format=onnx]' --no-progress --out "$T/missing" \
    >"$T/missing.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "not usable.*No module named" "$T/missing.log" && ok ||
    no "missing runtime: exit $rc (expected 2 naming the missing module): $(tail -1 "$T/missing.log")"
"$PARITY" run --case "$CASE" -b 'runner[cmd=tests/runners/exit_hello.py,format=onnx]' --no-progress --out "$T/exit_hello" \
    >"$T/exit_hello.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "exited with status 3 during hello" "$T/exit_hello.log" && ok ||
    no "a runner exiting before hello: exit $rc: $(tail -1 "$T/exit_hello.log")"

# after a crash, the next case runs on a fresh runner: a CRASH (the second load of each process) is never followed by
# another
"$PARITY" run --suite quick -o relu -k hazard -b 'runner[cmd=tests/runners/crash_second.py,format=onnx]' -j 1 \
    --no-progress --out "$T/second" >"$T/second.log" 2>&1
python3 -c '
import json, sys
v = [x["verdict"] for x in json.load(open(sys.argv[1]))["results"]]
print(" ".join(v))
sys.exit(0 if len(v) >= 4 and v.count("CRASH") >= 2 and v.count("PASS") >= 2 and
         all(a != "CRASH" or b != "CRASH" for a, b in zip(v, v[1:])) else 1)' "$T/second/report.json" >"$T/second.v" &&
    ok || no "crash_second: a crash is not followed by a pass on a fresh runner: $(cat "$T/second.v")"

# a malformed reply costs its own case only: the runner it came from is replaced before the next case, which must
# not inherit it dying (every case of a runner that always answers with the wrong shape is an ERROR, none a CRASH)
"$PARITY" run --suite quick -o relu -k hazard -b 'runner[cmd=tests/runners/wrong_shape.py,format=onnx]' -j 1 \
    --no-progress --out "$T/shapes" >"$T/shapes.log" 2>&1
python3 -c '
import json, sys
v = [x["verdict"] for x in json.load(open(sys.argv[1]))["results"]]
print(" ".join(v))
sys.exit(0 if len(v) >= 4 and v.count("ERROR") == len(v) else 1)' "$T/shapes/report.json" >"$T/shapes.v" &&
    ok || no "wrong_shape: a malformed reply cost more than its own case: $(cat "$T/shapes.v")"

# a runner that writes where the harness keeps its files (a reference cache with a file in it and the output folder,
# in the build folder as build/cache is, and /tmp) writes nothing of the harness's: in the full sandbox every file
# is read-only to a runner kept as uid 0 (build/venv's Python under /root) but its home and its TMPDIR (a tmpfs of
# its own); /tmp stays visible, read-only (a checkout under /tmp, as CI clones it, must keep working); the runner
# still answers (PASS).
W=$(mktemp -d "$BUILD/writer.XXXXXX")
chmod 755 "$W"
mkdir -p "$W/cache"
echo ORIGINAL >"$W/cache/sentinel"
TP_WRITER_DIRS="$W/cache:$W/out" TP_WRITER_TAG=$$ PARITY_CACHE_DIR="$W/cache" "$PARITY" run --case "$CASE" \
    -b "cpu,runner[cmd=tests/runners/writer.py,format=onnx]" --timeout 3 -j 1 --no-progress --out "$W/out" \
    >"$T/writer.log" 2>&1
mkdir -p "$T/writer"
cp "$W/out/report.json" "$T/writer/" 2>/dev/null
if grep -q "^parity: sandbox: .*\(as a uid of their own\|as this user\|cannot make the files read-only\)" \
    "$T/writer.log"; then
    skip "writer: no read-only world here ($(grep '^parity: sandbox:' "$T/writer.log" | head -1))"
else
    expect writer PASS ''
    [ ! -e "$W/cache/planted-by-runner" ] && [ ! -e "$W/out/planted-by-runner" ] && ok ||
        no "writer: a runner planted a file in the cache or the output folder"
    [ "$(cat "$W/cache/sentinel")" = ORIGINAL ] && ok || no "writer: a runner changed a file of the cache"
fi
# whether every user may run build/venv's Python (the file and each folder of its resolved path open to others, as
# exec/companion.c decides): then its runner runs as a uid of its own, not kept as uid 0 in the read-only world
open_to_all=$(python3 -c '
import os, stat, sys
p = os.path.realpath(sys.argv[1])
while p != "/":
    if not os.stat(p).st_mode & stat.S_IXOTH: print(0); sys.exit()
    p = os.path.dirname(p)
print(1)' "$PY")
if grep -q "^parity: sandbox: .*\(as a uid of their own\|as this user\|cannot make the files read-only\)" \
    "$T/writer.log"; then
    :
elif [ "$open_to_all" = 1 ]; then
    skip "writer: build/venv's Python is open to every user here, so its runner runs as a uid of its own, which may create files in /tmp"
else
    for f in "$W/cache/planted-by-runner" "$W/cache/sentinel" "$W/out/planted-by-runner" "/tmp/parity-writer-$$"; do
        grep -qF "writer: cannot write $f: Read-only file system" "$W/out/report.json" && ok ||
            no "writer: the runner's write of $f did not fail as read-only"
    done
    [ ! -e "/tmp/parity-writer-$$" ] && ok || no "writer: a runner wrote the harness's /tmp"
    grep -q 'writer: wrote [^ \\]*/own-file' "$W/out/report.json" && ok ||
        no "writer: the runner could not write its own TMPDIR"
fi
rm -rf "$W" "/tmp/parity-writer-$$"

# openvino[precision=f16] on a CPU whose plugin lacks FP16 would be compiled as bf16: the instance is unusable, naming
# the capability; where the CPU has it, the instance runs
if "$PY" -c 'import openvino' 2>/dev/null; then
    caps=$("$PY" -c 'import openvino as ov; print(" ".join(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")))')
    "$PARITY" run --case "$CASE" -b 'openvino[precision=f16]' -j 1 --no-progress --out "$T/ov_f16" >"$T/ov_f16.log" 2>&1
    rc=$?
    case " $caps " in
    *" FP16 "*) [ "$rc" -le 1 ] && ok || no "openvino[precision=f16] on a CPU with FP16: exit $rc: $(tail -1 "$T/ov_f16.log")" ;;
    *) [ "$rc" = 2 ] && grep -q 'lack FP16' "$T/ov_f16.log" && ok ||
        no "openvino[precision=f16] without FP16 ($caps): exit $rc, not unusable: $(tail -1 "$T/ov_f16.log")" ;;
    esac
else
    skip "openvino is not installed in build/venv (make deps RUNTIMES=openvino installs it)"
fi

# nothing left running
sleep 0.5
pat='tests/runners/(relu|crash|hang|hog|flood_stdout|flood_stderr|wrong_shape|big_output|garbage|nan|liar|crash_second|writer)\.py'
left=$(pgrep -f "$pat" | wc -l)
[ "$left" = 0 ] && ok || no "$left runner processes left running: $(pgrep -af "$pat" | head -3)"
finish
