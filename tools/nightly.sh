#!/bin/sh
# nightly.sh - the nightly fuzzing job (`make nightly`, which builds what it needs first; docs/fuzzing.md,
# "Nightly campaigns and deployment").
#
#   1. every libFuzzer target (build/fuzz/fuzz_*, AddressSanitizer + UndefinedBehaviorSanitizer) for its share of
#      the budget, on its corpus kept across nights in build/fuzz/corpus/<name>/ (seeded from fuzz/corpus/<name>/),
#      with its dictionary fuzz/<name>.dict when there is one; crashes, leaks, timeouts and out-of-memory inputs go
#      to $OUT/libfuzzer/<name>/, the output to build/fuzz/logs/;
#   2. a differential campaign for the rest of the budget: `parity fuzz` over every usable backend and the example
#      plugin, seeded from the date (or NIGHTLY_SEED), on shard SHARD; its report and findings go to $OUT;
#   3. the checks `make check` samples or leaves out to stay fast, out of the budget: the vulkan quick suite entirely
#      under the Khronos validation layer (tools/check_vulkan.sh with VULKAN_VALIDATE=all; `make check` validates
#      one sixteenth and runs fp16 on a quarter; about 4 minutes on lavapipe), the planted-layer matrix
#      (tools/planted_layers.sh: every conv2d, linear and matmul of three models planted in turn; make check runs the
#      transformer encoder's first, middle and last), the quick suite and the reduced finding cases on openvino and
#      openvino[precision=bf16] against their known findings (tools/check_runtimes.sh; 1,783 s for both at load 25; skipped
#      where not installed), and every unit test program with a test
#      marked PAR_TEST_NIGHTLY (tests/tmain.h: the whole-model tests and test_winograd's full-suite pass, which
#      `make check` skips; docs/ci.md lists them) run with
#      PAR_TEST_NIGHTLY=1, and what `make check-aarch64` shares or leaves out (tools/check_aarch64.sh with
#      AARCH64_CHECK=full: cpu[kernels=scalar] and the cortex-a53 quick suite whole, the models of
#      AARCH64_MODELS_FULL; when build/aarch64/parity and qemu-aarch64 are there, else one line saying why not);
#      NIGHTLY_CHECKS=0 leaves them out;
#   4. a summary ($OUT/summary.txt, also printed): crashes per target, the campaign's findings, the checks' counts.
#
# Environment: NIGHTLY_SECONDS (total budget, default 3600), SHARD (K/N, default 1/1: this machine's share of the
# campaign; every shard fuzzes every libFuzzer target), NIGHTLY_SEED (default: the UTC date, YYYYMMDD, so that all
# shards of one night share it), NIGHTLY_SHARE (percent of the budget per libFuzzer target, default 10),
# NIGHTLY_BACKENDS (a -b list for the campaign; default: every usable backend but executorch, whose lowering takes
# seconds a graph), NIGHTLY_OUT (default out/nightly),
# PARITY (default build/parity), PLUGIN (default build/plugins/libparity_example.so).
# Exit status: 0 nothing found, 1 something found (see the summary; also when a part failed), 2 bad settings, 3 the
# job itself failed (a target or the campaign could not run) and nothing was found.
# POSIX sh.

set -u

budget=${NIGHTLY_SECONDS:-3600}
shard=${SHARD:-1/1}
seed=${NIGHTLY_SEED:-$(date -u +%Y%m%d)}
share=${NIGHTLY_SHARE:-10}
out=${NIGHTLY_OUT:-out/nightly}
parity=${PARITY:-build/parity}
plugin=${PLUGIN:-build/plugins/libparity_example.so}
fuzzdir=build/fuzz

