#!/bin/sh
# diff_noise.sh - how often the report diff's gate trips between two runs: N tries (default 10) of two runs of the
# same selection, one after the other, each pair diffed (`parity diff A B`); prints each try's gate and its latency
# items, then the count of tries that gave PASS, WARN and FAIL. Not part of `make check` (it takes minutes).
#
#   tools/diff_noise.sh [-n N] [-e EXTRA] [-k] [-- DIFF-OPTIONS] -- RUN-ARGS...
#
#   -n N       tries (default 10)
#   -e EXTRA   the second run of each pair with PARITY_TP_SLOW_EXTRA=EXTRA (the tp_slow plugin's deliberate
#              regression, e.g. 0.2); without it both runs are the same build: every WARN or FAIL is noise
#   -k         keep the reports (the folder is printed)
#   RUN-ARGS   what `parity run` gets, e.g. cases/models -b cpu --repeat 20
#   DIFF-OPTIONS  given to `parity diff` (after a first --, ended by a second --)
#
# Examples:
#   tools/diff_noise.sh -- cases/models -b cpu --repeat 20                    # false alarms of the same build
#   tools/diff_noise.sh -e 0.2 -- tests/data/diff -b tp_slow \
#       --plugin build/tests/plugins/slow.so --repeat 30                        # detections of +20%
set -u
PARITY=${PARITY:-build/parity}
n=10 extra='' keep=0 diff_opts=''
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    -e) extra=$2; shift 2 ;;
    -k) keep=1; shift ;;
    --) shift; break ;;
    *) echo "diff_noise: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
# DIFF-OPTIONS: everything up to a second -- when there is one
case " $* " in
*" -- "*)
    while [ $# -gt 0 ] && [ "$1" != -- ]; do diff_opts="$diff_opts $1"; shift; done
    shift ;;
esac
[ $# -gt 0 ] || { echo "diff_noise: no run arguments (see the header of $0)" >&2; exit 2; }
[ -x "$PARITY" ] || { echo "diff_noise: $PARITY not found (make first)" >&2; exit 2; }
D=$(mktemp -d "${TMPDIR:-/tmp}/diff_noise_XXXXXX") || exit 3
[ $keep = 1 ] && echo "diff_noise: reports in $D" || trap 'rm -rf "$D"' EXIT

pass=0 warn=0 fail=0 i=1
while [ $i -le "$n" ]; do
    "$PARITY" run "$@" --no-progress --out "$D/a$i" >"$D/a$i.log" 2>&1
    rc_a=$?
    if [ -n "$extra" ]; then
        PARITY_TP_SLOW_EXTRA=$extra "$PARITY" run "$@" --no-progress --out "$D/b$i" >"$D/b$i.log" 2>&1
    else
        "$PARITY" run "$@" --no-progress --out "$D/b$i" >"$D/b$i.log" 2>&1
    fi
    rc_b=$?
    if [ $rc_a -gt 1 ] || [ $rc_b -gt 1 ]; then
        echo "diff_noise: try $i: a run failed (exit $rc_a, $rc_b; logs in $D)" >&2
        keep=1
        trap - EXIT
        exit 3
    fi
    # shellcheck disable=SC2086
    "$PARITY" diff "$D/a$i/report.json" "$D/b$i/report.json" --max-items -1 $diff_opts >"$D/diff$i.txt" 2>&1
    rc=$?
    gate=$(sed -n 's/^parity diff: \([A-Z]*\).*/\1/p' "$D/diff$i.txt")
    case $gate in PASS) pass=$((pass + 1)) ;; WARN) warn=$((warn + 1)) ;; FAIL) fail=$((fail + 1)) ;; *)
        echo "diff_noise: try $i: diff exit $rc: $(head -3 "$D/diff$i.txt")" >&2; exit 3 ;; esac
    judged=$(sed -n 's/^latency: \([0-9]*\) records judged.*/\1 records judged/p' "$D/diff$i.txt")
    echo "try $i: $(grep '^parity diff:' "$D/diff$i.txt"); $judged"
    grep -E '^  (FAIL|WARN|    ) (latency regression|slower|faster) ' "$D/diff$i.txt" | sed 's/^/    /'
    i=$((i + 1))
done
note=${extra:+ (second run of each pair with PARITY_TP_SLOW_EXTRA=$extra)}
echo "diff_noise: $n tries: $pass PASS, $warn WARN, $fail FAIL$note"
