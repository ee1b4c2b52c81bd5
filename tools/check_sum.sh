#!/bin/sh
# check_sum.sh LABEL LOGDIR... - adds up the steps that tools/check_step.sh recorded under each LOGDIR (in the
# order they ran) and prints, last, the one line CI reads:
#     LABEL: N passed, N failed[, N skipped]
# preceded by one `FAILED: <step> ...` line per step that failed, so that a failure is named. A step fails when it
# exited non-zero or printed no count line; a step that failed without counting a failure (a crash, a usage or
# internal error) adds one failure of its own, so the total never reads 0 failed when something went wrong.
# Before it, the steps' wall times (LOGDIR/NAME.time) and CPU seconds (LOGDIR/NAME.cpu, user + system): the totals
# and every step, slowest first (by CPU seconds, which a loaded machine inflates less than wall time; the steps under
# 1 s of both named together on the last lines), so that where the time goes is in every log.
# With --wall DIR, the line before the last says the wall time from the marks the Makefile's check targets leave in
# DIR (each holds a `date +%s`): t-start (before the build; absent for a part's check), t-built (after it),
# t-steps (after the steps run side by side); the serial steps are the rest, up to now:
#     LABEL wall: 300 s from start to end: build 10 s, steps 280 s (side by side), serial steps 10 s
# Exits 1 when any step failed, 0 otherwise. Reads the logs only: it runs nothing. POSIX sh and awk only.

set -u
wall=
if [ "${1:-}" = --wall ] && [ $# -ge 2 ]; then
    wall=$2
    shift 2
fi
if [ $# -lt 2 ]; then
    echo "usage: check_sum.sh [--wall DIR] LABEL LOGDIR..." >&2
    exit 2
fi
label=$1
shift
dirs="$*"

tp=0 tf=0 ts=0 bad=0 nsteps=0
times=$(mktemp) || exit 2
trap 'rm -f "$times"' EXIT
for dir in "$@"; do
    [ -f "$dir/steps" ] || continue
    while IFS= read -r step; do
        nsteps=$((nsteps + 1))
        echo "$(cat "$dir/$step.time" 2>/dev/null || echo 0) $(cat "$dir/$step.cpu" 2>/dev/null || echo 0) $step" >>"$times"
        log=$dir/$step.log
        rc=$(cat "$dir/$step.rc" 2>/dev/null || echo 255)
        # the last count line of the step: "P F S", or nothing
        counts=$(awk '
            /^[A-Za-z0-9_.+-]+: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ {
                p = $2; f = $4; s = (NF >= 7) ? $6 : 0; seen = 1
            }
            END { if (seen) printf "%d %d %d\n", p, f, s }' "$log" 2>/dev/null)
        if [ -z "$counts" ]; then
            echo "FAILED: $step: no count line (exit status $rc; output in $log)"
            tf=$((tf + 1))
            bad=1
            continue
        fi
        set -- $counts
        tp=$((tp + $1)) tf=$((tf + $2)) ts=$((ts + $3))
        if [ "$rc" != 0 ]; then
            bad=1
            if [ "$2" = 0 ]; then
                tf=$((tf + 1))
                echo "FAILED: $step: exit status $rc with no failure counted (output in $log)"
            else
                echo "FAILED: $step: $2 failed"
            fi
        elif [ "$2" != 0 ]; then
            bad=1
            echo "FAILED: $step: $2 failed but exit status 0"
        fi
    done <"$dir/steps"
done

if [ "$nsteps" = 0 ]; then
    echo "FAILED: no step ran (no steps recorded in $dirs)"
    tf=$((tf + 1))
    bad=1
fi
if [ -s "$times" ]; then
    sort -k2,2nr -k1,1nr -k3,3 "$times" | awk -v label="$label" -v n="$nsteps" '
        { total += $1; cpu += $2
          if ($1 >= 1 || $2 >= 1) row[++k] = sprintf("  %6d s  %6d s CPU  %s", $1, $2, $3)
          else quick = quick " " $3 }
        END {
            printf "%s: %d s summed over %d steps (some run side by side), %d s CPU; each step, wall and CPU:\n",
                label " time", total, n, cpu
            for (i = 1; i <= k; i++) print row[i]
            if (quick != "") {
                m = split(substr(quick, 2), q, " "); line = "  under 1 s each (" m "):"
                for (i = 1; i <= m; i++) {
                    if (length(line) + length(q[i]) > 118) { print line; line = "   " }
                    line = line " " q[i]
                }
                print line
            }
        }'
fi
if [ -n "$wall" ] && [ -f "$wall/t-built" ]; then
    now=$(date +%s) built=$(cat "$wall/t-built")
    start=$(cat "$wall/t-start" 2>/dev/null || echo "$built")
    steps=$(cat "$wall/t-steps" 2>/dev/null || echo "$now")
    echo "$label wall: $((now - start)) s from start to end: build $((built - start)) s, steps $((steps - built)) s" \
        "(side by side), serial steps $((now - steps)) s"
fi
if [ "$ts" != 0 ]; then
    echo "$label: $tp passed, $tf failed, $ts skipped"
else
    echo "$label: $tp passed, $tf failed"
fi
exit "$bad"
