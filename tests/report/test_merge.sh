# test_merge.sh - the reader and the merge, end to end (reports/report_read.c, reports/merge.c):
#   - `parity report` renders a report file with the same terminal summary the run printed;
#   - a report read and written back (a merge of one report) is the same JSON, field for field, but for the time
#     it was written and the command line;
#   - shards 1/3, 2/3, 3/3 of a run merged equal the unsharded run case for case: the same cases in the same order,
#     and every record with the same verdict, reason, metrics and worst element (timings aside);
#   - merges that are not of shards of one run are refused (exit 2, the file and the reason named): a missing shard,
#     a shard twice, another seed, another selection, other backends;
#   - malformed reports are refused with the file, the JSON path and the reason: truncated, not a report, a bad
#     verdict, a record of an unknown case, another schema version.
# The comparisons are made by python3's json module, not by parity.
. tests/report/lib.sh

fixture_report "$T/all" || { no "fixture run"; finish; exit 1; }
ok

# the terminal summary from the file is the one the run printed
"$PARITY" report "$T/all/report.json" >"$T/summary.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || no "parity report on a report with failures exited $rc, expected 1"
grep -v '^report:' "$T/all.log" | diff - "$T/summary.txt" >"$T/d.txt" && ok || { no "summary from the file differs from the run's"; head "$T/d.txt"; }

# read and written back
check "merge of one report" "$PARITY" merge "$T/all/report.json" -o "$T/rt/report.json"
check "round trip keeps every field" python3 - "$T/all/report.json" "$T/rt/report.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
diff = [k for k in set(a) | set(b) if k not in ("created", "command_line") and a.get(k) != b.get(k)]
if diff:
    sys.exit("fields differ after the round trip: %s" % ", ".join(sorted(diff)))
PY

# shards
for k in 1 2 3; do
    fixture_report "$T/s$k" --shard $k/3 || no "shard $k/3 run"
done
check "merge of shards 1/3 2/3 3/3" "$PARITY" merge "$T/s2/report.json" "$T/s3/report.json" "$T/s1/report.json" \
    -o "$T/merged/report.json"
check "merged shards equal the unsharded run case for case" python3 - "$T/all/report.json" "$T/merged/report.json" <<'PY'
import json, sys
a, m = (json.load(open(p)) for p in sys.argv[1:3])
if [c["id"] for c in a["cases"]] != [c["id"] for c in m["cases"]]:
    sys.exit("the merged cases are not the unsharded run's, in its order")
if a["cases"] != m["cases"]:
    sys.exit("a case's fields differ")
key = lambda r: (r["case"], r["backend"])
ra = {key(r): r for r in a["results"]}
rm = {key(r): r for r in m["results"]}
if list(ra) != list(rm):
    sys.exit("records differ: %d unsharded, %d merged" % (len(ra), len(rm)))
for k in ra:
    for f in ("verdict", "reason", "metrics", "worst", "repro"):
        if ra[k][f] != rm[k][f]:
            sys.exit("record %s: %s differs" % (k, f))
sa = {s["backend"]: s["counts"] for s in a["summary"]["backends"]}
sm = {s["backend"]: s["counts"] for s in m["summary"]["backends"]}
if sa != sm:
    sys.exit("summary counts differ")
if m["config"]["shard"] is not None or len(m["shards"]) != 3:
    sys.exit("the merged report should be unsharded and list its 3 shards")
if sorted(s["shard"] for s in m["shards"]) != ["1/3", "2/3", "3/3"]:
    sys.exit("shards listed wrongly")
PY

# refusals: exit 2 and a message naming the file and the reason
refuse() {
    d=$1 want=$2
    shift 2
    "$PARITY" merge "$@" -o "$T/bad/report.json" >"$T/r.out" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$want" "$T/r.out" && [ ! -e "$T/bad/report.json" ]; then ok; else
        no "$d: exit $rc, message: $(head -1 "$T/r.out") (expected exit 2 and '$want')"; fi
}
refuse "missing shard" "shard 2/3 is missing" "$T/s1/report.json" "$T/s3/report.json"
refuse "shard twice" "shard 1/3 again" "$T/s1/report.json" "$T/s1/report.json" "$T/s2/report.json"
refuse "unsharded among shards" "not a shard report" "$T/s1/report.json" "$T/all/report.json"
fixture_report "$T/seed2" --shard 2/3 --seed 2 || no "seed 2 run"
refuse "another seed" "seed 2, but" "$T/s1/report.json" "$T/seed2/report.json" "$T/s3/report.json"
"$PARITY" run --suite quick -o relu -b cpu --no-progress --shard 2/3 --out "$T/other" >/dev/null 2>&1
refuse "another selection or backends" "another selection" "$T/s1/report.json" "$T/other/report.json" "$T/s3/report.json"

# malformed reports
mangle() { # NAME PYTHON-EXPRESSION-ON-d
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[2], 'w'))" \
        "$T/all/report.json" "$T/$1.json"
}
bad_read() {
    d=$1 file=$2 want=$3
    "$PARITY" report "$file" >"$T/r.out" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$file" "$T/r.out" && grep -q -- "$want" "$T/r.out"; then ok; else
        no "$d: exit $rc, message: $(head -1 "$T/r.out") (expected exit 2, the file and '$want')"; fi
}
head -c 5000 "$T/all/report.json" >"$T/trunc.json"
bad_read "truncated report" "$T/trunc.json" "ends early"
echo '[1, 2]' >"$T/array.json"
bad_read "not a report" "$T/array.json" "not a report object"
mangle verdict 'd["results"][7]["verdict"] = "PASSED"'
bad_read "bad verdict" "$T/verdict.json" 'results\[7\].verdict: "PASSED" is not a verdict'
mangle unknown 'd["results"][3]["case"] = "nosuch#seed=1"'
bad_read "record of an unknown case" "$T/unknown.json" 'results\[3\].case: "nosuch#seed=1" is not in cases'
mangle version 'd["version"] = 99'
bad_read "another version" "$T/version.json" "this build reads version 1"
mangle samples 'd["results"][0]["timing"]["samples_ms"] = ["x"]'
bad_read "a sample that is not a number" "$T/samples.json" 'results\[0\].timing.samples_ms'
bad_read "missing file" "$T/nosuch.json" "cannot open"
finish
