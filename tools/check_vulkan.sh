#!/bin/sh
# check_vulkan.sh EXE OUTDIR JOBS - the `make check` step of the vulkan backend, on lavapipe where there is no GPU:
#   - the quick suite on `vulkan` (fp32), whole;
#   - on `vulkan[precision=fp16]` (f16 storage) the share VULKAN_FP16 of it: a shard K/N (default 2/4: every op
#     family, a quarter of each one's cases), or `all`;
#   - under the Khronos validation layer (validate=1: any layer message fails its case), on both, the share
#     VULKAN_VALIDATE of it: a shard K/N (default 1/16; the layer triples a case's time), or `all` (the whole suite
#     validated and nothing run twice: `make nightly`, which so also runs every fp16 case).
# The default shards are disjoint (positions 1 modulo 4 and 0 modulo 16), so check runs 5/16 of the fp16 cases, the
# validated ones judged too; docs/ci.md says what the shares leave to `make nightly`. Each instance is probed first
# with one small case; one the machine cannot run (no backend built, no device, a device without 16-bit storage,
# no validation layer) is a skip with its reason, never a pass; without the layer the validated share is one skip.
# The last line is the step's count: the runs' own counts plus the skips.
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
validate=${VULKAN_VALIDATE:-1/16}
fp16=${VULKAN_FP16:-2/4}
for share in "VULKAN_VALIDATE=$validate" "VULKAN_FP16=$fp16"; do
    case ${share#*=} in
    all | */*) ;;
    *) echo "check_vulkan.sh: $share is not K/N or all"; exit 2 ;;
    esac
done
plain= plain16= checked=
for mode in fp32 fp16; do
    if ! probe "vulkan[precision=$mode]"; then
        say_skip "precision=$mode: $(grep -m1 'not usable' "$out/probe.log" 2>/dev/null)"
        continue
    fi
    if probe "vulkan[validate=1,precision=$mode]"; then
        checked="$checked${checked:+,}vulkan[validate=1,precision=$mode]"
        [ "$validate" = all ] && continue
    else
        say_skip "validation for precision=$mode: $(grep -m1 'not usable' "$out/probe.log" 2>/dev/null)"
    fi
    if [ "$mode" = fp16 ] && [ "$fp16" != all ]; then
        plain16="vulkan[precision=$mode]"
    else
        plain="$plain${plain:+,}vulkan[precision=$mode]"
    fi
done
rm -rf "$out/probe" "$out/probe.log"

# run NAME SPECS [ARGS...]: the quick suite on SPECS; adds its counts to p f s (a run without a count line is a
# failure) and its exit status to rc
p=0 f=0 s=$skips rc=0
run() {
    name=$1 specs=$2
    shift 2
    echo "instances: $specs${*:+ ($*)}"
    "$exe" run --suite quick -b "$specs" -j "$jobs" --repeat 2 --no-progress --out "$out/$name" "$@" \
        >"$out/$name.log" 2>&1
    r=$?
    cat "$out/$name.log"
    counts=$(awk '/^conformance: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ { p = $2; f = $4; s = $6; seen = 1 }
                  END { if (seen) printf "%d %d %d\n", p, f, s }' "$out/$name.log")
    if [ -z "$counts" ]; then
        f=$((f + 1))
        rc=1
        return
    fi
    set -- $counts
    p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
    [ "$r" = 0 ] || rc=$r
}
[ -n "$plain" ] && run run "$plain"
[ -n "$plain16" ] && run run-fp16 "$plain16" --shard "$fp16"
if [ -n "$checked" ]; then
    if [ "$validate" = all ]; then run validated "$checked"; else run validated "$checked" --shard "$validate"; fi
fi
echo "conformance-vulkan: $p passed, $f failed, $s skipped"
exit $rc
