#!/bin/sh
# measure_speed.sh - wall-clock speed of the standard runs against the project's targets, each repeated N times
# (median reported, every sample listed), on the build in this tree:
#
#   sh tools/measure_speed.sh [-n N] [quick|full|models|models-warm|fresh-run]...
#
#   quick        build/parity run --suite quick -b cpu -j 2        target >= 2,000 cases/s
#   full         build/parity run --suite full -b cpu -j 2         target >= 1,000 cases/s
#   models       the models suite on cpu, reference cache off      target < 20 s
#   models-cold  the models suite on cpu, an empty reference cache  target < 20 s (needs the cache wired in)
#   models-warm  the models suite on cpu, cache filled first       target < 5 s (needs the cache wired in)
#   fresh-run    git clone of this tree into a temporary folder, then `make run` there   target < 90 s
#
# It measures; it must not change the tree (results go to a temporary folder).
set -u
N=3
if [ "${1:-}" = "-n" ]; then N=$2; shift 2; fi
[ $# -gt 0 ] || set -- quick full models
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXE=$ROOT/build/parity
TMP=$(mktemp -d /tmp/parity_speed.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# one timed command; prints its wall seconds; its output goes to $TMP/last.log, its CPU seconds (user + system, the
# process and its children: less sensitive than wall time to what else the machine runs) are appended to $TMP/cpu
timed() {
    t0=$(now)
    /usr/bin/time -o "$TMP/time" -f "%U %S" "$@" >"$TMP/last.log" 2>&1
    rc=$?
    t1=$(now)
    [ $rc -le 1 ] || { echo "command failed ($rc): $*" >&2; tail -5 "$TMP/last.log" >&2; }
    tail -1 "$TMP/time" | awk '{printf "%.2f\n", $1 + $2}' >>"$TMP/cpu"
    echo "$t0 $t1" | awk '{printf "%.2f\n", $2 - $1}'
}

cases_of() { sed -n 's/^parity: \([0-9]*\) case.*/\1/p' "$TMP/last.log" | head -1; }

for what in "$@"; do
    samples=""
    ncases=""
    : >"$TMP/cpu"
    i=0
    while [ $i -lt "$N" ]; do
        i=$((i + 1))
        case $what in
        quick|full)
            s=$(timed "$EXE" run --suite "$what" -b cpu -j 2 --no-progress --out "$TMP/out")
            ncases=$(cases_of) ;;
        models)
            s=$(PARITY_CACHE=0 timed "$EXE" run --suite models -b cpu -j 2 --no-progress --out "$TMP/out") ;;
        models-cold)
            rm -rf "$TMP/cold"
            s=$(PARITY_CACHE_DIR=$TMP/cold timed "$EXE" run --suite models -b cpu -j 2 --no-progress --out "$TMP/out") ;;
        models-warm)
            if [ $i -eq 1 ]; then PARITY_CACHE_DIR=$TMP/cache "$EXE" run --suite models -b cpu -j 2 --no-progress \
                --out "$TMP/out" >/dev/null 2>&1; fi
            s=$(PARITY_CACHE_DIR=$TMP/cache timed "$EXE" run --suite models -b cpu -j 2 --no-progress --out "$TMP/out") ;;
        fresh-run)
            rm -rf "$TMP/clone"
            git clone -q "$ROOT" "$TMP/clone" || exit 1
            s=$(timed make -C "$TMP/clone" run) ;;
        *) echo "unknown measurement: $what" >&2; exit 2 ;;
        esac
        samples="$samples $s"
    done
    med=$(for s in $samples; do echo "$s"; done | median)
    cpu="cpu median $(median <"$TMP/cpu") s (samples: $(tr '\n' ' ' <"$TMP/cpu"))"
    if [ -n "$ncases" ]; then
        rate=$(echo "$ncases $med" | awk '{printf "%.0f", $1 / $2}')
        echo "$what: median $med s over $N runs (samples:$samples), $ncases cases, $rate cases/s; $cpu"
    else
        echo "$what: median $med s over $N runs (samples:$samples); $cpu"
    fi
done
