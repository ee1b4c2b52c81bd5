#!/bin/sh
# check_fuzz.sh PARITY FUZZ-ARGS... - the smoke campaign of `make check`: runs `PARITY fuzz FUZZ-ARGS...`, shows
# its output, and ends with the count line tools/check_sum.sh adds up:
#     fuzz-check: G passed, F failed
# G the graphs the campaign ran, F the findings (records neither PASS nor UNSUPPORTED). The step fails (exit
# status 1) when the campaign found anything, ran no graph (counted as one failure), or exited with another status
# than 0 or 1 (a usage or internal error, an interruption; check_sum.sh counts it as a failure too).
# POSIX sh and sed only.

set -u
if [ $# -lt 1 ]; then
    echo "usage: check_fuzz.sh PARITY FUZZ-ARGS..." >&2
    exit 2
fi
exe=$1
shift
log=$(mktemp) || exit 2
"$exe" fuzz "$@" >"$log" 2>&1
rc=$?
cat "$log"
# fuzz: G graphs in T s (R graphs/s) on B backends: F findings in S signatures
line=$(sed -n 's/^fuzz: \([0-9][0-9]*\) graphs in .*: \([0-9][0-9]*\) findings* in .*/\1 \2/p' "$log" | tail -n 1)
rm -f "$log"
if [ -z "$line" ]; then
    echo "fuzz-check: the campaign printed no closing line (exit status $rc)"
    echo "fuzz-check: 0 passed, 1 failed"
    exit 1
fi
set -- $line
graphs=$1 findings=$2
if [ "$graphs" = 0 ]; then
    echo "fuzz-check: the campaign ran no graph"
    echo "fuzz-check: 0 passed, $((findings + 1)) failed"
    exit 1
fi
echo "fuzz-check: $graphs passed, $findings failed"
if [ "$findings" != 0 ] || [ "$rc" != 0 ]; then
    [ "$rc" = 0 ] && rc=1
    exit "$rc"
fi
exit 0
