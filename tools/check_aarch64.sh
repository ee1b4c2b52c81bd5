#!/bin/sh
# check_aarch64.sh BUILD JOBS - `make check-aarch64`: the aarch64 cross-build (BUILD, normally build/aarch64) under
# qemu-user (tools/qemu_aarch64.sh), once per emulated CPU: QEMU_CPU=max (NEON and the dot-product instructions)
# and QEMU_CPU=cortex-a53 (NEON without dot-product: a kernel that used them there would die of SIGILL, so the
# feature gating is tested). The two CPUs' phases run side by side (qemu-user's parent process is serial for much
# of a run, so one phase alone leaves a core idle), the reference comparison beside the cortex-a53 phase. Per CPU,
# each through tools/check_step.sh under BUILD/check-logs/aarch64-CPU:
#   - the unit tests that run under qemu-user (UNIT_SKIP below names the others and why); on cortex-a53 only those
#     of the backends that choose kernels by CPU feature (UNIT_A53): the others run the same instructions on both;
#   - the quick suite, on max: cpu, qnnpack, xnnpack (when built); qnnpack's forced sets, qnnpack[kernels=scalar]
#     and the NEON variants a probe shows the instance runs (kernels=neon and kernels=neondot), on its quantized
#     cases only (FORCED_MATCH below; cpu's kernels=neon is probed but not run again: cpu's automatic choice on
#     aarch64 is that very set), and cpu[kernels=scalar] on the share
#     $AARCH64_SCALAR_SHARD of it (default 1/4: every op family, a quarter of each one's cases); one the build
#     does not have or the CPU lacks is a skip with its reason, never a pass. On cortex-a53, on the share
#     $AARCH64_A53_SHARD (default 1/2: every op family), only the instances whose kernels the CPU chooses (cpu,
#     qnnpack, xnnpack: the gating, and XNNPACK's own non-dot-product kernels); the forced sets run there the same
#     instructions as on max, and qnnpack's automatic choice on cortex-a53 is its kernels=neon set, which max runs;
#   - with QEMU_CPU=max only, the models of $AARCH64_MODELS (cases/models; by default mlp alone: the float64
#     reference of a whole model is the slow part under emulation, and mobilenet_v3_small's outlasted the worker's
#     615 s watchdog at load 20) on the instances with automatic kernels (cpu, qnnpack, xnnpack) and the NEON
#     variants (the variants forced to scalar run the same kernels as in the quick suite), and with them
#     cases/regressions (the fixed findings' cases, small);
# then the sum. AARCH64_CHECK=full (make nightly, tools/nightly.sh) runs the shares whole (1/1) and the models of
# AARCH64_MODELS_FULL. docs/aarch64.md says what each cut leaves on each kernel set.
# The last line is tools/check_sum.sh's `check-aarch64: N passed, N failed, N skipped`, after each step's time;
# the exit status is 1 when any step failed. POSIX sh.
set -u
build=$1 jobs=$2
here=$(dirname "$0")
exe=$build/parity
logs=$build/check-logs
qemu="sh $here/qemu_aarch64.sh"

# Left out under qemu-user, with the reason (the native make check runs them all):
#   test_cli test_campaign test_reduce test_ties test_winograd test_ftz: they start build/parity (or cc) through
#     exec, system() or popen, which runs host programs natively: an aarch64 parity cannot start that way
#   test_nnapi_sim: runs its NNAPI client (an aarch64 program) through system() and under valgrind
#   test_oracle_models test_quant_nodes: the float64 reference of whole models, over 2 minutes each under
#     emulation (the model runs below judge the same models on the backends)
#   test_vulkan test_vulkan_precision test_vulkan_tiled: the vulkan backend is not built for aarch64
UNIT_SKIP="test_cli test_campaign test_reduce test_ties test_winograd test_ftz test_nnapi_sim test_oracle_models
           test_quant_nodes test_vulkan test_vulkan_precision test_vulkan_tiled"