case $budget in '' | *[!0-9]*) echo "nightly: NIGHTLY_SECONDS='$budget' is not a number of seconds"; exit 2 ;; esac
case $share in '' | *[!0-9]*) echo "nightly: NIGHTLY_SHARE='$share' is not a percentage"; exit 2 ;; esac
case $seed in '' | *[!0-9]*) echo "nightly: NIGHTLY_SEED='$seed' is not a number"; exit 2 ;; esac
k=${shard%/*}
n=${shard#*/}
case "$k/$n" in
*[!0-9/]* | /* | */ | *//*) echo "nightly: SHARD='$shard' is not K/N"; exit 2 ;;
esac
if [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then echo "nightly: SHARD='$shard': K must be in 1..N"; exit 2; fi

mkdir -p "$out/libfuzzer" "$fuzzdir/logs" "$fuzzdir/corpus"
stamp=$(date -u +%Y%m%dT%H%M%S)
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
# check_step LOG NAME WHAT COMMAND...: runs one check into LOG and says its count line "NAME: N passed, ..." (or that it
# printed none) with WHAT; exit 1 is a finding, any other failure a check that did not run through.
check_step() {
    log=$1 name=$2 what=$3
    shift 3
    "$@" >"$log" 2>&1
    rc=$?
    line=$(grep "^$name: [0-9]" "$log" | tail -n 1)
    say "checks: ${line:-$name: no count line} ($what; log $log)"
    case $rc in
    0) ;;
    1) found=1 ;;
    *) failed=1 ;;
    esac
}

start=$(date +%s)
found=0
failed=0
say "nightly $stamp: budget ${budget}s, shard $shard, seed $seed"

# 1. libFuzzer targets, one after the other.
targets=$(ls "$fuzzdir"/fuzz_* 2>/dev/null | grep -v '\.' || true)
[ -n "$targets" ] || { say "nightly: no libFuzzer target in $fuzzdir (make fuzz builds them)"; failed=1; }
for bin in $targets; do
    [ -x "$bin" ] || continue
    t=$(basename "$bin")
    name=${t#fuzz_}
    secs=$((budget * share / 100))
    [ "$secs" -ge 1 ] || secs=1
    corpus=$fuzzdir/corpus/$name
    art=$out/libfuzzer/$name
    log=$fuzzdir/logs/nightly-$name-$stamp.log
    mkdir -p "$corpus" "$art"
    # The committed seeds join the kept corpus every night (new seeds included); libFuzzer dedups by content.
    if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$corpus/"; fi
    dict=
    [ -f "fuzz/$name.dict" ] && dict=-dict=fuzz/$name.dict
    before=$(ls "$art" | wc -l)
    # -seed: the night's seed and the shard, so that a night's run can be repeated; distinct per shard.
    "$bin" -max_total_time="$secs" -rss_limit_mb=4096 -timeout=30 -seed=$(((seed % 100000000) * 16 + k)) \
        -artifact_prefix="$art/" -print_final_stats=1 $dict "$corpus" >"$log" 2>&1
    rc=$?
    after=$(ls "$art" | wc -l)
    new=$((after - before))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    if [ "$new" -gt 0 ]; then
        found=1
        say "libfuzzer $name: $new new crash input(s) in $art/ (${secs}s, ${execs:-?} execs, log $log)"
    elif [ "$rc" -ne 0 ]; then
        failed=1
        say "libfuzzer $name: exit $rc without an input kept (log $log)"
    else
        size=$(ls "$corpus" | wc -l)
        say "libfuzzer $name: nothing found (${secs}s, ${execs:-?} execs, cov ${cov:-?}, corpus $size)"
    fi
done

# 2. The differential campaign for what is left of the budget.
now=$(date +%s)
left=$((budget - (now - start)))
[ "$left" -ge 10 ] || left=10
if [ ! -x "$parity" ]; then
    say "campaign: $parity is missing (make builds it)"
    failed=1
else
    # executorch lowers every new graph through torch.export and ExecuTorch's own flow, seconds a graph where the
    # other backends take milliseconds, so the default campaign leaves it out (NIGHTLY_BACKENDS=executorch fuzzes
    # it on its own); the rest is every usable backend, as parity fuzz's own default.
    if [ -z "${NIGHTLY_BACKENDS:-}" ]; then
        pl=
        [ -f "$plugin" ] && pl=$plugin
        NIGHTLY_BACKENDS=$("$parity" list backends ${pl:+--plugin "$pl"} 2>/dev/null |
            awk 'NR > 1 && $3 == "yes" && $1 != "executorch" { printf "%s%s", s, $1; s = "," }')
    fi
    set -- fuzz --time "$left" --seed "$seed" --shard "$shard" --out "$out" --no-progress
    [ -f "$plugin" ] && set -- "$@" --plugin "$plugin"
    [ -n "${NIGHTLY_BACKENDS:-}" ] && set -- "$@" -b "$NIGHTLY_BACKENDS"
    log=$fuzzdir/logs/nightly-campaign-$stamp.log
    # Findings folders (one per signature) accumulate across nights: the new ones are tonight's.
    count_findings() {
        if [ -d "$out/findings" ]; then find "$out/findings" -mindepth 1 -maxdepth 1 -type d | wc -l; else echo 0; fi
    }
    before=$(count_findings)
    "$parity" "$@" >"$log" 2>&1
    rc=$?
    total=$(count_findings)
    new=$((total - before))
    stats=$(grep '^fuzz: ' "$log" | tail -n 1)
    if [ "$rc" = 1 ] || [ "$new" -gt 0 ]; then
        found=1
        say "campaign: $new new signature(s), $total in all, in $out/findings/ (index.json there; log $log)"
    fi
    [ -n "$stats" ] && say "campaign: ${stats#fuzz: }"
    case $rc in
    0) say "campaign: nothing found (${left}s, seed $seed, shard $shard; $out/report.json)" ;;
    1) ;;
    *)
        failed=1
        say "campaign: parity fuzz exited $rc (log $log):"
        tail -n 5 "$log" | tee -a "$summary"
        ;;
    esac
