# test_formats.sh - model files in and out, end to end, with the formats' own tools:
#   - every quick-suite case parity can express in ONNX, exported (build/tests/test_onnx_roundtrip keeps the files),
#     passes ONNX's checker with shape inference (tools/onnx_check.py, Debian's python3-onnx; a skip where missing);
#   - every one it can express in TFLite (build/tests/test_tflite keeps them) loads and allocates in LiteRT
#     (tools/tflite_check.py in build/venv; a skip where LiteRT is not installed);
#   - a fixed sample of quick-suite cases and a regression case (nearest upsampling on a doubled axis) exported to
#     ONNX computes parity's reference in ONNX Runtime, within parity's own budgets (tools/onnx_check.py --compare in
#     build/venv; a skip where onnxruntime is not installed);
#   - OpenVINO runs an exported graph with an input that no node reads (its runner feeds inputs by name);
#   - LiteRT computes the TFLite export's regression cases within budget;
#   - a hostile model file (truncated, garbage, a length past the end) is exit 2 naming the file, never a crash;
#   - `parity import` writes a case whose weights are in its binary sidecar, which runs like the model itself;
#     --ops writes op cases that run; an op parity lacks is one line naming the op, its first node and the count;
#   - a node test's float64 input runs as f32 where every value is a float, and is refused with the reason where not;
#   - the real models make deps fetches (cases/models/external.txt), when there: import and PASS on cpu and example.
. tests/report/lib.sh

# ONNX's checker on the exported quick suite
mkdir -p "$T/onnx"
if PARITY_ONNX_EXPORT_DIR="$T/onnx" "$BUILD/tests/test_onnx_roundtrip" >"$T/rt.log" 2>&1; then ok; else
    no "the ONNX round trip: $(tail -3 "$T/rt.log")"
fi
/usr/bin/python3 tools/onnx_check.py "$T/onnx" >"$T/check.log" 2>&1
case $? in
0) ok ;;
2) skip "onnx.checker: $(head -1 "$T/check.log")" ;;
*) no "onnx.checker refuses exported files: $(grep FAIL "$T/check.log" | head -3)" ;;
esac

# LiteRT loads every quick-suite case parity exports to TFLite (tools/tflite_check.py, build/venv from make deps)
mkdir -p "$T/tflite"
if PARITY_TFLITE_EXPORT_DIR="$T/tflite" "$BUILD/tests/test_tflite" >"$T/tfl.log" 2>&1; then ok; else
    no "the TFLite round trip: $(tail -3 "$T/tfl.log")"
