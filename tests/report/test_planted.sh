# tests/report/test_planted.sh - the statistical companion (docs/oracle.md, "The statistical companion") on a whole
# model: the test plugin planted.so (tests/plugins/planted.c) is the example backend with one layer of MobileNetV2
# computed in binary16 products and sums. Declaring f32, the record FAILs (its classifier's budgets, since residual
# additions take rule 5's root-sum-square, see 150 of 1,000 elements over them) and the companion's z is far over its
# bound too; declaring f16 arithmetic, the same outputs PASS; a layer whose partial sums lose their 12 low bits FAILs.
# A layer= that names no dot product is an ERROR naming it. Verdicts and metrics are read from report.json with
# Python's json (skipped without python3). Localization (campaign/localize.h): `parity localize` and `run --localize`
# name the planted layer of the MLP as the first divergent node, and a correct backend has none. The transformer
# encoder (softmax and layer_norm on the path: their companion scales, reference/softmax.c and norm.c) with its first
# query projection planted keeps every element within its budget, yet FAILs on the companion alone, and passes
# without. A linear layer whose error the next add's own rounding hides at the output (tests/data/cases/
# planted_diluted.json) FAILs on the companion on every node (runner/node_stat.c) and localizes to it. About 40 s.
. tests/report/lib.sh

PL="$BUILD/tests/plugins/planted.so"
L=features7_project
# (--no-localize: the verdicts are what this run is for; localization is checked on the smaller models below)
"$PARITY" run cases/models/mobilenet_v2.json --plugin "$PL" --no-progress --no-localize --out "$T/r" -j 2 \
    -b "planted[layer=$L],planted[layer=$L,declare=f16],planted[layer=$L,mode=trunc12],planted[layer=features7_project_bn]" \
    >"$T/run.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && [ -s "$T/r/report.json" ]; then ok; else no "run: exit $rc (expected 1)"; tail -5 "$T/run.log"; fi
command -v python3 >/dev/null 2>&1 || { skip "python3 missing: the report's records not read"; finish; }

python3 - "$T/r/report.json" "$L" >"$T/check.txt" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
layer = sys.argv[2]
rec = {x["backend"]: x for x in r["results"]}
bound = 8.4066
def say(ok, what):
    print(("ok " if ok else "no ") + what)
f32 = rec["planted[layer=%s]" % layer]
m = f32["metrics"]
say(f32["verdict"] == "FAIL", "f16 layer declared f32: FAIL (%s)" % f32["verdict"])
say(m["stat_over"] and m["stat_z"] > bound and m["stat_skip"] == 0, "stat_z %g over the bound" % m["stat_z"])
say("planted f16 at node '%s'" % layer in f32.get("note", ""), "the note names the planted node")
f16 = rec["planted[layer=%s,declare=f16]" % layer]
m = f16["metrics"]
say(f16["verdict"] == "PASS", "declared f16: PASS (%s)" % f16["verdict"])
say(m["stat_skip"] == 0 and m["stat_z"] < 1 and not m["stat_over"], "declared f16: stat_z %g" % m["stat_z"])
t12 = rec["planted[layer=%s,mode=trunc12]" % layer]
say(t12["verdict"] == "FAIL" and t12["metrics"]["stat_z"] > bound, "12 low bits dropped: FAIL, stat_z %g" %
    t12["metrics"]["stat_z"])
bad = rec["planted[layer=features7_project_bn]"]
say(bad["verdict"] == "ERROR" and "features7_project_bn" in bad["reason"] and "batch_norm" in bad["reason"],
    "a layer that is no dot product: ERROR naming it (%s)" % bad["reason"][:80])
PY
while read -r res what; do
    if [ "$res" = ok ]; then ok; else no "$what"; fi
done <"$T/check.txt"
[ -s "$T/check.txt" ] || no "the report could not be read"
grep -v '^ok \|^no ' "$T/check.txt" | head -5
# the transformer encoder: its companion scale through softmax and layer_norm is tight enough to see one layer
"$PARITY" run cases/models/transformer_encoder.json --plugin "$PL" --no-progress --out "$T/tr" \
    -b 'planted[layer=layer0_q],planted[layer=none]' >"$T/tr.log" 2>&1
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/tr/report.json" >"$T/tr.txt" 2>&1 <<'PY'
import json, sys
rec = {x["backend"]: x for x in json.load(open(sys.argv[1]))["results"]}
bad, good = rec["planted[layer=layer0_q]"], rec["planted[layer=none]"]
z = bad["metrics"]["stat_z"]
print(("ok" if bad["verdict"] == "FAIL" and z > 8.4066 else "no"), "transformer layer0_q planted: %s, stat_z %s" %
      (bad["verdict"], z))
