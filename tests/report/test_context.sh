# test_context.sh - the per-context entries of the backend ABI end to end, with the test plugin tp_context
# (tests/plugins/context.c), each knob changing one thing:
#   - PAR_PROC_ARITH: a relu whose outputs are rounded to f16 FAILs under the table's f32 (its budget is 0) and
#     PASSes when the context declares f16_storage, both instances in one run (so one cached reference cannot serve
#     both); report.json's backend arith is the declared one, and so are `parity list backends`, the HTML page and
#     the JUnit properties rendered from the file read back; an arith outside par_arith makes the instance unusable
#     (exit 2, naming the backend and the value);
#   - PAR_PROC_DIAGNOSTICS: a diagnostic after prepare or after run 2 turns an otherwise passing record into FAIL
#     with "diagnostic: TEXT" as its reason, the count in the record and the oracle's metrics still there; with values
#     that also fail, the values' reason follows; every message is counted, the first kept; a text of raw bytes
#     without a terminator is cleaned and bounded; a crash stays CRASH (the diagnostic follows its reason);
#   - PAR_PROC_DEVICE_TIME: a synthetic device time of exactly 2 ms per run is the record's timing.device (median,
#     p10, p90 and every sample 2, one per timed run; pooled over --rounds), absent for a backend that does not time
#     its device; a report without it, or a malformed one, reads back as the schema says; read and written again
#     (`parity merge`), the arith, device times and diagnostics come out as they went in; the summary of the run
#     and of `parity report` read back show it, the HTML page shows it; a device time longer than the run is an
#     ERROR naming the backend; `parity diff` judges device times 1.5 times longer as latency regressions of the
#     device time, labelled so; `parity bench` prints it beside the wall time and per node (1 ms), in its
#     JSON too, and a diagnostic makes bench's check FAIL.
. tests/report/lib.sh

P="$BUILD/tests/plugins/context.so"
C='relu(x=[2,3,5,7])#seed=1'
[ -f "$P" ] || { no "no test plugin $P (make all builds it)"; finish; exit 1; }

# run OUT BACKENDS: one case, every backend; the exit status in $T/OUT.rc
run() {
    "$PARITY" run --case "$C" -b "$2" --plugin "$P" --no-progress -j 1 --out "$T/$1" >"$T/$1.log" 2>&1
    echo $? >"$T/$1.rc"
}

# field OUT PYTHON-EXPRESSION EXPECTED: the expression over the report r (and its records by backend label, x)
field() {
    got=$(python3 - "$T/$1/report.json" "$2" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
x = {rec["backend"]: rec for rec in r["results"]}
b = {be["label"]: be for be in r["backends"]}
print(eval(sys.argv[2]))
PY
)
    [ "$got" = "$3" ] && ok || no "$1: $2 is '$got', expected '$3'"
}

# ---- PAR_PROC_ARITH ----------------------------------------------------------------------------------------------
run arith 'tp_context[round=f16],tp_context[arith=f16_storage,round=f16],tp_context,tp_context[arith=bf16]'
[ "$(cat "$T/arith.rc")" = 1 ] && ok || no "arith run exited $(cat "$T/arith.rc"), expected 1 (one FAIL)"
field arith 'x["tp_context[round=f16]"]["verdict"]' FAIL
field arith 'x["tp_context[arith=f16_storage,round=f16]"]["verdict"]' PASS
field arith 'x["tp_context"]["verdict"]' PASS
field arith 'b["tp_context[arith=f16_storage,round=f16]"]["arith"]' f16_storage
field arith 'b["tp_context[round=f16]"]["arith"]' f32
# bfloat16 operands change only the dot products' budgets: relu is exact under it too
field arith 'b["tp_context[arith=bf16]"]["arith"]' bf16
field arith 'x["tp_context[arith=bf16]"]["verdict"]' PASS
# the same values pass under the f16_storage budget only because it is wider: they are not exact
field arith 'x["tp_context[arith=f16_storage,round=f16]"]["metrics"]["max_abs"] > 0' True

# an f32 leaf stored in f16 may become subnormal or zero there (2^-25 absolute, the standard model with underflow):
# the quick suite's relu cases with tiny and subnormal inputs pass a backend that rounds correctly to f16
"$PARITY" run --suite quick -o relu -b 'tp_context[arith=f16_storage,round=f16]' --plugin "$P" --no-progress -j 1 \
    --out "$T/f16leaf" >"$T/f16leaf.log" 2>&1 && ok ||
    no "relu in f16 storage with tiny inputs: $(grep -E 'FAIL|conformance' "$T/f16leaf.log" | head -3)"

