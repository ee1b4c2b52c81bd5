# test_sandbox.sh - what a hostile backend can reach (exec/sandbox.c, docs/reliability.md): tests/plugins/reach.c,
# a correct relu that first kills or stops every process of its run, writes zeros over the heaps of the parity
# processes above it through /proc/PID/mem, sets their file size limit to 0, truncates its output memfd through
# /proc/self/map_files, overwrites the reference cache, or starts a daemon and then kills; or (TP_REACH_LOAD) whose
# constructor or entry function crashes or hangs where it runs as root (the harness's own processes), whose
# constructor hangs everywhere or starts a daemon, whose destructor hangs or crashes. Run beside cpu at -j 2, each
# must leave: tp_reach's records a verdict of their own (PASS in the full sandbox: nothing it tried reached
# anything), cpu's records all PASS or UNSUPPORTED, a valid report, exit 0 within --timeout plus a second, nothing
# of the run left running (no daemon either), and the cache as it was; a constructor that hangs everywhere: exit 2
# within --timeout plus a second, one line naming the plugin; one that hangs only in the fork server's warm start
# too (run and bench), with a line naming backend and plugin. A child that shuts its job socket down and sleeps is a
# TIMEOUT within --timeout plus a second. 384 MiB held in a memfd or a grandchild is over
# --mem-limit 256M (the job's memory cgroup); parity bench's child reaches nothing either; with --no-isolate a
# constructor that hangs ends at SIGTERM within 2 s and a second. Where the machine allows only a weaker sandbox (the
# run says so in one line), the checks that level cannot keep are skipped, named.
. tests/report/lib.sh

