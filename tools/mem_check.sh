#!/bin/sh
# mem_check.sh - the per-case memory estimate (runner/case_mem.c) against the measured peak resident set size of
# `build/parity run CASE -b BACKEND -j 1` (GNU time's "Maximum resident set size": the largest single process, the
# worker or its backend child), for each case file given:
#
#   sh tools/mem_check.sh [-b BACKEND] CASE.json...
#
# A small helper linked against build/libparity.a prints the estimate's parts; the run is made with the reference
# cache off (PARITY_CACHE=0) so that the reference is computed. It measures; it must not change the tree.
set -u
BACKEND=cpu
if [ "${1:-}" = "-b" ]; then BACKEND=$2; shift 2; fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d /tmp/parity_mem.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/est.c" <<'C'
#include <stdio.h>
#include "core/case.h"
#include "runner/case_mem.h"
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        par_msg m;
        par_case *c = par_case_load(argv[i], &m);
        if (!c) { fprintf(stderr, "%s\n", m.text); return 2; }
        par_case_mem p;
        par_case_mem_parts(par_graph_desc_of(c->graph), 1, NULL, &p);
        printf("%lld %lld %lld %lld %lld %lld %lld\n", (long long)p.total, (long long)p.data, (long long)p.ref_values,
               (long long)p.ref_temp, (long long)p.buffers, (long long)p.backend, (long long)p.ref_kept);
        par_case_destroy(c);
    }
    return 0;
}
C
JSONC=$(pkg-config --libs json-c 2>/dev/null || ls /usr/lib/*/libjson-c.so* 2>/dev/null | head -1)
cc -std=c11 -D_GNU_SOURCE -I"$ROOT" "$TMP/est.c" "$ROOT/build/libparity.a" -o "$TMP/est" $JSONC -lm -ldl -lpthread \
    -lpthreadpool -lcpuinfo $( [ -f /usr/include/xnnpack.h ] && echo -lXNNPACK ) \
    -lpthreadpool -lcpuinfo -lm || exit 1
printf "%-28s %10s %10s %8s   %s\n" case estimate measured est/meas "parts (MB): data ref_values ref_temp buffers backend"
for f in "$@"; do
    set -- $("$TMP/est" "$f") || exit 1
    PARITY_CACHE=0 /usr/bin/time -v "$ROOT/build/parity" run "$f" -b "$BACKEND" -j 1 --no-progress --out "$TMP/out" \
        >"$TMP/log" 2>&1
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/log")
    echo "$(basename "$f") $1 $kb $2 $3 $4 $5 $6" | awk '{
        meas = $3 * 1024; printf "%-28s %8.3f GB %8.3f GB %8.2f   %.1f %.1f %.1f %.1f %.1f\n", $1, $2 / 1e9, meas / 1e9,
        $2 / meas, $4 / 1e6, $5 / 1e6, $6 / 1e6, $7 / 1e6, $8 / 1e6 }'
done