m = bad["metrics"]
print(("ok" if bad["reason"].startswith("statistical companion") and m["n_over"] == 0 and m["max_ratio"] < 1 else "no"),
      "transformer layer0_q planted: every element within its budget (max ratio %s), the companion's FAIL: %s" %
      (m["max_ratio"], bad["reason"][:60]))
z = good["metrics"]["stat_z"]
print(("ok" if good["verdict"] == "PASS" and z is not None and z < 1 else "no"),
      "transformer, no layer planted: %s, stat_z %s" % (good["verdict"], z))
# a run localizes its failing model records by default: the planted node first, every node before it passing
loc = bad.get("localization") or {}
first, nodes = loc.get("first") or {}, loc.get("nodes") or []
before = [n for n in nodes if n["node"] < first.get("node", -1)]
print(("ok" if first.get("name") == "layer0_q" and nodes and not any(n["diverges"] for n in before) else "no"),
      "transformer layer0_q planted: the report's localization names %s first (%d nodes, %d before it)" %
      (first.get("name"), len(nodes), len(before)))
print(("ok" if "localization" not in good else "no"), "transformer, no layer planted: a passing record is not localized")
PY
    while read -r res what; do
        if [ "$res" = ok ]; then ok; else no "$what"; fi
    done <"$T/tr.txt"
    [ -s "$T/tr.txt" ] || no "the transformer's report could not be read"
fi
# localization: the planted node is the first divergent one, on the command and in a run's reason
"$PARITY" localize cases/models/mlp.json -b 'planted[layer=fc2]' --plugin "$PL" >"$T/loc.out" 2>&1
rc=$?
check "localize exits 1 on a divergence (exit $rc)" [ $rc -eq 1 ]
check "localize names fc2 first" grep -q "^first divergent node: 2 'fc2' (linear)" "$T/loc.out"
check "the strip marks it" grep -q " fc2 .*<- first divergence" "$T/loc.out"
check "the nodes before it do not diverge" sh -c "! grep -E ' (fc1|relu1) .*diverges' '$T/loc.out'"
# fc2 planted only where its output is internal (fused into relu2): the backend's own node outputs of the case's
# run (PAR_PROC_NODE_OUTPUTS) hold the planted fc2 and name it; without them every node passes as an output while the
# case fails, and the prefixes name fc2's consumer relu2
"$PARITY" localize cases/models/mlp.json -b 'planted[layer=fc2,fused=1]' --plugin "$PL" >"$T/locn.out" 2>&1
rc=$?
check "a fused bug, node outputs: localize exits 1 (exit $rc)" [ $rc -eq 1 ]
check "a fused bug, node outputs: fc2 named first" grep -q "^first divergent node: 2 'fc2' (linear)" "$T/locn.out"
check "a fused bug, node outputs: read from the case's run" grep -q "(node outputs)" "$T/locn.out"
"$PARITY" localize cases/models/mlp.json -b 'planted[layer=fc2,fused=1,node_outputs=0]' --plugin "$PL" \
    >"$T/locf.out" 2>&1
rc=$?
check "a fused bug: localize exits 1 (exit $rc)" [ $rc -eq 1 ]
check "a fused bug: prefixes name fc2's consumer relu2" grep -q "^first divergent node: 3 'relu2' (relu)" "$T/locf.out"
check "a fused bug: the output says why not per node" grep -q "FAIL as it is" "$T/locf.out"
# the cpu backend folds each linear's clamp into it: fc1's value is never held, relu1's is, and nothing diverges
"$PARITY" localize cases/models/mlp.json -b cpu --all >"$T/locc.out" 2>&1
rc=$?
check "cpu: no node diverges (exit $rc)" sh -c "[ $rc -eq 0 ] && grep -q '^no node diverges' '$T/locc.out'"
check "cpu: the fused fc1 is not held" grep -q " fc1 .*not held by the backend's run" "$T/locc.out"
check "cpu: relu1 is judged" grep -q " relu1 .*error/budget" "$T/locc.out"
"$PARITY" localize cases/models/mlp.json -b example --plugin "$BUILD/plugins/libparity_example.so" >"$T/loc0.out" 2>&1
rc=$?
check "a correct backend: no node diverges (exit $rc)" sh -c "[ $rc -eq 0 ] && grep -q '^no node diverges' '$T/loc0.out'"
"$PARITY" run cases/models/mlp.json -b 'planted[layer=fc2]' --plugin "$PL" --localize --no-progress --out "$T/rl" \
    >"$T/rl.log" 2>&1
