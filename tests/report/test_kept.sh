# test_kept.sh - backend children kept across jobs (PAR_PROC_REUSE, exec/server.c, docs/reliability.md "Kept
# backend children") with tests/plugins/kept.c, whose process counts the jobs it prepared. The quick suite's relu
# cases at -j 1, one worker: with act=crash the 3rd job of each process crashes, so a kept child makes exactly
# every 3rd supported case a CRASH (the crash costs that job only: the next starts a fresh child, which counts from
# 1 again) and every other case PASS; with act=sticky (wrong from a process's 2nd job on) exactly every 2nd case
# FAILs, because the child is restarted after the FAIL (without that, every case after the first would). With a
# fresh child per job (PARITY_KEEP_CHILD=0) or at most 2 jobs per child (PARITY_KEEP_CHILD=2), act=crash never
# crashes: the switch and the cap hold. The expected verdicts are simulated from the order of the records.
. tests/report/lib.sh

PLUGIN="$BUILD/tests/plugins/kept.so"
# run NAME KEEP ACT: a run of the relu cases on tp_kept[act=ACT] with PARITY_KEEP_CHILD=KEEP ("" unset)
run() {
    if [ -n "$2" ]; then export PARITY_KEEP_CHILD="$2"; else unset PARITY_KEEP_CHILD; fi
    "$PARITY" run --suite quick -o relu -j 1 --timeout 10 --no-progress -b "tp_kept[act=$3]" --plugin "$PLUGIN" \
        --out "$T/$1" >"$T/$1.log" 2>&1
    echo $? >"$T/$1.rc"
    unset PARITY_KEEP_CHILD
}
# verdicts NAME PERIOD: the records' verdicts against a process that misbehaves on its PERIOD-th supported job and
# is then replaced (PERIOD 0: never)
verdicts() {
    python3 - "$T/$1/report.json" "$2" "$3" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
period, bad = int(sys.argv[2]), sys.argv[3]
res = [r for r in rep["results"] if r["backend"].startswith("tp_kept")]
n, k, errs, counts = 0, 0, [], {}
for r in res:
    v = r["verdict"]
    counts[v] = counts.get(v, 0) + 1
    if v == "UNSUPPORTED":
        continue
    k += 1
    want = "PASS"
    if period and k == period:
        want, k = bad, 0
    if v != want:
        errs.append("%s: %s (%s), expected %s" % (r["case"], v, r["reason"][:80], want))
    n += 1
if n < 6:
    errs.append("only %d supported relu cases" % n)
if period and counts.get(bad, 0) == 0:
    errs.append("no %s at all" % bad)
print("%d records: %s" % (len(res), counts))
for e in errs[:5]:
    print(e)
sys.exit(1 if errs else 0)
PY
}

run crash "" crash
check "act=crash, kept children: every 3rd supported job CRASH, the others PASS" verdicts crash 3 CRASH
[ "$(cat "$T/crash.rc")" = 1 ] && ok || no "act=crash: exit $(cat "$T/crash.rc"), expected 1"
grep -q "killed by signal 11" "$T/crash/report.json" && ok || no "act=crash: no record says signal 11"
run sticky "" sticky
check "act=sticky, kept children: every 2nd supported job FAIL (restarted after it), the others PASS" \
    verdicts sticky 2 FAIL
run fresh 0 crash
check "act=crash, PARITY_KEEP_CHILD=0: a fresh child per job, all PASS" verdicts fresh 0 -
run cap2 2 crash
check "act=crash, PARITY_KEEP_CHILD=2: at most 2 jobs a child, all PASS" verdicts cap2 0 -
finish
