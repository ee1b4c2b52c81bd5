# test_diff.sh - the report diff and its gate, end to end (reports/diff.c, cli/cli_diff.c):
#   - a deliberate latency regression (the test plugin tp_slow with PARITY_TP_SLOW_EXTRA=1, twice the time, on the
#     three matmul cases of tests/data/diff, 5 rounds of 10 timed runs each) is a FAIL (exit 1), listed as a latency
#     regression with its repro command, and `parity run --baseline` exits 1 on it after timing the regressions again
#     (a second timing in fresh processes, which the regression survives); two runs of the same build are no FAIL
#     (exit 0, also through --baseline). This checks the gate's mechanics, not its power: +100% stands far above the
#     fail threshold (15%) and above what a change of the machine's load between the base run, the new run and the
#     second timing does to a record (a +20% regression, 5 points over the threshold, was missed by the second
#     timing once in CI on a loaded machine). How often a +20% regression is caught is what tools/diff_noise.sh
#     measures (docs/reports-diff.md, "Measured"); on a shared machine a burst of another process can slow every
#     run of one record alike, so this test asks for the gate (at least one of the three records), not all three;
#   - verdict changes made in a copy of the fixture report: a PASS turned CRASH is a new failure (FAIL, exit 1), a FAIL
#     turned PASS is fixed, a PASS turned UNSUPPORTED is lost coverage, a ratio multiplied by 10 is accuracy drift, a
#     case removed is a case only in BASE; the fixture against itself is PASS with every count 0;
#   - a run without the failing backend (BASE) against the fixture (NEW): every failing record of that backend is a
#     new failure (failing in NEW, absent from BASE);
#   - bad input: a truncated report, a missing file, another schema version, an unwritable --html path, contradictory
#     thresholds: exit 2 and a message naming the file or the option;
#   - --html writes one page that an HTML parser reads (xmllint, skipped when absent).
# Reports are edited with python3's json module (the checks that need it are skipped without it).
. tests/report/lib.sh

SLOW="$BUILD/tests/plugins/slow.so"
slow_run() { # OUT [--baseline BASE] [ENV...]: the three matmul cases on tp_slow, 5 rounds of 10 timed runs each
    out=$1
    shift
    bl=''
    [ "${1:-}" = --baseline ] && bl="--baseline $2" && shift 2
    env "$@" "$PARITY" run tests/data/diff -b tp_slow --plugin "$SLOW" --repeat 10 --rounds 5 -j 1 --no-progress \
        --out "$out" $bl >"$out.log" 2>&1
}
# count KIND FILE: the count printed for KIND in the diff's summary
count() { sed -n "s/^  $1  *\([0-9][0-9]*\).*/\1/p" "$2"; }

# --- latency ------------------------------------------------------------------------------------------------------
slow_run "$T/base" && ok || no "tp_slow run failed: $(tail -3 "$T/base.log")"
slow_run "$T/same" --baseline "$T/base/report.json"
rc=$?
[ $rc -eq 0 ] && grep -q '^parity diff: ' "$T/same.log" && ok ||
    no "the same build with --baseline: exit $rc (expected 0 and the diff printed): $(tail -3 "$T/same.log")"
slow_run "$T/slower" --baseline "$T/base/report.json" PARITY_TP_SLOW_EXTRA=1
rc=$?
[ $rc -eq 1 ] && grep -q '^parity diff: FAIL' "$T/slower.log" && ok ||
    no "+100% with --baseline: exit $rc (expected 1, the gate FAIL): $(grep -E '^parity diff|x1\.' "$T/slower.log")"
# --baseline times its latency regressions again, in fresh processes, and keeps those the second timing shows:
# the +100% is in every timing, so they are reproduced
grep -Eq '^latency regressions timed again: [1-3], reproduced: [1-3]$' "$T/slower.log" && ok ||
    no "+100% with --baseline: no second timing reproduced it: $(grep -E 'timed again|not reproduced' "$T/slower.log")"

"$PARITY" diff "$T/base/report.json" "$T/slower/report.json" >"$T/slower.diff" 2>&1
rc=$?
n=$(count "latency regression" "$T/slower.diff")
if [ $rc -eq 1 ] && [ "${n:-0}" -ge 1 ] && grep -q '^parity diff: FAIL' "$T/slower.diff"; then ok; else
    no "+100% on tp_slow: exit $rc (expected 1), ${n:-0} latency regressions (expected 1 to 3)"
    sed 's/^/    /' "$T/slower.diff" | grep -E 'x[01]\.|parity diff'; fi