fi

# 3. The checks make check samples, in full.
if [ "${NIGHTLY_CHECKS:-1}" != 0 ] && [ -x "$parity" ]; then
    check_step "$fuzzdir/logs/nightly-vulkan-$stamp.log" conformance-vulkan "validated throughout" \
        env VULKAN_VALIDATE=all sh tools/check_vulkan.sh "$parity" "$out/check-vulkan" 2
    check_step "$fuzzdir/logs/nightly-openvino-$stamp.log" conformance-openvino "both instances" \
        sh tools/check_runtimes.sh "$parity" "$out/check-openvino" 2 openvino
    # the planted-layer matrix over every dot product of three models (make check runs a sample of it)
    check_step "$fuzzdir/logs/nightly-planted-layers-$stamp.log" planted-layers "every layer" \
        env PARITY="$parity" PLANTED="$(dirname "$parity")/tests/plugins/planted.so" \
        PLANTED_OUT="$out/planted-layers" sh tools/planted_layers.sh
    for src in $(grep -l 'PAR_TEST_NIGHTLY()' tests/test_*.c); do
        t=$(basename "$src" .c)
        bin=$(dirname "$parity")/tests/$t
        if [ ! -x "$bin" ]; then
            say "checks: $bin is missing (make builds it)"
            failed=1
            continue
        fi
        check_step "$fuzzdir/logs/nightly-$t-$stamp.log" "$t" "with its slow tests" env PAR_TEST_NIGHTLY=1 "$bin"
    done
    abuild=$(dirname "$parity")/aarch64
    if [ -x "$abuild/parity" ] && command -v qemu-aarch64 >/dev/null 2>&1; then
        check_step "$fuzzdir/logs/nightly-aarch64-$stamp.log" check-aarch64 "shares whole, all models" \
            env AARCH64_CHECK=full sh tools/check_aarch64.sh "$abuild" 2
    else
        say "checks: check-aarch64 not run: no $abuild/parity or no qemu-aarch64 (make deps; make ARCH=aarch64)"
    fi
fi

[ "$failed" = 1 ] && say "nightly: the job did not run completely (see above)"
[ "$found" = 1 ] && { say "nightly: findings (see above)"; exit 1; }
[ "$failed" = 1 ] && exit 3
say "nightly: nothing found"
exit 0
