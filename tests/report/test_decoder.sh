# tests/report/test_decoder.sh - the decoder-block ops catch the bugs planted in them: the test plugin decoder.so
# (tests/plugins/decoder.c, the example backend with one planted bug) with rope's pair layout confused (bug=rope),
# sdpa's causal mask one key late (bug=causal) and slice_scatter writing one row late (bug=kv):
#   - in the quick suite's rope, sdpa and slice_scatter cases, each bug FAILs cases of its own op and of no other,
#     and the plugin without a bug (bug=off, the example backend) passes every case; the whole decoder block FAILs
#     where the bug's op runs (rope: prefill and decode; causal: prefill; kv: decode) and passes elsewhere, and so
#     do the two-block decoder models (cases/models/llama_decoder_prefill.json, llama_decoder_decode.json);
#   - `parity fuzz` with the default op weights finds each bug, signed with its op, within its first 400 graphs
#     (the first finding came at graph seeds 10 to 73 on the machine that wrote this, at about 400 graphs/s).
# Verdicts are read from report.json and findings/index.json with Python's json (skipped without python3). About
# 3 s.
. tests/report/lib.sh

PL="$BUILD/tests/plugins/decoder.so"
command -v python3 >/dev/null 2>&1 || { skip "python3 missing: the reports not read"; finish; }

"$PARITY" run --suite quick -o rope,sdpa,slice_scatter --plugin "$PL" --no-progress --out "$T/q" --repeat 1 \
    -b 'decoder,decoder[bug=rope],decoder[bug=causal],decoder[bug=kv]' >"$T/q.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && [ -s "$T/q/report.json" ]; then
    ok
else
    no "quick run: exit $rc (expected 1)"
    tail -5 "$T/q.log"
fi

python3 - "$T/q/report.json" >"$T/q.txt" 2>&1 <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
def say(good, what):
    print(("ok " if good else "no ") + what)
def verdicts(backend):
    out = {}
    for x in res:
        if x["backend"] == backend:
            op = "block" if "graph=decoder_block" in x["case"] else x["case"].split("(")[0]
            out.setdefault(op, {}).setdefault(x["verdict"], 0)
            out[op][x["verdict"]] += 1
    return out
ops = ("rope", "sdpa", "slice_scatter")
off = verdicts("decoder")
say(all(set(off.get(o, {"none": 1})) == {"PASS"} for o in ops), "no bug: every case passes %s" % off)
for bug, op in (("rope", "rope"), ("causal", "sdpa"), ("kv", "slice_scatter")):
    v = verdicts("decoder[bug=%s]" % bug)
    say(v.get(op, {}).get("FAIL", 0) > 0, "bug=%s: %s cases FAIL %s" % (bug, op, v.get(op)))
    say(all(set(v.get(o, {"none": 1})) == {"PASS"} for o in ops if o != op), "bug=%s: the other ops pass %s" % (bug, v))
# the decoder block: rope runs in both steps, the causal mask in the prefill only, the KV-cache write in the decode
blocks = {(x["backend"], "step=decode" in x["case"]): x["verdict"] for x in res if "graph=decoder_block" in x["case"]}
want = {("decoder", 0): "PASS", ("decoder", 1): "PASS", ("decoder[bug=rope]", 0): "FAIL",
        ("decoder[bug=rope]", 1): "FAIL", ("decoder[bug=causal]", 0): "FAIL", ("decoder[bug=causal]", 1): "PASS",
        ("decoder[bug=kv]", 0): "PASS", ("decoder[bug=kv]", 1): "FAIL"}
say(blocks == want, "the decoder block's prefill and decode verdicts %s" % sorted(blocks.items()))
PY
while read -r res what; do
    if [ "$res" = ok ]; then ok; else no "$what"; fi
done <"$T/q.txt"
grep -v '^ok \|^no ' "$T/q.txt" | head -5

# the whole decoder models of cases/models: the same verdicts as the block's, at the logits and caches of two blocks
"$PARITY" run cases/models/llama_decoder_prefill.json --plugin "$PL" --no-progress --out "$T/mp" --repeat 1 \
    -b 'decoder,decoder[bug=rope],decoder[bug=causal],decoder[bug=kv]' >"$T/mp.log" 2>&1
"$PARITY" run cases/models/llama_decoder_decode.json --plugin "$PL" --no-progress --out "$T/md" --repeat 1 \
    -b 'decoder,decoder[bug=rope],decoder[bug=causal],decoder[bug=kv]' >"$T/md.log" 2>&1
check "the decoder models' prefill and decode verdicts" python3 - "$T/mp/report.json" "$T/md/report.json" <<'PY'
import json, sys
got = {}
for step, path in enumerate(sys.argv[1:3]):
    for x in json.load(open(path))["results"]:
        got[(x["backend"], step)] = x["verdict"]
want = {("decoder", 0): "PASS", ("decoder", 1): "PASS", ("decoder[bug=rope]", 0): "FAIL",
        ("decoder[bug=rope]", 1): "FAIL", ("decoder[bug=causal]", 0): "FAIL", ("decoder[bug=causal]", 1): "PASS",
        ("decoder[bug=kv]", 0): "PASS", ("decoder[bug=kv]", 1): "FAIL"}
sys.exit(0 if got == want else "verdicts %s" % sorted(got.items()))
PY

for bug in rope:rope causal:sdpa kv:slice_scatter; do
    b=${bug%%:*} op=${bug#*:}
    "$PARITY" fuzz --plugin "$PL" -b "decoder[bug=$b]" --count 400 --no-reduce --out "$T/f_$b" >"$T/f_$b.log" 2>&1
    rc=$?
    if [ $rc -ne 1 ]; then
        no "fuzz bug=$b: exit $rc (expected 1: findings)"
        tail -3 "$T/f_$b.log"
        continue
    fi
    check "fuzz bug=$b: a finding at $op" python3 - "$T/f_$b/findings/index.json" "$op" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["findings"]
ops = [x["signature"]["op"] for x in f]
sys.exit(0 if sys.argv[2] in ops else "findings at %s, none at %s" % (ops, sys.argv[2]))
PY
done
finish
