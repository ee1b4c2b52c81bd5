# tests/report/test_planted_layers.sh - a sample of the planted-layer matrix (tools/planted_layers.sh; docs/oracle.md,
# "The planted-layer matrix"): the first, middle and last dot product of the transformer encoder, each computed in
# binary16 and with its partial sums' 12 low bits dropped by the test plugin planted.so while it declares f32 (both
# must FAIL and localize to that layer), and in binary16 declaring f16 (must PASS, or be counted skipped where no
# element is judged): five checks a layer, the tool's count line, none failed. About 1 s of CPU: MobileNetV2 and
# EfficientNet-Lite0 cost about 20 s of CPU for three layers, and as much again for a cold reference of every node, so their whole
# matrix is make nightly's (tools/nightly.sh).
. tests/report/lib.sh

PARITY="$PARITY" PLANTED="$BUILD/tests/plugins/planted.so" PLANTED_OUT="$T/pl" JOBS=2 \
    sh tools/planted_layers.sh --sample transformer_encoder >"$T/out.txt" 2>&1
rc=$?
cat "$T/out.txt"
line=$(grep '^planted-layers: [0-9]* passed' "$T/out.txt")
[ -n "$line" ] || { no "tools/planted_layers.sh exited $rc without its count line"; finish; }
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
n_pass=$1 n_fail=$2 n_skip=$3
[ $rc -le 1 ] || no "tools/planted_layers.sh exited $rc"
# every layer of the sample fails declaring f32 and localizes to itself, and passes declaring f16
[ "$n_fail" -eq 0 ] || no "$n_fail checks of the sample not as required"
[ $((n_pass + n_fail + n_skip)) -eq 15 ] || no "expected 15 checks (3 layers), counted $((n_pass + n_fail + n_skip))"
finish