PLUGIN="$BUILD/tests/plugins/reach.so"
chmod 755 "$T" # as a build folder is: the sandbox, not the folder's mode, must keep the cache out of reach
CACHE="$T/cache"
mkdir -p "$CACHE"
export PARITY_CACHE_DIR="$CACHE"
PARITY_CACHE_MIN_MS=0 "$PARITY" run --suite quick -o relu -b cpu --no-progress --out "$T/fill" >"$T/fill.log" 2>&1
n_cached=$(ls "$CACHE" | wc -l)
[ "$n_cached" -gt 0 ] && ok || no "the first run cached no reference"
(cd "$CACHE" && cat ./* | cksum) >"$T/cache.before"

TAG=$$
# the processes named like reach.c's daemons (tpd + TAG), zombies aside (killed, not yet reaped by pid 1)
daemons() { ps -eo pid=,stat=,comm= | awk -v n="tpd$TAG" '$3 == n && $2 !~ /^Z/ { print $1 }'; }
for item in act=kill act=stop act=mem act=prlimit act=truncate act=cache act=daemon load=ctor_crash_root \
    load=entry_crash_root load=ctor_hang_root load=ctor_daemon load=dtor_hang load=dtor_crash load=ctor_hang \
    load=ctor_hang_server; do
    what=${item#*=}
    out="$T/r_$what"
    spec="tp_reach" load=
    case $item in act=*) spec="tp_reach[act=$what]" ;; load=*) load=$what ;; esac
    t0=$(date +%s.%N)
    TP_REACH_TAG=$TAG TP_REACH_LOAD=$load PARITY_CACHE_MIN_MS=0 timeout 30 "$PARITY" run --suite quick -o relu \
        --timeout 5 -j 2 --no-progress -b "cpu,$spec" --plugin "$PLUGIN" --out "$out" >"$out.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    level=full
    grep -q "^parity: sandbox: .*as a uid of their own" "$out.log" && level=uid
    grep -q "^parity: sandbox: .*as this user" "$out.log" && level=none
    if [ $level = none ]; then
        skip "$what: no sandbox here ($(grep '^parity: sandbox:' "$out.log"))"
        continue
    fi
    sleep 0.2
    left=$(ps -eo args | grep -F -- "$out" | grep -v grep | wc -l)
    [ "$left" = 0 ] && ok || no "$what: $left processes of the run left running"
    d=$(daemons)
    if [ -n "$d" ] && [ $what = daemon ] && [ $level = uid ]; then
        skip "$what: at the uid level a child that kills its own fork server leaves its daemon"
    else
        [ -z "$d" ] && ok || no "$what: daemons left running: $(echo $d)"
    fi
    [ -n "$d" ] && kill -9 $d 2>/dev/null
    within=$(echo "$t1 - $t0 < 6" | bc)
    [ "$within" = 1 ] && ok || no "$what: took $(echo "$t1 - $t0" | bc) s (--timeout 5)"
    if [ $what = ctor_hang ]; then
        [ $rc = 2 ] && grep -q "^parity: plugin $PLUGIN: no answer after 5 s while loading" "$out.log" && ok ||
            no "$what: exit $rc: $(tail -2 "$out.log")"
        continue
    fi
    if [ $what = ctor_hang_server ] && [ $level = full ]; then # the loader and probe children passed
        [ $rc = 2 ] && grep -q "^parity: backend 'tp_reach' (plugin $PLUGIN): its fork server did not finish starting \
within 5 s" "$out.log" && ok || no "$what: exit $rc: $(tail -2 "$out.log")"
        continue
    fi
    python3 - "$out/report.json" "$what" "$level" >"$T/check.txt" 2>&1 <<'PY'
import json, sys
path, act, level = sys.argv[1:]
try:
    res = json.load(open(path))["results"]
except Exception as e:
    print("no valid report: %s" % e); sys.exit(0)
def bad(be, allowed):
    return [(x["case"], x["verdict"], x.get("reason", "")) for x in res
            if x["backend"].startswith(be) and x["verdict"] not in allowed]
n = {b: sum(x["backend"].startswith(b) for x in res) for b in ("cpu", "tp_reach")}
if n["cpu"] < 20 or n["tp_reach"] != n["cpu"]: print("records: %s" % n)
for r in bad("cpu", ("PASS", "UNSUPPORTED"))[:3]: print("cpu touched: %s %s %s" % r)
# in the full sandbox nothing reaches: its relu passes; with a uid only, its own server is within reach
allowed = ("PASS", "UNSUPPORTED") if level == "full" else ("PASS", "UNSUPPORTED", "ERROR", "TIMEOUT")
for r in bad("tp_reach", allowed)[:3]: print("tp_reach: %s %s %s" % r)
PY
    [ -s "$T/check.txt" ] && no "$what ($level): $(head -3 "$T/check.txt")" || ok
    if [ $level = full ]; then
        [ $rc = 0 ] && ok || no "$what: exit $rc: $(tail -2 "$out.log")"
    else
        { [ $rc = 0 ] || [ $rc = 1 ]; } && ok || no "$what ($level): exit $rc: $(tail -2 "$out.log")"
    fi
done
# A child that shuts its job socket down and then sleeps holds its job for --timeout only: TIMEOUT naming the
# closed socket, cpu's record PASS, exit 1, within the timeout and a second, nothing left running.
out="$T/h_hangup"
t0=$(date +%s.%N)
timeout 30 "$PARITY" run --case 'relu(x=[2,3,6,7],in=hazard:huge)#seed=1' --timeout 2 -j 2 --no-progress \
    -b "cpu,tp_reach[act=hangup]" --plugin "$PLUGIN" --out "$out" >"$out.log" 2>&1
rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
[ $rc = 1 ] && ok || no "hangup: exit $rc (expected 1): $(tail -2 "$out.log")"
python3 - "$out/report.json" >"$T/check.txt" 2>&1 <<'PY'
import json, sys
try:
    res = json.load(open(sys.argv[1]))["results"]
except Exception as e:
    print("no valid report: %s" % e); sys.exit(0)
for x in res:
    tp = x["backend"].startswith("tp_reach")
    if (x["verdict"], tp and "closed its job socket" in x.get("reason", "")) != (("TIMEOUT", True) if tp else ("PASS", False)):
        print("%s %s: %s %s" % (x["backend"], x["case"], x["verdict"], x.get("reason", "")))
if len(res) != 2: print("%d records, not 2" % len(res))
PY
[ -s "$T/check.txt" ] && no "hangup: $(head -3 "$T/check.txt")" || ok
awk -v t="$took" 'BEGIN { exit !(t < 3) }' && ok || no "hangup: took $took s with --timeout 2"
sleep 0.2
left=$(ps -eo args | grep -F -- "$out" | grep -v grep | wc -l)
[ "$left" = 0 ] && ok || no "hangup: $left processes of the run left running"

# Memory counted as a whole: 384 MiB held in a memfd the child has unmapped (filled by write(), or allocated in one
# fallocate() past the cgroup's hard limit of 320 MiB, which the kernel refuses without killing anything), or by a
# grandchild, against --mem-limit 256M, on one case (beside cpu): the job cgroup's resident and shared memory is
# over the limit, so CRASH "out of memory: over the memory limit ..." and the fork server lives on; without a memory
# cgroup (one line says so) only the child's own RSS is counted: skipped, named.
for what in memfd grandchild memfast; do
    out="$T/m_$what"
    t0=$(date +%s.%N)
    TP_REACH_MIB=384 timeout 30 sh -c 'echo $$ >"$0.pid"; exec "$@"' "$out" "$PARITY" run \
        --case 'relu(x=[2,3,6,7],in=hazard:huge)#seed=1' --timeout 5 -j 2 --mem-limit 256M --no-progress \
        -b "cpu,tp_reach[act=$what]" --plugin "$PLUGIN" --out "$out" >"$out.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    if grep -q "^parity: sandbox: .*--mem-limit counts the resident memory" "$out.log"; then
        skip "$what: $(grep '^parity: sandbox: .*--mem-limit' "$out.log")"
        continue
    fi
    [ $rc = 1 ] && ok || no "$what: exit $rc (expected 1): $(tail -2 "$out.log")"
    python3 - "$out/report.json" >"$T/check.txt" 2>&1 <<'PY'
import json, sys
try:
    res = json.load(open(sys.argv[1]))["results"]
except Exception as e:
    print("no valid report: %s" % e); sys.exit(0)
for x in res:
    want = ("CRASH",) if x["backend"].startswith("tp_reach") else ("PASS",)
    if x["verdict"] not in want or (want == ("CRASH",) and "memory limit" not in x.get("reason", "")):
        print("%s %s: %s %s" % (x["backend"], x["case"], x["verdict"], x.get("reason", "")))
if len(res) != 2: print("%d records, not 2" % len(res))
PY
    [ -s "$T/check.txt" ] && no "$what: $(head -3 "$T/check.txt")" || ok
    [ "$(echo "$t1 - $t0 < 6" | bc)" = 1 ] && ok || no "$what: took $(echo "$t1 - $t0" | bc) s (--timeout 5)"
    # this run's cgroups (parity.PID under the memory cgroup of the test) are gone
    ls -d /sys/fs/cgroup/memory/parity.$(cat "$out.pid") /sys/fs/cgroup/memory/*/parity.$(cat "$out.pid") \
        /sys/fs/cgroup/memory/*/*/parity.$(cat "$out.pid") >"$T/cgroups" 2>/dev/null
    [ ! -s "$T/cgroups" ] && ok || no "$what: memory cgroups left: $(head -3 "$T/cgroups")"
done
sleep 0.2
left=$(ps -eo args | grep -F -- "$T/m_" | grep -v grep | wc -l)
[ "$left" = 0 ] && ok || no "memory: $left processes of the runs left running"

# parity bench runs each backend in a job of its own fork server, in the sandbox too: a backend there that kills or
# stops every process it can reach reaches nothing; the bench ends 0 and writes the JSON.
for what in kill stop; do
    out="$T/b_$what"
    timeout 30 "$PARITY" bench -b "cpu,tp_reach[act=$what]" --plugin "$PLUGIN" cases/bench/relu64.json \
        --repeat 3 --warmup 1 --json "$out.json" >"$out.log" 2>&1
    rc=$?
    if grep -q "^parity: sandbox: .*as this user" "$out.log"; then
        skip "bench $what: no sandbox here"
        continue
    fi
    [ $rc = 0 ] && ok || no "bench $what: exit $rc: $(tail -2 "$out.log")"
    python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["cases"]) == 1' "$out.json" 2>/dev/null &&
        ok || no "bench $what: no JSON with one case in $out.json"
