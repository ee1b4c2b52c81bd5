# test_coverage.sh - `parity coverage` end to end (runner/coverage_probe.c, reports/coverage.c, cli/cli_coverage.c):
#   - the example plugin claims exactly the ops of its kernel table (read from backends/example/example.c by python,
#     not through parity), in f32 only but for quantize (f32 in, qu8/qs8 out), and refuses every other op of the op
#     table (core/ops.def), each with its UNSUPPORTED reason kept; and that table holds every op that takes f32 but
#     linear_dynamic, linear_8da4w, linear_qd8 and matmul_qd8, as its header says (a new f32 op without an example
#     kernel fails here);
#   - on the fixture report, per backend, the unreached ops are exactly the op table's ops that no record of that
#     backend reaches (computed from the report's JSON by python), an op of the report is not among them, and the
#     cases and passes of a reached (op, dtype) are the report's;
#   - the terminal table lists the ops no case reaches first;
#   - without a report, cases come from the quick suite and passes are marked unknown;
#   - a truncated report and an unwritable --json path are refused with exit 2 and a message naming the file.
. tests/report/lib.sh

EX="$BUILD/plugins/libparity_example.so"

fixture_report "$T/fx" || { no "fixture run"; finish; exit 1; }
ok

check "coverage of the example plugin" "$PARITY" coverage -b example --plugin "$EX" --json "$T/ex.json" \
    "$T/fx/report.json"
check "the example plugin claims exactly its kernel table" python3 - "$T/ex.json" <<'PY'
import json, re, sys
src = open("backends/example/example.c").read()
table = src[src.index("kernel_table[] = {"):]
table = table[:table.index("};")]
kernels = set(re.findall(r'\{"([a-z0-9_]+)", ex_', table))
ops = set(re.findall(r'^PAR_OP\(\s*\w+,\s*"([a-z0-9_]+)"', open("core/ops.def").read(), re.M))
if len(kernels) < 10 or not kernels <= ops:
    sys.exit("could not read the example's kernel table: %s" % sorted(kernels - ops))
d = json.load(open(sys.argv[1]))
b = d["backends"][0]
if b["backend"] != "example":
    sys.exit("backend %s" % b["backend"])
rows = b["rows"]
claimed = {r["op"] for r in rows if r["claimed"]}
refused = {r["op"] for r in rows if r["claimed"] is False} - claimed
listed = {r["op"] for r in rows}
if listed != ops:
    sys.exit("ops missing from the table: %s" % sorted(ops - listed))
if claimed != kernels:
    sys.exit("claimed but not in the kernel table: %s; in the kernel table but not claimed: %s"
             % (sorted(claimed - kernels), sorted(kernels - claimed)))
if refused != ops - kernels:
    sys.exit("refused: %s, expected %s" % (sorted(refused), sorted(ops - kernels)))
# the decision ops (comparisons, logic) have bool outputs: their rows' dtype is bool
defs = open("core/ops.def").read()
bool_ops = {m.group(1) for chunk in defs.split("\nPAR_OP(")[1:]
            for m in [re.match(r'\s*\w+,\s*"([a-z0-9_]+)"', chunk)]
            if m and re.search(r'par_infer_(compare|logical)\b', chunk)}
# and the index ops (argmax, argmin) an i32 output
index_ops = {m.group(1) for chunk in defs.split("\nPAR_OP(")[1:]
             for m in [re.match(r'\s*\w+,\s*"([a-z0-9_]+)"', chunk)]
             if m and re.search(r'par_infer_arg\b', chunk)}
odd = sorted((r["op"], r["dtype"]) for r in rows if r["claimed"] and r["dtype"] != "f32" and r["op"] != "quantize"
             and not (r["dtype"] == "bool" and r["op"] in bool_ops)
             and not (r["dtype"] == "i32" and r["op"] in index_ops))
if odd:
    sys.exit("claims in a dtype other than f32: %s" % odd)
if any(r["claimed"] is False and not r["unsupported_reason"] for r in rows):
    sys.exit("a refused combination without its reason")
# the header's promise (backends/example/example.c): every op of the table that takes f32 has a kernel, but
# linear_dynamic, linear_8da4w, linear_qd8 and matmul_qd8 (their arithmetic is the integer one of a
# dynamic-quantization backend)
not_f32 = {"linear_dynamic", "linear_8da4w", "linear_qd8", "matmul_qd8"}
missing = sorted({r["op"] for r in rows if r["dtype"] == "f32"} - kernels - not_f32)
if missing:
    sys.exit("ops of the table that take f32 but have no kernel in the example plugin: %s" % missing)
