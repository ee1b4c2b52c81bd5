#!/bin/sh
# aarch64_reference.sh - x86-64 and aarch64 reports of the same suite and seed can be compared case for case: the
# native build and the aarch64 cross-build under qemu-user (tools/qemu_aarch64.sh) select the same case IDs, build
# the same cases with the same inputs (the portable PRNG), and compute the same float64 reference values and
# budgets (tests/refdigest.c: SHA-256 per case of the case with its inputs, and of the reference's bits, NaNs
# canonical). Ops listed in tests/report/aarch64_known.txt (a libm function that differs by architecture) may
# differ by at most 2 float64 ulps, measured on `parity export` of both builds; any other difference fails.
# Then a run of both builds on cpu[kernels=scalar] gives reports with the same cases and records, in the same
# order. Run by `make check-aarch64` (tools/check_aarch64.sh), not by report-check: it needs the aarch64 build.
#   BUILD the native build (build), ABUILD the aarch64 build (BUILD/aarch64). POSIX sh; python3 reads the JSON.
here=$(dirname "$0")
. "$here/lib.sh"
ABUILD=${ABUILD:-$BUILD/aarch64}
OPS=${AARCH64_REF_OPS:-conv2d,linear,add,sigmoid,tanh,gelu,softmax,layer_norm,sqrt}
SEED=${AARCH64_REF_SEED:-1}
qemu="sh $here/../../tools/qemu_aarch64.sh"
export PARITY_CACHE=0 # each build computes its own references: build/aarch64 would otherwise share build/cache

if [ ! -x "$BUILD/tests/refdigest" ] || [ ! -x "$PARITY" ]; then
    skip "the native build is missing ($BUILD/parity, $BUILD/tests/refdigest: make)"
    finish
    exit $?
fi
if [ ! -x "$ABUILD/tests/refdigest" ] || ! command -v qemu-aarch64 >/dev/null 2>&1; then
    skip "the aarch64 build or qemu-aarch64 is missing (make deps; make ARCH=aarch64)"
    finish
    exit $?
fi

# 1. IDs, cases and references, digest by digest
"$BUILD/tests/refdigest" --suite quick -o "$OPS" --seed "$SEED" >"$T/x.dig" 2>"$T/x.err" || no "native refdigest failed: $(head -1 "$T/x.err")"
$qemu "$ABUILD/tests/refdigest" --suite quick -o "$OPS" --seed "$SEED" >"$T/a.dig" 2>"$T/a.err" || no "aarch64 refdigest failed: $(head -1 "$T/a.err")"
n=$(wc -l <"$T/x.dig")
if [ "$n" -gt 0 ]; then ok; else no "the native selection is empty"; fi
cut -f1 "$T/x.dig" >"$T/x.ids"
cut -f1 "$T/a.dig" >"$T/a.ids"
if cmp -s "$T/x.ids" "$T/a.ids"; then ok; else no "the case IDs differ: $(diff "$T/x.ids" "$T/a.ids" | sed -n 2p)"; fi
paste "$T/x.dig" "$T/a.dig" | awk -F'\t' '$1 == $4 && $2 != $5 { print $1 }' >"$T/case.diff"
if [ ! -s "$T/case.diff" ]; then ok; else no "$(wc -l <"$T/case.diff") cases differ in their graph or inputs, e.g. $(head -1 "$T/case.diff")"; fi
paste "$T/x.dig" "$T/a.dig" | awk -F'\t' '$1 == $4 && $3 != $6 { print $1 }' >"$T/ref.diff"
known=$(sed -e 's/#.*//' "$here/aarch64_known.txt" | awk 'NF { print $1 }')
unexpected=0
while IFS= read -r id; do
    op=${id%%(*}
    case " $(echo $known) " in *" $op "*) ;; *) unexpected=$((unexpected + 1)); echo "  reference differs: $id" ;; esac
done <"$T/ref.diff"
if [ "$unexpected" -eq 0 ]; then ok; else no "$unexpected cases of unlisted ops have another float64 reference on aarch64"; fi
for op in $known; do
    case ",$OPS," in *",$op,"*) ;; *) continue ;; esac
    if grep -q "^$op(" "$T/ref.diff"; then ok; else no "$op is listed in aarch64_known.txt but none of its cases differs"; fi
done

# 2. the listed ops' differences, measured: at most 2 float64 ulps in any value or budget
worst=0
while IFS= read -r id; do
    op=${id%%(*}
    case " $(echo $known) " in *" $op "*) ;; *) continue ;; esac
    "$PARITY" export "$id" >"$T/ex_x.json" 2>/dev/null
    $qemu "$ABUILD/parity" export "$id" >"$T/ex_a.json" 2>/dev/null
    u=$(python3 - "$T/ex_x.json" "$T/ex_a.json" <<'PY'
import json, struct, sys
x, a = (json.load(open(p)) for p in sys.argv[1:3])
def bits(v):
    b = struct.unpack('<q', struct.pack('<d', v))[0]
    return b if b >= 0 else -(b & 0x7fffffffffffffff)
worst = 0 if x["inputs"] == a["inputs"] else 1 << 60
for ox, oa in zip(x["reference"]["outputs"], a["reference"]["outputs"]):
    for key in ("values", "budgets"):
        for p, q in zip(ox[key], oa[key]):
            if (p is None) != (q is None): worst = 1 << 60
            elif p is not None: worst = max(worst, abs(bits(p) - bits(q)))
print(worst)
PY
)
    [ -n "$u" ] || u=999
    echo "  $id: largest difference $u float64 ulps"
    [ "$u" -gt "$worst" ] && worst=$u
done <"$T/ref.diff"
if [ "$worst" -le 2 ]; then ok; else no "a listed op's reference differs by $worst float64 ulps (at most 2 allowed)"; fi

# 3. two reports, case for case
"$PARITY" run --suite quick -o "$OPS" --seed "$SEED" -b 'cpu[kernels=scalar]' --repeat 1 --no-progress \
    --out "$T/rx" >"$T/rx.log" 2>&1
$qemu "$ABUILD/parity" run --suite quick -o "$OPS" --seed "$SEED" -b 'cpu[kernels=scalar]' --repeat 1 -j 2 \
    --no-progress --out "$T/ra" >"$T/ra.log" 2>&1
if [ -s "$T/rx/report.json" ] && [ -s "$T/ra/report.json" ]; then
    check "the reports have the same cases and records, and record their architectures" python3 - "$T/rx/report.json" "$T/ra/report.json" <<'PY'
import json, sys
x, a = (json.load(open(p)) for p in sys.argv[1:3])
assert [c["id"] for c in x["cases"]] == [c["id"] for c in a["cases"]], "case lists differ"
assert [(r["case"], r["backend"]) for r in x["results"]] == [(r["case"], r["backend"]) for r in a["results"]], "records differ"
assert x["environment"]["arch"] == "x86_64" and a["environment"]["arch"] == "aarch64", "arch fields"
assert a["backends"][0]["kernels"] == "scalar", "aarch64 kernels field"
print(len(x["cases"]), "cases")
PY
else
    no "a report is missing: $(tail -1 "$T/rx.log") / $(tail -1 "$T/ra.log")"
fi
finish
