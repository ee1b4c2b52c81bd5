# test_worker_deadline.sh - every wait of the main process on its workers has a deadline (runner/runner.c): a worker
# stopped with SIGSTOP for 2 s, or one that sends nothing for PARITY_WORKER_SILENCE_S seconds, is killed, its
# unfinished records are ERROR saying why, every other record is kept, the report is valid, the run exits 3 (a
# harness failure) in time, and nothing of it is left running. Before, the main process waited on a stopped worker
# for ever (poll without a timeout).
. tests/report/lib.sh

# the worker processes of the run whose main process is $1: its children that run as its own uid, newest last
# (the fork servers are forked first, and in the sandbox run as uids of their own)
workers() {
    ps -o pid=,uid= --ppid "$1" | awk -v u="$(id -u)" '$2 == u { print $1 }' | sort -n
}

check_report() { # report, the reason the killed worker's records must give, how many others at least
    python3 - "$1" "$2" "$3" >"$T/check.txt" 2>&1 <<'PY'
import json, sys
path, why, least = sys.argv[1:]
try:
    res = json.load(open(path))["results"]
except Exception as e:
    print("no valid report: %s" % e); sys.exit(0)
killed = [x for x in res if why in x.get("reason", "")]
other = [x for x in res if why not in x.get("reason", "")]
if not killed: print("no record says '%s'" % why)
if any(x["verdict"] != "ERROR" for x in killed): print("a killed worker's record is not ERROR")
bad = [(x["case"], x["backend"], x["verdict"], x.get("reason", "")) for x in other
       if x["verdict"] not in ("PASS", "UNSUPPORTED", "TIMEOUT")]
for b in bad[:3]: print("other record: %s %s %s %s" % b)
if len(other) < int(least): print("only %d other records" % len(other))
PY
    [ -s "$T/check.txt" ] && no "$(head -3 "$T/check.txt")" || ok
}

# expect NAME RC SECONDS LIMIT LINE WHY LEAST: exit 3 within LIMIT s, the line LINE (a regular expression) on
# stderr, and the report as check_report wants it
expect() {
    [ "$2" = 3 ] && ok || no "$1: exit $2 (expected 3): $(tail -2 "$out.log")"
    grep -q "^parity: $5" "$out.log" && ok || no "$1: no line saying so: $(tail -3 "$out.log")"
    check_report "$out/report.json" "$6" "$7"
    [ "$(echo "$3 < $4" | bc)" = 1 ] && ok || no "$1: took $3 s (at most $4 s)"
}

# 1. a stopped worker: the quick suite's relu and matmul cases on the test plugin tp_slow (each run busy-waits 100
# times its compute, 300 runs a case: about 50 ms a case, 3 s in all) at -j 2; a worker stopped after 0.3 s. Workers
# claim their cases as they become free (runner/runner.c), so one stopped between two cases would hold none: the
# other would take the rest, nothing would be lost, and the run could end 0 without waiting on it. With cases that
# long a worker is inside one almost all the time (on the quick suite on cpu, 0.4 ms a case, a stop fell between
# two cases 3 times in a row under load); that outcome is not the one this checks, so the run is still tried again
# (at most 3 times); a stop inside a case must end as below.
out="$T/stop"
SLOW="$BUILD/tests/plugins/slow.so"
for attempt in 1 2 3; do
    rm -rf "$out" "$out.log"
    t0=$(date +%s.%N)
    PARITY_TP_SLOW_EXTRA=100 timeout 60 "$PARITY" run --suite quick -o relu,matmul -b tp_slow --plugin "$SLOW" \
        --repeat 300 -j 2 --timeout 5 --no-progress --out "$out" >"$out.log" 2>&1 &
    bg=$! # timeout's pid: the main process is its child
    sleep 0.3
    w=$(workers "$(ps -o pid= --ppid $bg | head -1 | tr -d " ")" | tail -1)
    if [ -z "$w" ] || grep -q "^parity: sandbox: .*as this user" "$out.log"; then
        wait $bg
        skip "no worker to stop found (the run took under 0.3 s, or no sandbox tells servers from workers)"
        finish
    fi
    kill -STOP "$w"
    wait $bg
    rc=$?
    t1=$(date +%s.%N)
    [ $rc -eq 0 ] && ! grep -q "was stopped (SIGSTOP)" "$out.log" && [ $attempt -lt 3 ] && {
        kill -9 "$w" 2>/dev/null
        continue
    }
    break
done
expect "stopped worker" $rc "$(echo "$t1 - $t0" | bc)" 20 "harness worker [01] was stopped (SIGSTOP) for 2 s; killed" \
    "was stopped (SIGSTOP)" 10
kill -0 "$w" 2>/dev/null && { no "the stopped worker is still there"; kill -9 "$w"; } || ok

# 2. a silent worker: PARITY_WORKER_SILENCE_S=2, beside a backend whose run never returns (--timeout 10)
out="$T/silent"
t0=$(date +%s.%N)
PARITY_WORKER_SILENCE_S=2 timeout 60 "$PARITY" run --suite quick -o relu -b cpu,tp_hang -j 2 --timeout 10 \
    --plugin "$BUILD/tests/plugins/hang.so" --no-progress --out "$out" >"$out.log" 2>&1
rc=$?
t1=$(date +%s.%N)
expect "silent workers" $rc "$(echo "$t1 - $t0" | bc)" 6 "harness worker [01] sent nothing for 2 s; killed" \
    "sent nothing for 2 s" 1
sleep 0.2
left=$(ps -eo args | grep -F -- "$T/" | grep -v grep | wc -l)
[ "$left" = 0 ] && ok || no "$left processes of the runs left running"
finish