# the example backend is not in the fixture report: every op is unreached, and nothing passed
if set(b["unreached_ops"]) != ops or any(r["cases"] or r["passed"] for r in rows):
    sys.exit("cases counted for a backend the report does not have")
PY

check "coverage of the report's own backends" "$PARITY" coverage --json "$T/fx.json" "$T/fx/report.json"
"$PARITY" coverage "$T/fx/report.json" >"$T/fx.txt" 2>&1
check "unreached ops, cases and passes are the report's" python3 - "$T/fx/report.json" "$T/fx.json" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))
cov = json.load(open(sys.argv[2]))
ops = set(re.findall(r'^PAR_OP\(\s*\w+,\s*"([a-z0-9_]+)"', open("core/ops.def").read(), re.M))
case = {c["id"]: c for c in rep["cases"]}
if [b["backend"] for b in cov["backends"]] != [b["label"] for b in rep["backends"]]:
    sys.exit("the backends are not the report's")
for b in cov["backends"]:
    recs = [r for r in rep["results"] if r["backend"] == b["backend"]]
    reached = {op for r in recs for op in case[r["case"]]["ops"].split(",")}
    if set(b["unreached_ops"]) != ops - reached:
        sys.exit("%s: unreached %s, expected %s" % (b["backend"], sorted(b["unreached_ops"]), sorted(ops - reached)))
    if "conv2d" in b["unreached_ops"] or "sigmoid" not in b["unreached_ops"]:
        sys.exit("%s: conv2d (in the report) or sigmoid (not in it) misplaced" % b["backend"])
    for row in b["rows"]:
        want = [r for r in recs if row["op"] in case[r["case"]]["ops"].split(",") and case[r["case"]]["dtype"] == row["dtype"]]
        if row["cases"] != len(want) or row["passed"] != sum(r["verdict"] == "PASS" for r in want):
            sys.exit("%s %s %s: %d cases %d passed, the report has %d and %d" % (b["backend"], row["op"], row["dtype"],
                     row["cases"], row["passed"], len(want), sum(r["verdict"] == "PASS" for r in want)))
    groups = [r["group"] for r in b["rows"]]
    if groups != sorted(groups, key=["unreached", "claimed_untested", "rest"].index):
        sys.exit("%s: rows not in the order unreached, claimed untested, rest" % b["backend"])
off = [b for b in cov["backends"] if b["backend"] == "tp_offbyone"][0]
conv = [r for r in off["rows"] if r["op"] == "conv2d" and r["dtype"] == "f32"][0]
if not (conv["claimed"] and conv["cases"] > conv["passed"]):
    sys.exit("tp_offbyone conv2d f32: claimed with failures expected, got %s" % conv)
PY
# the terminal table: per backend the unreached group comes before the rest, and sigmoid is in it
check "the terminal table lists the unreached ops first" awk '
    /^[a-z_0-9]+: [0-9]+ ops in the table/ { n++; g = "" }
    /^  ops no case reaches:/ { if (g != "") bad = 1; g = "u" }
    /^  the rest:/ { g = "r" }
    g == "u" && $1 == "sigmoid" { s++ }
    g == "u" && $1 == "conv2d" { bad = 1 }
    END { exit !(n == 3 && s >= 3 && !bad) }' "$T/fx.txt"

# without a report: the quick suite's cases, passes unknown
"$PARITY" coverage -b example --plugin "$EX" --json "$T/q.json" >"$T/q.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || no "coverage without a report exited $rc"
grep -q "passes not known" "$T/q.txt" && ok || no "no note that passes are not known"
check "without a report: suite cases, no passes" python3 - "$T/q.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["backends"][0]["rows"]
if d["passes_known"] or any(r["passed"] is not None for r in rows):
    sys.exit("passes reported without a report")
conv = [r for r in rows if r["op"] == "conv2d" and r["dtype"] == "f32"]
if not conv or conv[0]["cases"] < 10:
    sys.exit("the quick suite's conv2d f32 cases are not counted: %s" % conv)
PY

# bad input
head -c 300 "$T/fx/report.json" >"$T/trunc.json"
"$PARITY" coverage -b example --plugin "$EX" "$T/trunc.json" >"$T/err.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && ok || no "a truncated report exited $rc, expected 2"
grep -q "trunc.json" "$T/err.txt" && ok || no "the error does not name the file: $(cat "$T/err.txt")"
"$PARITY" coverage -b example --plugin "$EX" --json "$T/no/dir/c.json" "$T/fx/report.json" >"$T/err2.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && ok || no "an unwritable --json path exited $rc, expected 2"
grep -q "$T/no/dir/c.json" "$T/err2.txt" && ok || no "the error does not name the path: $(tail -1 "$T/err2.txt")"

finish
