# test_ncnn_export.sh - parity's ncnn writer (formats/ncnn_export*.c) read by ncnn itself: for every op, the first
# quick case that exports (`parity export --format ncnn`), and MobileNetV2 from the models suite, are loaded by
# ncnn's Python binding (Net.load_param, Net.load_model), which must accept both files and find the layer and blob
# counts of the .param's header; a .bin cut short must be refused by the same check (so the check can fail); a
# batch of 2 and a quantized case are refused by the writer with exit 2 and the reason. Needs build/venv/bin/python
# with ncnn (make deps RUNTIMES=ncnn); skipped, never passed, without it.
. tests/report/lib.sh

PY=build/venv/bin/python
if ! "$PY" -c 'import ncnn' 2>/dev/null; then
    skip "no ncnn in build/venv (make deps RUNTIMES=ncnn installs it)"
    finish
fi

# --- the writer's refusals --------------------------------------------------------------------------------------------
"$PARITY" export 'relu(x=[2,3,6,7],in=hazard:huge)#seed=1' --format ncnn -o "$T/b2.param" >"$T/b2.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "batch 2" "$T/b2.txt" && ok || no "batch 2: exit $rc, $(cat "$T/b2.txt")"
"$PARITY" export 'conv2d(in=[1,3,7,7],w=[5,3,3,3],s=[1,1],p=[1,1,1,1],d=[1,1],g=1,bias=1,dt=qu8)#seed=1' --format ncnn \
    -o "$T/q.param" >"$T/q.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "ncnn's blobs are f32" "$T/q.txt" && ok || no "qu8 conv2d: exit $rc, $(cat "$T/q.txt")"

# --- exports: per op the first quick case that ncnn can express (of its first five) -----------------------------------
mkdir -p "$T/m"
"$PARITY" list cases --suite quick >"$T/ids.txt" 2>/dev/null
"$PARITY" list cases --suite models 2>/dev/null | awk -F'\t' '$1 == "mobilenet_v2" {print $3; exit}' >"$T/models.txt"
[ -s "$T/models.txt" ] && ok || no "no mobilenet_v2 in the models suite"
i=0
prev='' done_op=0 tried=0
while IFS="$(printf '\t')" read -r id op _rest; do
    [ "$op" = "$prev" ] || { prev=$op; done_op=0; tried=0; }
    [ "$done_op" -ge 1 ] || [ "$tried" -ge 5 ] && continue
    tried=$((tried + 1))
    i=$((i + 1))
    if "$PARITY" export "$id" --format ncnn -o "$T/m/$i.param" >/dev/null 2>&1; then
        done_op=$((done_op + 1))
        printf '%s\t%s\n' "$i" "$id" >>"$T/exported.txt"
    fi
done <"$T/ids.txt"
while read -r id; do
    i=$((i + 1))
    "$PARITY" export "$id" --format ncnn -o "$T/m/$i.param" >"$T/model_export.txt" 2>&1 &&
        printf '%s\t%s\n' "$i" "$id" >>"$T/exported.txt" && ok || no "export of $id: $(cat "$T/model_export.txt")"
done <"$T/models.txt"
# MobileNetV2's .bin cut to half: the loader must refuse it
last=$(awk -F'\t' 'END {print $1}' "$T/exported.txt")
cp "$T/m/$last.param" "$T/m/cut.param"
head -c $(($(wc -c <"$T/m/$last.bin") / 2)) "$T/m/$last.bin" >"$T/m/cut.bin"

"$PY" - "$T/m" "$T/exported.txt" >"$T/load.txt" 2>"$T/load.err" <<'EOF'
import os, sys
import ncnn

def load(base):
    with open(base + ".param") as f:
        assert f.readline().strip() == "7767517", "magic"
        n_layers, n_blobs = map(int, f.readline().split())
    net = ncnn.Net()
    if net.load_param(base + ".param") != 0:
        return "load_param failed"
    if net.load_model(base + ".bin") != 0:
        return "load_model failed"
    if len(net.layers()) != n_layers or len(net.blobs()) != n_blobs:
        return f"{len(net.layers())} layers, {len(net.blobs())} blobs; the header says {n_layers}, {n_blobs}"
    return None

folder, listing = sys.argv[1], sys.argv[2]
bad = 0
ops = set()
for line in open(listing):
    k, case = line.rstrip("\n").split("\t")
    why = load(os.path.join(folder, k))
    if why:
        bad += 1
        print(f"BAD {case}: {why}")
    else:
        ops.add(case.split("(")[0])
print(f"loaded {sum(1 for _ in open(listing)) - bad} of {sum(1 for _ in open(listing))}, ops {len(ops)}")
print("cut:", load(os.path.join(folder, "cut")) or "accepted")
EOF
n=$(wc -l <"$T/exported.txt")
grep -q "^BAD" "$T/load.txt" && no "ncnn refused exports: $(grep '^BAD' "$T/load.txt" | head -5)" || ok
grep -q "^loaded $n of $n," "$T/load.txt" && ok ||
    no "loaded: $(grep '^loaded' "$T/load.txt") (exported $n); $(tail -3 "$T/load.err")"
ops=$(sed -n 's/^loaded .*, ops //p' "$T/load.txt")
[ "${ops:-0}" -ge 45 ] && ok || no "only ${ops:-0} ops exported and loaded (the writer's table has over 50)"
grep -q "^cut: load_model failed" "$T/load.txt" && ok || no "a .bin cut short: $(grep '^cut' "$T/load.txt")"
finish