# On cortex-a53, the unit tests of the backends whose kernels depend on the CPU's features.
UNIT_A53="test_cpu test_cpu_kernels test_qnnpack test_qnnpack_kernels test_qnnpack_neon test_xnnpack"
# The quick cases whose numbers qnnpack's kernel sets compute: a quantized value (dt=q*, quant=q*) or a quantized
# operator whose IDs name no dtype (linear_dynamic, linear_8da4w, linear_16a4w, linear_qd8, matmul_qd8; a new one
# belongs here). The rest of
# qnnpack's quick cases are the decoder's f32 ops (qnn_float.c, portable C, the same on every set), which the
# automatic instance runs; the forced sets run these only (full: everything).
FORCED_MATCH='dt=q|quant=q|^(linear|matmul)_(dynamic|8da4w|16a4w|qd8)\('
# What `make check` leaves to the nightly job (AARCH64_CHECK=full) or to a machine with time to spare.
AARCH64_MODELS_FULL="mlp audio_denoiser transformer_encoder mobilenet_v3_small mobilenet_v3_small_quant mobilenet_v2
                     efficientnet_lite0 mobilenet_v2_quant mobilenet_v2_qs8"
if [ "${AARCH64_CHECK:-}" = full ]; then
    MODELS=${AARCH64_MODELS:-$AARCH64_MODELS_FULL}
    SCALAR_SHARD=${AARCH64_SCALAR_SHARD:-1/1}
    A53_SHARD=${AARCH64_A53_SHARD:-1/1}
    FORCED_MATCH=.
else
    MODELS=${AARCH64_MODELS:-mlp}
    SCALAR_SHARD=${AARCH64_SCALAR_SHARD:-1/4}
    A53_SHARD=${AARCH64_A53_SHARD:-1/2}
fi
# --shard K/N, or nothing for the whole suite
shard_opt() { [ "$1" = 1/1 ] || echo "--shard $1"; }
rm -rf "$logs"
mkdir -p "$logs"
if [ ! -x "$exe" ]; then
    echo "check-aarch64: $exe is missing (make ARCH=aarch64)"
    exit 1
fi
if ! command -v qemu-aarch64 >/dev/null 2>&1; then
    echo "check-aarch64: qemu-aarch64 is not installed (make deps installs qemu-user)"
    exit 1
fi

# probe SPEC OUT: 0 when SPEC is usable and runs the kernels its knob asked for; else prints the reason
probe() {
    $qemu "$exe" run --case 'relu(x=[4])#seed=1' -b "$1" --no-progress --out "$2" >"$2.log" 2>&1
    rc=$?
    want=$(printf '%s\n' "$1" | sed -n 's/.*kernels=\([a-z0-9_]*\).*/\1/p')
    if [ $rc -gt 1 ] || [ ! -s "$2/report.json" ]; then
        grep -m1 -e 'knob' -e 'not usable' -e 'parity:' "$2.log" || echo "the probe run exited with status $rc"
        return 1
    fi
    python3 - "$2/report.json" "$want" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["backends"][0]
if not b["usable"]:
    print("not usable: %s" % b["reason"]); sys.exit(1)
if sys.argv[2] and b.get("kernels") != sys.argv[2]:
    print("asked for kernels=%s, runs %s" % (sys.argv[2], b.get("kernels"))); sys.exit(1)
EOF
}