"$PARITY" report "$T/arith/report.json" --html "$T/arith.html" --junit "$T/arith.xml" >/dev/null 2>&1
grep -q '<th>arith</th><td>f16_storage</td>' "$T/arith.html" && ok ||
    no "the HTML page read back does not show arith f16_storage: $(grep -o '<th>arith</th><td>[^<]*' "$T/arith.html" | head -3)"
grep -q 'name="backend.arith" value="f16_storage"' "$T/arith.xml" && ok ||
    no "the JUnit XML read back has no backend.arith f16_storage property"
grep -q 'name="backend.arith" value="bf16"' "$T/arith.xml" && ok ||
    no "the JUnit XML read back has no backend.arith bf16 property"

"$PARITY" run --case "$C" -b 'tp_context[arith=7]' --plugin "$P" --no-progress --out "$T/bad" >"$T/bad.log" 2>&1
rc=$?
[ $rc -eq 2 ] && ok || no "an arith outside par_arith exited $rc, expected 2"
grep -q "backend 'tp_context' declares unknown arithmetic 7 (parity_arith" "$T/bad.log" && ok ||
    no "the refusal does not name the backend and the value: $(head -2 "$T/bad.log")"

"$PARITY" list backends --plugin "$P" >"$T/list.txt" 2>&1
grep -Eq '^tp_context +f32 +yes' "$T/list.txt" && ok || no "list backends: $(grep tp_context "$T/list.txt")"

# ---- PAR_PROC_DIAGNOSTICS ----------------------------------------------------------------------------------------
run diag 'tp_context[diag=prepare],tp_context[diag=2],tp_context[diag=prepare,crash=1],tp_context[round=f16,diag=1]'
[ "$(cat "$T/diag.rc")" = 1 ] && ok || no "diag run exited $(cat "$T/diag.rc"), expected 1"
for be in 'tp_context[diag=prepare]' 'tp_context[diag=2]'; do
    field diag "x[\"$be\"][\"verdict\"]" FAIL
    field diag "x[\"$be\"][\"diagnostics\"]" 1
    # the oracle's metrics are there, and say the values passed
    field diag "(x[\"$be\"][\"metrics\"][\"n\"], x[\"$be\"][\"metrics\"][\"n_over\"])" '(210, 0)'
done
field diag 'x["tp_context[diag=prepare]"]["reason"]' \
    'diagnostic: validation: test diagnostic after prepare (after prepare)'
field diag 'x["tp_context[diag=2]"]["reason"]' 'diagnostic: validation: test diagnostic after run 2 (after run 2)'
field diag 'x["tp_context[diag=prepare,crash=1]"]["verdict"]' CRASH
field diag '"diagnostic: validation" in x["tp_context[diag=prepare,crash=1]"]["reason"]' True
# the crash's own reason first (a signal, or AddressSanitizer's exit status in a sanitized build)
field diag '" during run 1; diagnostic: validation" in x["tp_context[diag=prepare,crash=1]"]["reason"]' True
field diag 'x["tp_context[round=f16,diag=1]"]["reason"].startswith("diagnostic: validation")' True
field diag '"; values: output" in x["tp_context[round=f16,diag=1]"]["reason"]' True
field diag 'x["tp_context[round=f16,diag=1]"]["metrics"]["n_over"] > 0' True
# every message counted, the first one kept (one after prepare, one after each of the 4 runs: 1 warm-up, 3 timed)
run every 'tp_context[diag=every],tp_context[diag=prepare,diag_raw=1]'
field every 'x["tp_context[diag=every]"]["diagnostics"]' 5
field every 'x["tp_context[diag=every]"]["reason"]' \
    'diagnostic: validation: test diagnostic after prepare (after prepare; 4 more)'
# a text of raw bytes without a NUL: one line, valid UTF-8 (python3 decodes the file strictly), bounded, and where
# it came still fits
check "a raw diagnostic text is cleaned and bounded" python3 - "$T/every/report.json" <<'PY'
import sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", errors="strict")
import json
r = json.loads(raw)
x = [rec for rec in r["results"] if rec["backend"] == "tp_context[diag=prepare,diag_raw=1]"][0]
reason = x["reason"]
assert x["verdict"] == "FAIL", x["verdict"]
assert reason.startswith("diagnostic: \\x01bad"), reason[:40]
assert reason.endswith(" (after prepare)"), reason[-40:]
assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in reason), "a control character in the reason"
assert len(reason.encode()) < 512, len(reason.encode())
PY
grep -q 'FAIL    tp_context\[diag=2\] .*diagnostic: validation: test diagnostic after run 2' "$T/diag.log" && ok ||
    no "the summary does not list the diagnostic's FAIL: $(grep -c FAIL "$T/diag.log") FAIL lines"
"$PARITY" report "$T/diag/report.json" --junit "$T/diag.xml" >/dev/null 2>&1
grep -q 'diagnostic: validation: test diagnostic after run 2' "$T/diag.xml" && ok ||
    no "the JUnit XML does not carry the diagnostic's reason"