done

# A backend that stops its own process in every run: bench's deadline on each run (--timeout) makes it TIMEOUT, in
# its row only; the other backend's row is measured and checked; exit 1 (a check that is not PASS), within the
# timeout and a second.
out="$T/b_selfstop"
t0=$(date +%s.%N)
timeout 30 "$PARITY" bench -b "cpu,tp_reach[act=selfstop]" --plugin "$PLUGIN" cases/bench/relu64.json \
    --repeat 3 --warmup 1 --timeout 2 --json "$out.json" >"$out.log" 2>&1
rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
[ $rc = 1 ] && ok || no "bench selfstop: exit $rc, expected 1: $(tail -2 "$out.log")"
grep -Eq '^tp_reach\[act=selfstop\] +TIMEOUT: no result after 2 s' "$out.log" && ok ||
    no "bench selfstop: no TIMEOUT row: $(tail -2 "$out.log")"
grep -Eq '^cpu .* PASS ' "$out.log" && ok || no "bench selfstop: the cpu row is not measured: $(tail -3 "$out.log")"
awk -v t="$took" 'BEGIN { exit !(t < 3) }' && ok || no "bench selfstop: took $took s with --timeout 2"

# A constructor that hangs in the fork server's warm start only (the loader and the probe passed): bench says so
# and exits 2 within its --timeout and a second, as run does (above).
out="$T/b_ctor_hang_server"
t0=$(date +%s.%N)
TP_REACH_LOAD=ctor_hang_server timeout 30 "$PARITY" bench -b "cpu,tp_reach" --plugin "$PLUGIN" \
    cases/bench/relu64.json --repeat 3 --warmup 1 --timeout 2 >"$out.log" 2>&1