[ "${n:-0}" = 3 ] || echo "NOTE test_diff: +100% flagged on ${n:-0} of 3 records" # (visible in the step's log)
grep -q "repro: .*parity run tests/data/diff/matmul_[0-9]*.json -b tp_slow --plugin" "$T/slower.diff" && ok ||
    no "the regression's repro command is not listed"
[ "$(count "new failure" "$T/slower.diff")" = 0 ] && ok || no "+100% latency reported as a new failure"

"$PARITY" diff "$T/base/report.json" "$T/same/report.json" >"$T/same.diff" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(count "latency regression" "$T/same.diff")" = 0 ]; then ok; else
    no "the same build twice: exit $rc (expected 0, no FAIL)"
    sed 's/^/    /' "$T/same.diff" | grep -E 'x[01]\.|parity diff'; fi
grep -q '^latency: 3 records judged' "$T/same.diff" && ok || no "the same build twice: not 3 records judged"

# too few samples: nothing judged, said so
"$PARITY" diff "$T/base/report.json" "$T/slower/report.json" --min-samples 51 >"$T/few.diff" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^latency: 0 records judged .* 3 with fewer than 51 samples' "$T/few.diff" && ok ||
    no "--min-samples 51 on 50 samples (5 rounds of 10): exit $rc, $(grep '^latency' "$T/few.diff")"

# --- verdicts, coverage, drift ------------------------------------------------------------------------------------
fixture_report "$T/fx" || { no "fixture run"; finish; exit 1; }
"$PARITY" diff "$T/fx/report.json" "$T/fx/report.json" >"$T/selfdiff" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^parity diff: PASS' "$T/selfdiff" && ! grep -q '^  [a-z( )]*  *[1-9]' "$T/selfdiff"
then ok; else no "the fixture against itself: exit $rc, not PASS with every count 0"; head -20 "$T/selfdiff"; fi

if command -v python3 >/dev/null 2>&1; then
    # NEW: the fixture with one record of each change; the picks are printed (case|backend per line)
    python3 - "$T/fx/report.json" "$T/edited.json" >"$T/picks" <<'PY' || no "editing the fixture report"
import json, sys
d = json.load(open(sys.argv[1]))
res = d["results"]
passing = [r for r in res if r["verdict"] == "PASS" and r["metrics"] and r["metrics"]["max_ratio"] is not None]
fail = next(r for r in res if r["verdict"] == "FAIL")
crash, unsup = passing[0], passing[1]
drift = next(r for r in passing[2:] if 0.01 <= r["metrics"]["max_ratio"] < 0.1)
crash["verdict"], crash["metrics"] = "CRASH", None
crash["reason"] = "killed by signal 11 (Segmentation fault) during run"
unsup["verdict"], unsup["reason"], unsup["metrics"] = "UNSUPPORTED", "no longer supported", None
fail["verdict"], fail["reason"] = "PASS", ""
drift["metrics"]["max_ratio"] *= 10
# a case removed (one that none of the edited records belongs to)
used = {r["case"] for r in (crash, unsup, fail, drift)}
gone = next(c["id"] for c in d["cases"] if c["id"] not in used)
d["cases"] = [c for c in d["cases"] if c["id"] != gone]
d["results"] = [r for r in res if r["case"] != gone]
json.dump(d, open(sys.argv[2], "w"))
for r in (crash, unsup, fail, drift):
    print(r["case"] + "|" + r["backend"])