fi
if [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import ai_edge_litert' 2>/dev/null; then
    if build/venv/bin/python tools/tflite_check.py "$T/tflite" >"$T/litert.log" 2>&1; then ok; else
        no "LiteRT refuses exported files: $(grep -v '^note' "$T/litert.log" | head -3)"
    fi
else
    skip "LiteRT is not installed in build/venv (make deps installs it)"
fi

# ONNX Runtime computes parity's reference on a sample of exported cases (tools/onnx_check.py --compare; the whole
# quick suite: tools/onnx_compare_suite.py)
if [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import onnxruntime, numpy' 2>/dev/null; then
    n=0
    while IFS= read -r id; do
        n=$((n + 1))
        if ! "$PARITY" export "$id" --format onnx -o "$T/ort_$n.onnx" >"$T/ort.log" 2>&1 ||
            ! "$PARITY" export "$id" -o "$T/ort_$n.json" >>"$T/ort.log" 2>&1; then
            no "ONNX Runtime sample: $id does not export: $(tail -1 "$T/ort.log")"
        elif build/venv/bin/python tools/onnx_check.py --compare "$T/ort_$n.onnx" "$T/ort_$n.json" >"$T/ort.log" 2>&1
        then ok; else
            no "ONNX Runtime differs from parity's reference on $id: $(grep -v '^ok' "$T/ort.log" | head -2)"
        fi
    done <<'EOF_IDS'
conv2d(in=[1,3,9,8],w=[5,3,1,1],s=[2,2],p=[0,0,0,0],d=[1,1],g=1,bias=1)#seed=1
conv2d(in=[1,3,7,7],w=[5,3,3,3],s=[1,1],p=[1,1,1,1],d=[1,1],g=1,bias=1,dt=qu8)#seed=1
conv_transpose2d(in=[1,4,4,7],w=[4,4,2,2],s=[2,2],p=[0,0,0,0],op=[0,0],d=[1,1],g=1,bias=1,dt=qu8,w=qs8/pc)#seed=1
linear(in=[5,3],w=[4,3],bias=1)#seed=1
linear(in=[4,16],w=[8,16],bias=1,dt=qu8,w=qs8/p)#seed=1
matmul(a=[4,8],b=[8,5],dt=qs8)#seed=1
softmax(x=[2,3,5],axis=-1,range=1)#seed=1
upsample_bilinear2d(in=[1,8,5,6],size=[10,12],ac=1,dt=qu8)#seed=1
upsample_bilinear2d(in=[1,3,3,4],scale=[2,2],ac=0)#seed=1
add(a=[2,3,4,5],b=[3,1,1])#seed=1
mul(a=[2,3,7,7],b=[3,1,1],dt=qs8)#seed=1
layer_norm(x=[2,5,7],dims=2,affine=b,x=unit,eps=1e-05)#seed=1
gelu(x=[1,16,8,8])#seed=1
gelu(x=[4],approximate=tanh)#seed=1
pad(x=[7],pads=[6,6],mode=reflect)#seed=1
slice(x=[1,8,5,5],dim=1,start=2,end=max,step=2,dt=qu8)#seed=1
concat(x=[[1,8,5,5],[1,3,5,5]],axis=1,dt=qs8)#seed=1
max_pool2d(in=[1,3,7,7],k=[2,2],s=[2,2],p=[1,1,1,1],d=[1,1],ceil=0)#seed=1
avg_pool2d(x=[2,3,6,7],quant=qu8,in=hazard:ties)#seed=1
masked_fill(x=[2,3,4],mask=[2,3,4],value=-1e+09,fill=random)#seed=1
rms_norm(x=[2,5,7],dims=2,affine=w,x=offset,eps=1e-05)#seed=1
rope(x=[2,3,5,8],interleaved=0,pos=3)#seed=1
rope(x=[2,3,5,8],interleaved=1,pos=3)#seed=1
sdpa(q=[2,4,5,8],k=[2,1,9,8],v=[2,1,9,12],mask=causal)#seed=1
sdpa(q=[1,4,8,32],k=[1,2,8,32],v=[1,2,8,32],mask=add)#seed=1
slice_scatter(x=[1,4,40,64],src=[1,4,1,64],dim=2,start=19)#seed=1
cases/regressions/onnx-export-upsample-nearest2d-doubled-size.json
EOF_IDS
else
    skip "onnxruntime is not installed in build/venv (make deps installs it)"
fi

# OpenVINO drops a graph input that no node reads (slice_scatter's x when src covers the whole axis): its runner
# feeds the inputs by name, so the case passes (an ERROR when they were fed by position)
if [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import openvino' 2>/dev/null; then
    "$PARITY" run --case 'slice_scatter(x=[2,2,9,4],src=[2,2,9,4],dim=-2,start=0)#seed=1' -b openvino \
        --no-progress --out "$T/ov_unread" >"$T/ov_unread.log" 2>&1 &&
        grep -q 'conformance: 1 passed, 0 failed' "$T/ov_unread.log" && ok ||
        no "openvino with an input no node reads: $(tail -3 "$T/ov_unread.log")"
else
    skip "openvino is not installed in build/venv (make deps RUNTIMES=openvino installs it)"
fi

# LiteRT computes the TFLite export's regression cases (cases/regressions/tflite-export-*.json) within budget, on
# both instances
if [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import ai_edge_litert' 2>/dev/null; then
    "$PARITY" run cases/regressions/tflite-export-*.json -b 'litert,litert[delegate=none]' --no-progress \
        --out "$T/tfl_regr" >"$T/tfl_regr.log" 2>&1
    n=$(ls cases/regressions/tflite-export-*.json | wc -l)
    grep -q "^conformance: $((2 * n)) passed, 0 failed" "$T/tfl_regr.log" && ok ||
        no "LiteRT on the TFLite export's regression cases: $(grep -E '^(ERROR|FAIL|conformance)' "$T/tfl_regr.log" |
            head -3)"
else
    skip "LiteRT is not installed in build/venv (make deps installs it)"
fi

# hostile files: exit 2 with the file named
printf 'not a protobuf at all \377\377\377\377\377' >"$T/garbage.onnx"
src=/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx
if [ -f "$src" ]; then head -c $(($(wc -c <"$src") / 2)) "$src" >"$T/cut.onnx"; else printf '\010\007\072\177' >"$T/cut.onnx"; fi
printf '\072\377\377\377\377\017' >"$T/long.onnx"
printf 'TFL3garbage' >"$T/garbage.tflite"
for f in garbage.onnx cut.onnx long.onnx garbage.tflite; do
    "$PARITY" run "$T/$f" -b cpu --no-progress --out "$T/o_$f" >"$T/$f.log" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q "$T/$f" "$T/$f.log"; then ok; else no "$f: exit $rc, $(head -2 "$T/$f.log")"; fi
done

# import with a sidecar, and op cases
# (the real text detector when make deps fetched it, else a node test with weights as constants)
m=build/models/ch_PP-OCRv4_det_infer.onnx shape="--shape x=1,3,64,64"
[ -f "$m" ] || { m=/usr/share/libonnx-testdata/data/node/test_batchnorm_example/model.onnx shape=""; }
if [ -f "$m" ]; then
    mkdir -p "$T/imp"
    "$PARITY" import "$m" $shape -o "$T/imp/model.json" >"$T/imp.log" 2>&1
    if [ -s "$T/imp/model.json" ]; then ok; else no "import: $(cat "$T/imp.log")"; fi
    "$PARITY" run "$T/imp/model.json" -b cpu --no-progress --out "$T/o_imp" >"$T/run_imp.log" 2>&1 && ok ||
        no "the imported case: $(tail -3 "$T/run_imp.log")"
    "$PARITY" import "$m" $shape --ops -o "$T/ops" >"$T/ops.log" 2>&1 && ok || no "--ops: $(cat "$T/ops.log")"
    "$PARITY" run "$T/ops" -b cpu --no-progress --out "$T/o_ops" >"$T/run_ops.log" 2>&1 && ok ||
        no "the op cases: $(tail -3 "$T/run_ops.log")"
else
    skip "no model to import (libonnx-testdata missing)"
fi
# a node test's float64 input: run as f32 where every value is a float, refused (exit 2, the reason) where one is not
nd=/usr/share/libonnx-testdata/data/node
if [ -d "$nd/test_max_float64" ] && [ -d "$nd/test_reduce_log_sum_exp_keepdims_random" ]; then
    "$PARITY" run "$nd/test_max_float64/model.onnx" -b expected --no-progress --out "$T/o_f64" >"$T/f64.log" 2>&1
    if [ $? -eq 0 ] && grep -q '^conformance: 1 passed, 0 failed' "$T/f64.log"; then ok; else
        no "float64 of floats: $(tail -3 "$T/f64.log")"
    fi
    "$PARITY" import "$nd/test_reduce_log_sum_exp_keepdims_random/model.onnx" -o "$T/f64r.json" >"$T/f64r.log" 2>&1
    rc=$?
    if [ $rc -eq 2 ] && grep -q "input 'data' of type double with values that are not floats" "$T/f64r.log"; then ok
    else no "float64 of other values: exit $rc: $(cat "$T/f64r.log")"; fi
else
    skip "libonnx-testdata missing"
fi
rec=build/models/ch_PP-OCRv4_rec_infer.onnx
if [ -f "$rec" ]; then
    "$PARITY" import "$rec" --shape x=1,3,48,64 -o "$T/rec.json" >"$T/rec.log" 2>&1
    rc=$?
    # an op parity lacks: exit 2 and one line per op type with its first node and count
    if [ $rc -eq 0 ] || { [ $rc -eq 2 ] && grep -Eq "op [A-Za-z]+ .*first node '[^']+', [0-9]+ nodes?\)" "$T/rec.log"; }
    then ok; else no "lacking ops not named: exit $rc: $(cat "$T/rec.log")"; fi
fi

# the real models
for m in $(grep -v '^#' cases/models/external.txt | awk '{print $1}'); do
    if [ ! -f "build/models/$m" ]; then
        skip "$m is not there (make deps fetches it)"
        continue
    fi
    "$PARITY" run --suite models -k "^${m%.*}\$" --plugin "$BUILD/plugins/libparity_example.so" -b cpu,example \
        --no-progress --out "$T/o_$m" >"$T/$m.log" 2>&1
    if [ $? -eq 0 ] && grep -q '^conformance: 2 passed, 0 failed' "$T/$m.log"; then ok; else
        no "$m: $(tail -4 "$T/$m.log")"
    fi
done
finish
