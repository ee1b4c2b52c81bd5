#!/bin/sh
# check_vulkan.sh EXE OUTDIR JOBS - the `make check` step of the vulkan backend: the quick suite on `vulkan` (fp32)
# and `vulkan[precision=fp16]` (f16 storage), both under the Khronos validation layer (validate=1: any layer message
# fails its case), on lavapipe where there is no GPU. Each instance is probed first with one small case; one the
# machine cannot run (no backend built, no device, a device without 16-bit storage, no validation layer) is a skip
# with its reason, never a pass; without the layer the instance runs unvalidated and the missing validation counts
# as one skip. The last line is the step's count: the run's own counts plus the skips.
# POSIX sh.
exe=$1 out=$2 jobs=$3
skips=0
say_skip() {
    echo "SKIP conformance-vulkan: $1"
    skips=$((skips + 1))
}
usable=$("$exe" list backends 2>/dev/null | awk '$1 == "vulkan" { print $3 }')
if [ -z "$usable" ]; then
    say_skip "the vulkan backend is not built here (it needs vulkan.h, glslc and spirv-val)"
    echo "conformance-vulkan: 0 passed, 0 failed, $skips skipped"
    exit 0
fi
if [ "$usable" != yes ]; then
    say_skip "no usable Vulkan device: $("$exe" list backends 2>&1 | grep '^vulkan')"
    echo "conformance-vulkan: 0 passed, 0 failed, $skips skipped"
    exit 0
fi
mkdir -p "$out"
# probe SPEC: 0 when one small case runs on the instance (its refusal, if any, is printed in $out/probe.log)
probe() {
    "$exe" run --case 'relu(x=[4])#seed=1' -b "$1" --no-progress --out "$out/probe" >"$out/probe.log" 2>&1
    [ $? -le 1 ]
}
specs=
for mode in fp32 fp16; do
    spec="vulkan[validate=1,precision=$mode]"
    if probe "$spec"; then
        specs="$specs${specs:+,}$spec"
        continue
    fi
    why=$(grep -m1 'not usable' "$out/probe.log" 2>/dev/null)
    if probe "vulkan[precision=$mode]"; then
        say_skip "validation for precision=$mode: $why"
        specs="$specs${specs:+,}vulkan[precision=$mode]"
    else
        say_skip "precision=$mode: $(grep -m1 'not usable' "$out/probe.log" 2>/dev/null)"
    fi
done
rm -rf "$out/probe" "$out/probe.log"
if [ -z "$specs" ]; then
    echo "conformance-vulkan: 0 passed, 0 failed, $skips skipped"
    exit 0
fi
echo "instances: $specs"
"$exe" run --suite quick -b "$specs" -j "$jobs" --repeat 2 --no-progress --out "$out/run" >"$out/run.log" 2>&1
rc=$?
cat "$out/run.log"
counts=$(awk '/^conformance: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p = $2; f = $4; s = $6; seen = 1 }
              END { if (seen) printf "%d %d %d\n", p, f, s }' "$out/run.log")
if [ -z "$counts" ]; then
    echo "conformance-vulkan: 0 passed, 1 failed, $skips skipped"
    exit 1
fi
set -- $counts
echo "conformance-vulkan: $1 passed, $2 failed, $(($3 + skips)) skipped"
exit $rc