print(gone)
PY
    "$PARITY" diff "$T/fx/report.json" "$T/edited.json" --max-items -1 >"$T/edited.diff" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q '^parity diff: FAIL (1 new failure)' "$T/edited.diff" && ok ||
        no "a PASS turned CRASH: exit $rc (expected 1), $(grep '^parity diff' "$T/edited.diff")"
    for kind in "new failure" "fixed" "coverage lost" "accuracy drift (worse)" "case only in BASE"; do
        got=$(count "$kind" "$T/edited.diff") # (parentheses are literal in a basic regular expression)
        [ "$got" = 1 ] && ok || no "$kind: counted $got, expected 1"
    done
    for k in "verdict changed" "latency regression" "backend only in BASE" "case only in NEW"; do
        [ "$(count "$k" "$T/edited.diff")" = 0 ] && ok || no "$k: expected 0"
    done
    crash_case=$(sed -n 1p "$T/picks" | cut -d'|' -f1)
    crash_be=$(sed -n 1p "$T/picks" | cut -d'|' -f2)
    # the new failure is the first item, with the verdicts, the reason and its repro command
    sed -n '/^items, worst first/{n;p;n;p;}' "$T/edited.diff" >"$T/first"
    grep -qF "FAIL new failure" "$T/first" && grep -qF "$crash_case" "$T/first" &&
        grep -qF "PASS -> CRASH: killed by signal 11" "$T/first" &&
        grep -qF "repro: $PARITY run --case '$crash_case' -b $crash_be" "$T/first" && ok ||
        { no "the new failure is not the first item with its repro"; cat "$T/first"; }
    grep -q 'accuracy drift (worse) .* error/budget .* (x10)' "$T/edited.diff" && ok || no "the drift item's factor"
    grep -q 'WARN coverage lost .* PASS -> UNSUPPORTED' "$T/edited.diff" && ok || no "the coverage item"

    # every failing record of a backend absent from BASE is a new failure
    "$PARITY" run --suite quick -o relu,add,conv2d,softmax,linear -b cpu,qnnpack --no-progress --out "$T/clean" \
        >"$T/clean.log" 2>&1 || no "the run without tp_offbyone: exit $?"
    want=$(python3 -c "import json,sys; rs=json.load(open(sys.argv[1]))['results']
print(sum(r['verdict'] not in ('PASS','UNSUPPORTED') for r in rs))" "$T/fx/report.json")
    "$PARITY" diff "$T/clean/report.json" "$T/fx/report.json" >"$T/clean.diff" 2>&1
    rc=$?
    got=$(count "new failure" "$T/clean.diff")
    [ $rc -eq 1 ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
        [ "$(count "backend only in NEW" "$T/clean.diff")" = 1 ] && ok ||
        no "backend only in NEW: exit $rc, $got new failures (expected $want)"
    # and the other way round the failures leave with their backend: WARN (coverage), not FAIL
    "$PARITY" diff "$T/fx/report.json" "$T/clean/report.json" >"$T/back.diff" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q '^parity diff: WARN (1 backend only in BASE)' "$T/back.diff" && ok ||
        no "backend only in BASE: exit $rc, $(grep '^parity diff' "$T/back.diff")"

    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['version']=2; json.dump(d, open(sys.argv[2],'w'))" \
        "$T/fx/report.json" "$T/v2.json"
else
    skip "python3 not found: the edited-report checks did not run"
fi

# --- bad input ------------------------------------------------------------------------------------------------------
bad() { # DESCRIPTION WANT ARGS...: exit 2 and WANT in the message
    d=$1 want=$2
    shift 2
    "$PARITY" diff "$@" >"$T/bad.out" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$want" "$T/bad.out"; then ok; else
        no "$d: exit $rc, message: $(head -1 "$T/bad.out") (expected exit 2 and '$want')"; fi
}
head -c 3000 "$T/fx/report.json" >"$T/trunc.json"
bad "truncated NEW" "$T/trunc.json" "$T/fx/report.json" "$T/trunc.json"
bad "truncated BASE" "$T/trunc.json" "$T/trunc.json" "$T/fx/report.json"
bad "missing file" "$T/nosuch.json" "$T/fx/report.json" "$T/nosuch.json"
[ -f "$T/v2.json" ] && bad "another schema version" "$T/v2.json" "$T/fx/report.json" "$T/v2.json"
bad "unwritable --html" "$T/no/such/dir/diff.html" "$T/fx/report.json" "$T/fx/report.json" \
    --html "$T/no/such/dir/diff.html"
bad "fail threshold below warn" "--latency-fail" "$T/fx/report.json" "$T/fx/report.json" --latency-fail 0.01
bad "one report" "expected two report files" "$T/fx/report.json"

# --- HTML -----------------------------------------------------------------------------------------------------------
"$PARITY" diff "$T/base/report.json" "$T/slower/report.json" --html "$T/diff.html" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '<h1>parity diff: <span class="gate vF">FAIL</span></h1>' "$T/diff.html" &&
    [ "$(grep -c '<tr><td class="vF">FAIL</td><td>latency regression' "$T/diff.html")" -ge 1 ] && ok ||
    no "--html: exit $rc, the page lacks the gate or the regressions"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --html --noout "$T/diff.html" 2>"$T/xmllint.out" && [ ! -s "$T/xmllint.out" ] && ok ||
        { no "xmllint --html: the page does not parse cleanly"; head -5 "$T/xmllint.out"; }
else
    skip "xmllint not found: the page was not parsed"
fi
finish