"$PARITY" report "$T/diag/report.json" --html "$T/diag.html" >/dev/null 2>&1
python3 - "$T/diag.html" <<'PY' && ok || no "the HTML failures do not show the diagnostic's reason"
import sys
s = open(sys.argv[1]).read()
f = s[s.index('id="failures"'):]
assert "diagnostic: validation: test diagnostic after run 2 (after run 2)" in f
PY

# ---- PAR_PROC_DEVICE_TIME ----------------------------------------------------------------------------------------
run dev 'tp_context[device=2],tp_context'
[ "$(cat "$T/dev.rc")" = 0 ] && ok || no "device time run exited $(cat "$T/dev.rc"), expected 0: $(tail -3 "$T/dev.log")"
field dev 'x["tp_context[device=2]"]["timing"]["device"]' \
    "{'runs': 3, 'median_ms': 2, 'p10_ms': 2, 'p90_ms': 2, 'samples_ms': [2, 2, 2]}"
field dev 'x["tp_context[device=2]"]["timing"]["runs"]' 3
field dev '"device" in x["tp_context"]["timing"]' False
# each timed run took at least the device time (the plugin waits twice as long, and 0.5 ms)
field dev 'x["tp_context[device=2]"]["timing"]["run_p10_ms"] >= 4.5' True
grep -Eq '^tp_context\[device=2\] +device time of 1 record .*median 2 ms' "$T/dev.log" && ok ||
    no "the run's summary has no device time line: $(grep -i device "$T/dev.log" | head -3)"
"$PARITY" report "$T/dev/report.json" >"$T/dev.summary" 2>&1
grep -Eq '^tp_context\[device=2\] +device time of 1 record .*median 2 ms' "$T/dev.summary" && ok ||
    no "the summary read back has no device time line"
"$PARITY" report "$T/dev/report.json" --html "$T/dev.html" >/dev/null 2>&1
grep -q 'device median 2 ms, p10 2, p90 2 (3 runs)' "$T/dev.html" && grep -q '(device 2 ms)' "$T/dev.html" && ok ||
    no "the HTML latency section does not show the device time"

# with --rounds, the rounds' device times are pooled like the wall times
"$PARITY" run --case "$C" -b 'tp_context[device=2]' --plugin "$P" --no-progress -j 1 --rounds 2 --out "$T/rounds" \
    >"$T/rounds.log" 2>&1
field rounds 'x["tp_context[device=2]"]["timing"]["device"]' \
    "{'runs': 6, 'median_ms': 2, 'p10_ms': 2, 'p90_ms': 2, 'samples_ms': [2, 2, 2, 2, 2, 2]}"

run devbad 'tp_context[device=2,device_bad=1]'
field devbad 'x["tp_context[device=2,device_bad=1]"]["verdict"]' ERROR
field devbad '"device time of 1e+06 ms" in x["tp_context[device=2,device_bad=1]"]["reason"]' True

# a report without the device field reads back (version-1 additive): the reader defaults
python3 - "$T/dev/report.json" "$T/nodev.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for rec in r["results"]:
    rec["timing"].pop("device", None)
json.dump(r, open(sys.argv[2], "w"))
PY
"$PARITY" report "$T/nodev.json" >"$T/nodev.summary" 2>&1
rc=$?
[ $rc -eq 0 ] && ! grep -q 'device time of' "$T/nodev.summary" && ok ||
    no "a report without device times: exit $rc, $(grep -i device "$T/nodev.summary" | head -2)"
# and a malformed one is refused, naming the field
python3 - "$T/dev/report.json" "$T/baddev.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for rec in r["results"]:
    if "device" in rec["timing"]:
        rec["timing"]["device"]["median_ms"] = -1
json.dump(r, open(sys.argv[2], "w"))
PY
"$PARITY" report "$T/baddev.json" >"$T/baddev.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'timing.device.median_ms' "$T/baddev.txt" && ok ||
    no "a negative device time: exit $rc, $(head -2 "$T/baddev.txt")"

# PAR_PROC_NOTE: the backend's note is the record's "note", read back and written again unchanged; none, no field
run note 'tp_context[note=placed_on_npu],tp_context'
field note 'x["tp_context[note=placed_on_npu]"].get("note")' placed_on_npu
field note 'x["tp_context[note=placed_on_npu]"]["verdict"]' PASS
field note '"note" in x["tp_context"]' False
"$PARITY" merge "$T/note/report.json" -o "$T/note-merged.json" >/dev/null 2>&1 &&
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if any(x.get("note") == "placed_on_npu" for x in r["results"]) else 1)' "$T/note-merged.json" && ok ||
    no "the note did not survive the reader and the writer"