rc=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
if [ $level = full ]; then
    [ $rc = 2 ] && grep -q "^parity bench: backend 'tp_reach' (plugin $PLUGIN): its fork server did not finish" \
        "$out.log" && ok || no "bench ctor_hang_server: exit $rc: $(tail -2 "$out.log")"
    awk -v t="$took" 'BEGIN { exit !(t < 3) }' && ok || no "bench ctor_hang_server: took $took s with --timeout 2"
else
    skip "bench ctor_hang_server: it hangs only in a PID namespace's init, which this level has not"
fi

# --no-isolate (the debugger's mode) runs the backends in the main process, with no deadline on their calls (a
# breakpoint must not end the session): a constructor that hangs as root hangs the run, but SIGTERM ends it within
# 2 s and a second, exit 143 and one line saying no report was written (the previous code: a hang, SIGTERM ignored).
out="$T/noiso"
TP_REACH_LOAD=ctor_hang_root timeout -s KILL 20 sh -c '"$@" & p=$!; sleep 2; kill -TERM $p; t0=$(date +%s.%N); wait $p
rc=$?; echo "$rc $(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN { printf \"%.2f\", b - a }")" >"$0.rc"' "$out" \
    "$PARITY" run --suite quick -o relu --timeout 2 -b tp_reach --plugin "$PLUGIN" --no-isolate --no-progress \
    --out "$out" >"$out.log" 2>&1
{ read -r rc took <"$out.rc"; } 2>/dev/null || { rc=none took=20; }
[ "$rc" = 143 ] && grep -q "^parity: interrupted, and a backend call running in this process (--no-isolate) did not return within 2 s" \
    "$out.log" && ok || no "no-isolate: SIGTERM during a hanging constructor: exit $rc: $(tail -2 "$out.log")"
awk -v t="$took" 'BEGIN { exit !(t < 3) }' && ok || no "no-isolate: SIGTERM took $took s to end the run"

(cd "$CACHE" && cat ./* | cksum) >"$T/cache.after"
if [ $level = none ]; then
    skip "the reference cache: no sandbox here"
else
    [ ! -e "$CACHE/planted.ref" ] && ok || no "a backend planted a file in the reference cache"
    cmp -s "$T/cache.before" "$T/cache.after" && ok || no "a backend changed the reference cache"
fi
finish
