#!/bin/sh
# tools/planted/run.sh [SECONDS] [CLASS...] - measures the fuzzer on planted bugs.
#
# Builds a throwaway copy of this tree (git archive of HEAD into a temporary folder, never this tree) with the
# patch tools/planted/planted.patch applied and -DPARITY_PLANTED, which plants one bug class per run in the cpu and
# qnnpack backends, chosen by PARITY_PLANT=<class> at run time. For each class it runs
#     parity fuzz -b <backend> --time SECONDS --seed 1
# and prints the seconds until the first finding, its signature, and the reduced case's size (nodes before and
# after), once the campaign has reduced it. The classes (backend):
#   pad      conv2d padding off by one (top padding read one row short)             cpu
#   wtrans   conv2d weights transposed (kh x kw swapped for square kernels)         cpu
#   bias     the last output channel's bias element dropped (linear, conv2d)        cpu
#   zp       the input zero point off by one in the quantized conv / linear fold    qnnpack
#   ties     ties rounded half away in a backend that promises fp32's half-even     qnnpack[kernels=scalar]
#   clamp    relu6 / hardtanh / clamp without the upper bound (also when fused)     cpu
#   chrem    depthwise conv: the last channel takes its neighbour's weights (C % 8) cpu
#   bcast    a size-1 broadcast also broadcasts the next axis                       cpu
#   tile     conv2d: the first pixel of the second tile reads the first tile's last cpu
#   softmax  softmax / log_softmax without the max subtraction                      cpu
#   maxnan   max_pool2d drops NaN                                                   cpu
# Needs git, awk, a C compiler and the packages of make deps. The copy is removed at the end.
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
classes=${*:-pad wtrans bias zp ties clamp chrem bcast tile softmax maxnan}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive HEAD | tar -x -C "$tmp"
(cd "$tmp" && git apply "$root/tools/planted/planted.patch")
echo "building the planted copy in $tmp ..."
(cd "$tmp" && CPPFLAGS=-DPARITY_PLANTED make -s -j"$(nproc)" build/parity >/dev/null)

backend_of() {
    case "$1" in
    zp) echo qnnpack ;;
    ties) echo 'qnnpack[kernels=scalar]' ;;
    *) echo cpu ;;
    esac
}

printf '%-8s %-24s %8s  %-40s %s\n' class backend found_s signature "reduced nodes"
for c in $classes; do
    b=$(backend_of "$c")
    out="$tmp/out-$c"
    log="$tmp/log-$c"
    start=$(date +%s.%N)
    (cd "$tmp" && PARITY_PLANT=$c exec build/parity fuzz -b "$b" --time "$secs" --seed 1 --out "$out" --no-progress \
        >/dev/null 2>"$log") &
    pid=$!
    found="" sig="-" nodes="-"
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$found" ] && grep -q 'new finding' "$log"; then
            found=$(awk "BEGIN { print $(date +%s.%N) - $start }")
            dir=$(grep -m1 'new finding' "$log" | sed 's/.*: //')
        fi
        if [ -n "$found" ] && [ -f "$dir/finding.json" ] && grep -q '"nodes_after"' "$dir/finding.json"; then
            kill "$pid" 2>/dev/null || :
            break
        fi
        sleep 0.2
    done
    wait "$pid" 2>/dev/null || :
    if [ -n "$found" ]; then
        sig=$(grep -m1 'new finding' "$log" | sed 's/.*new finding: \(.*\) (graph seed.*/\1/')
        nb=$(grep -o '"nodes_before": *[0-9]*' "$dir/finding.json" | grep -o '[0-9]*$' || echo '?')
        na=$(grep -o '"nodes_after": *[0-9]*' "$dir/finding.json" | grep -o '[0-9]*$' || echo '?')
        nodes="$nb -> $na"
        printf '%-8s %-24s %8.1f  %-40s %s\n' "$c" "$b" "$found" "$sig" "$nodes"
    else
        printf '%-8s %-24s %8s  %-40s %s\n' "$c" "$b" "none" "not found in ${secs} s" "-"
    fi
done