check "run --localize: the reason names the node" grep -q "first divergent node: 'fc2' (linear)" "$T/rl/report.json"
# the companion on every node (runner/node_stat.c): a linear layer whose output is added to values near 1e6, whose
# own rounding hides the planted linear's error at the output; its own value, read through the node outputs, shows it
D=tests/data/cases/planted_diluted.json
"$PARITY" run "$D" --plugin "$PL" --plugin "$BUILD/plugins/libparity_example.so" --no-progress --no-localize \
    --out "$T/dl" -b 'planted[layer=fc],planted[layer=fc,mode=trunc12],planted[layer=fc,node_outputs=0],cpu,example' \
    >"$T/dl.log" 2>&1
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/dl/report.json" >"$T/dl.txt" 2>&1 <<'PY'
import json, math, sys
rec = {x["backend"]: x for x in json.load(open(sys.argv[1]))["results"]}
bound2 = math.sqrt(4 * math.log(math.sqrt(2) * 2 / 3e-8)) # the bound of the case's 2 node values, derived here
for b in ("planted[layer=fc]", "planted[layer=fc,mode=trunc12]", "example", "cpu"):
    nc = rec[b]["metrics"].get("node_companion") or {}
    fails = b.startswith("planted")
    good = (nc.get("k") == 2 and abs(nc.get("bound", 0) - bound2) < 1e-6 * bound2 and nc.get("node_max") in ("fc", "add")
            and (nc.get("first_over") == "fc" and nc.get("z_first") > bound2 if fails else
                 nc.get("first_over") is None and nc.get("z_max") <= bound2))
    print("ok" if good else "no", "%s: metrics.node_companion %s (bound of 2 values %.4f)" % (b, nc, bound2))
print("ok" if "node_companion" not in rec["planted[layer=fc,node_outputs=0]"]["metrics"] else "no",
      "without node outputs no metrics.node_companion")
for b in ("planted[layer=fc]", "planted[layer=fc,mode=trunc12]"):
    r = rec[b]
    m = r["metrics"]
    print(("ok" if r["verdict"] == "FAIL" and r["reason"].startswith("statistical companion at node 'fc' (linear)")
           and m["n_over"] == 0 and m["stat_z"] < 8.4066 else "no"),
          "%s diluted: FAIL at node fc with the outputs within budget and companion (%s; output stat_z %s)" %
          (b, r["reason"][:70], m["stat_z"]))
r = rec["planted[layer=fc,node_outputs=0]"]
print(("ok" if r["verdict"] == "PASS" else "no"), "without node outputs the diluted layer passes (%s)" % r["verdict"])
for b in ("cpu", "example"):
    print(("ok" if rec[b]["verdict"] == "PASS" else "no"), "%s on the diluted case: %s %s" %
          (b, rec[b]["verdict"], rec[b]["reason"][:80]))
PY
    while read -r res what; do
        if [ "$res" = ok ]; then ok; else no "$what"; fi
    done <"$T/dl.txt"
    [ -s "$T/dl.txt" ] || no "the diluted case's report could not be read"
fi
"$PARITY" localize "$D" -b 'planted[layer=fc]' --plugin "$PL" >"$T/dloc.out" 2>&1
check "diluted: localize names fc first" grep -q "^first divergent node: 0 'fc' (linear)" "$T/dloc.out"
check "diluted: localize holds the nodes to the bound of the case's 2 values" \
    grep -q "^  companion bound 8.57: the case's 2 node values judged" "$T/dloc.out"
"$PARITY" report "$T/dl/report.json" --html "$T/dl.html" --summary >"$T/dl.sum" 2>&1
check "diluted: the summary names the node values' companion" \
    grep -q "node values' companion: largest .* at 'fc', first over the bound at 'fc' (bound 8.57 over 2)" "$T/dl.sum"
check "diluted: the HTML names the node values' companion" grep -q "Companion on every node: 2 node values judged" \
    "$T/dl.html"
finish
