#!/bin/sh
# check_step.sh LOGDIR NAME COMMAND [ARGS...] - runs one step of `make check` (a CUnit program or a conformance
# run), shows its output and keeps it for tools/check_sum.sh: LOGDIR/NAME.log (stdout and stderr),
# LOGDIR/NAME.rc (the exit status), LOGDIR/NAME.time (its wall time in whole seconds) and LOGDIR/NAME.cpu (the user
# and system CPU seconds of it and of every process it waited for, from the shell's `times`: what a loaded machine
# does not inflate much); LOGDIR/steps lists the steps in the order they ran.
#
# Every step must end with one count line, `NAME: P passed, F failed[, S skipped]`. The CUnit programs print
# theirs (tests/tmain.h); `parity run` prints `conformance: P passed, F failed, S skipped`. When a run's output
# has no such line (an older parity), it is derived here from the run's summary table: PASS counts as passed,
# UNSUP as skipped, FAIL, ERROR, CRASH, TIMEOUT and FLAKY as failed.
# This script never decides whether the whole check passed (check_sum.sh does); it exits with the step's status.
# POSIX sh and awk only.

set -u
if [ $# -lt 3 ]; then
    echo "usage: check_step.sh LOGDIR NAME COMMAND [ARGS...]" >&2
    exit 2
fi
dir=$1 name=$2
shift 2
mkdir -p "$dir" || exit 2
log=$dir/$name.log

t0=$(date +%s)
"$@" >"$log" 2>&1
rc=$?
echo $(($(date +%s) - t0)) >"$dir/$name.time"
# the second line of `times`: the children's user and system time, e.g. "1m2.50s 0m3.25s"
# (into a file: in a pipe or a $(...), `times` would run in a subshell, which has no children)
times >"$dir/$name.cpu"
awk 'NR == 2 {
    c = 0
    for (i = 1; i <= 2; i++) { split($i, a, "m"); sub(/s$/, "", a[2]); c += a[1] * 60 + a[2] }
    printf "%d\n", c + 0.5 }' "$dir/$name.cpu" >"$dir/$name.cpu.tmp" && mv "$dir/$name.cpu.tmp" "$dir/$name.cpu"

if ! grep -Eq '^[A-Za-z0-9_.+-]+: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log"; then
    # No count line: derive it from a conformance summary table, if the output has one.
    awk '
        /^backend +PASS +FAIL +UNSUP +ERROR +CRASH +TIMEOUT +FLAKY/ { intable = 1; found = 1; next }
        intable && NF == 0 { intable = 0; next }
        intable {
            # the label is followed by the seven counts: find the first run of seven integers
            for (i = 2; i + 6 <= NF; i++) {
                ok = 1
                for (j = 0; j < 7; j++) if ($(i + j) !~ /^[0-9]+$/) { ok = 0; break }
                if (ok) break
            }
            if (!ok) next
            p += $i; f += $(i + 1); s += $(i + 2)
            f += $(i + 3) + $(i + 4) + $(i + 5) + $(i + 6)
        }
        END {
            if (!found) exit 1
            if (s > 0) printf "conformance: %d passed, %d failed, %d skipped\n", p, f, s
            else printf "conformance: %d passed, %d failed\n", p, f
        }' "$log" >"$log.count" && cat "$log.count" >>"$log"
    rm -f "$log.count"
fi

echo "$rc" >"$dir/$name.rc"
echo "$name" >>"$dir/steps"
cat "$log"
exit "$rc"