# read back and written again (parity merge of one shard): the instance's arith, the device times and the count of
# diagnostics come out as they went in
"$PARITY" run --suite quick -o relu -b 'tp_context[arith=f16_storage,round=f16,device=1,diag=2]' --plugin "$P" \
    --no-progress -j 1 --shard 1/1 --out "$T/shard" >"$T/shard.log" 2>&1
"$PARITY" merge "$T/shard/report.json" -o "$T/merged.json" >"$T/merge.log" 2>&1 || no "merge: $(head -2 "$T/merge.log")"
check "arith, device times and diagnostics survive the reader and the writer" python3 - "$T/shard/report.json" \
    "$T/merged.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert [x["arith"] for x in a["backends"]] == [x["arith"] for x in b["backends"]] == ["f16_storage"], a["backends"]
ra = {x["case"]: x for x in a["results"]}
rb = {x["case"]: x for x in b["results"]}
assert ra.keys() == rb.keys()
timed = 0
for k in ra:
    assert ra[k]["timing"].get("device") == rb[k]["timing"].get("device"), k
    assert ra[k].get("diagnostics") == rb[k].get("diagnostics"), k
    assert ra[k]["verdict"] == rb[k]["verdict"] and ra[k]["reason"] == rb[k]["reason"], k
    timed += "device" in ra[k]["timing"]
assert timed > 10 and sum(1 for k in ra if ra[k].get("diagnostics") == 1) > 10, (timed, len(ra))
PY

# parity diff: device times 1.5 times longer (the wall times alike) are latency regressions of the device time, one
# item per record, labelled
"$PARITY" run --suite quick -o relu -k '^relu\(x=\[4\]' -b 'tp_context[device=1]' --plugin "$P" --no-progress -j 1 \
    --repeat 10 --out "$T/dbase" >"$T/dbase.log" 2>&1
PARITY_TP_CONTEXT_DEVICE_SCALE=1.5 "$PARITY" run --suite quick -o relu -k '^relu\(x=\[4\]' -b 'tp_context[device=1]' \
    --plugin "$P" --no-progress -j 1 --repeat 10 --out "$T/dnew" >"$T/dnew.log" 2>&1
"$PARITY" diff "$T/dbase/report.json" "$T/dnew/report.json" >"$T/ddiff.txt" 2>&1
rc=$?
n=$(grep -c '^  FAIL latency regression .*device time: median 1 -> 1.5 ms (x1.500' "$T/ddiff.txt")
[ $rc -eq 1 ] && [ "$n" -eq 2 ] && ok || no "diff of device times: exit $rc, $n device regressions of 2: $(head -5 "$T/ddiff.txt")"
grep -Eq '^device time: 2 of them judged' "$T/ddiff.txt" && ok || no "the diff does not count the 2 device tests"
# (the wall times are not asserted on: they are the machine's, and a loaded machine may move them)

# ---- parity bench ------------------------------------------------------------------------------------------------
"$PARITY" export "$C" --out "$T/case.json" >/dev/null 2>&1 || no "parity export"
"$PARITY" bench "$T/case.json" -b 'tp_context[device=2],tp_context[diag=3]' --plugin "$P" --repeat 5 --warmup 1 \
    --json "$T/bench.json" >"$T/bench.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || no "bench with a diagnostic exited $rc, expected 1"
grep -Eq '^tp_context\[device=2\] .* PASS +2\.000$' "$T/bench.txt" && ok ||
    no "bench does not print the device time: $(grep 'device=2' "$T/bench.txt")"
grep -Eq '^ +0 relu0 +relu +1\.0000 ms' "$T/bench.txt" && ok || no "bench does not print the node's device time"
grep -Eq '^tp_context\[diag=3\] .* FAIL ' "$T/bench.txt" && grep -q 'diagnostic: validation: test diagnostic after run 3' \
    "$T/bench.txt" && ok || no "bench does not fail the diagnostic: $(grep -A1 'diag=3' "$T/bench.txt")"
check "bench JSON: device and node times, the diagnostic" python3 - "$T/bench.json" <<'PY'
import json, sys
b = {x["backend"]: x for x in json.load(open(sys.argv[1]))["cases"][0]["backends"]}
d = b["tp_context[device=2]"]
assert (d["device_runs"], d["device_median_ms"], d["device_p10_ms"], d["device_p90_ms"]) == (5, 2, 2, 2), d
assert [(n["node"], n["device_median_ms"]) for n in d["nodes"]] == [(0, 1.0)], d["nodes"]
assert d["median_ms"] >= 2, d
g = b["tp_context[diag=3]"]
assert g["check"] == "FAIL" and g["diagnostics"] == 1 and "after run 3" in g["diagnostic"], g
assert "device_median_ms" not in g, g
PY

finish