# phase CPU: every step of one emulated CPU
phase() {
    cpu=$1
    export QEMU_CPU=$cpu
    d=$logs/aarch64-$cpu
    out=$build/check-aarch64/$cpu
    rm -rf "$out"
    mkdir -p "$out"
    echo "== QEMU_CPU=$cpu"
    # the unit tests, $jobs at a time (each is one emulated process)
    for t in "$build"/tests/test_*; do
        n=${t##*/}
        case "$n" in *.d) continue ;; esac
        case " $(echo $UNIT_SKIP) " in *" $n "*) continue ;; esac
        if [ "$cpu" != max ]; then
            case " $UNIT_A53 " in *" $n "*) ;; *) continue ;; esac
        fi
        echo "$n"
    done | CS="$here/check_step.sh" D="$d" CPU="$cpu" QEMU_SH="$here/qemu_aarch64.sh" TB="$build/tests" \
        xargs -P "$jobs" -n 1 sh -c 'sh "$CS" "$D" "$1-$CPU" sh "$QEMU_SH" "$TB/$1" | tail -n 1' sh

    specs="cpu,qnnpack"
    forced= # qnnpack's forced kernel sets (max only): the quantized cases alone, a step of their own
    [ "$cpu" = max ] && forced="qnnpack[kernels=scalar]"
    if $qemu "$exe" list backends 2>/dev/null | awk '$1 == "xnnpack" && $3 == "yes" { f = 1 } END { exit !f }'; then
        specs="$specs,xnnpack"
    fi
    skips=0
    : >"$out/variants.log"
    # the NEON kernel sets each backend has (cpu: neon; qnnpack: neon and the dot-product neondot)
    for spec in 'cpu[kernels=neon]' 'qnnpack[kernels=neon]' 'qnnpack[kernels=neondot]'; do
        if why=$(probe "$spec" "$out/probe"); then
            # run on max, but cpu[kernels=neon] (cpu's automatic set there); on cortex-a53 the probe is the check
            [ "$cpu" = max ] && [ "$spec" != 'cpu[kernels=neon]' ] && forced="$forced,$spec"
        else
            echo "SKIP $spec on QEMU_CPU=$cpu: $why" | tee -a "$out/variants.log"
            skips=$((skips + 1))
        fi
    done
    rm -rf "$out/probe" "$out/probe.log"
    echo "variants: 0 passed, 0 failed, $skips skipped" >>"$out/variants.log"
    sh "$here/check_step.sh" "$d" "variants-$cpu" cat "$out/variants.log" >/dev/null
    if [ "$cpu" = max ]; then share=1/1; else share=$A53_SHARD; fi
    echo "instances on QEMU_CPU=$cpu, quick suite share $share: $specs"
    sh "$here/check_step.sh" "$d" "conformance-quick-$cpu" $qemu "$exe" run --suite quick -b "$specs" \
        $(shard_opt "$share") -j "$jobs" --repeat 2 --no-progress --out "$out/quick" | tail -n 4
    [ "$cpu" = max ] || return 0
    echo "qnnpack's forced kernel sets on QEMU_CPU=$cpu, the quick suite's quantized cases ($FORCED_MATCH): $forced"
    sh "$here/check_step.sh" "$d" "conformance-forced-$cpu" $qemu "$exe" run --suite quick -k "$FORCED_MATCH" \
        -b "$forced" -j "$jobs" --repeat 2 --no-progress --out "$out/forced" | tail -n 4
    # cpu's portable kernels, built by the aarch64 compiler (which contracts a*b+c into fused multiply-adds)
    echo "cpu[kernels=scalar] on QEMU_CPU=$cpu, quick suite share $SCALAR_SHARD"
    sh "$here/check_step.sh" "$d" "conformance-scalar-$cpu" $qemu "$exe" run --suite quick -b 'cpu[kernels=scalar]' \
        $(shard_opt "$SCALAR_SHARD") -j "$jobs" --repeat 2 --no-progress --out "$out/scalar" | tail -n 4
    models=cases/regressions # the fixed findings' cases (small) ride along with the models
    for m in $MODELS; do models="$models cases/models/$m.json"; done
    mspecs=$(printf '%s\n' "$specs,$forced" | tr ',' '\n' | grep -v 'kernels=scalar' | paste -sd, -)
    echo "models ($MODELS) on: $mspecs"
    sh "$here/check_step.sh" "$d" "conformance-models-$cpu" $qemu "$exe" run $models -b "$mspecs" -j "$jobs" \
        --no-progress --out "$out/models" | tail -n 4
}

# max in the background, cortex-a53 and then the reference comparison beside it (its own logs, its own processes)
phase max &
maxpid=$!
(
    phase cortex-a53
    unset QEMU_CPU
    sh "$here/check_step.sh" "$logs/reference" aarch64-reference env BUILD="${build%/aarch64}" \
        sh tests/report/aarch64_reference.sh | tail -n 3
)
wait "$maxpid"

sh "$here/check_sum.sh" check-aarch64 "$logs/aarch64-max" "$logs/aarch64-cortex-a53" "$logs/reference"
