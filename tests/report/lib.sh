# tests/report/lib.sh - sourced by the report tests (tests/report/test_*.sh), which `make report-check` runs one by
# one through tools/check_step.sh. A test runs build/parity and checks what it wrote with real parsers and
# renderers (json, xmllint, headless Chromium); it counts its checks with ok / no / skip and ends with
# `finish`, which prints the count line `NAME: P passed, F failed, S skipped` and ends the test, with exit status 1
# when a check failed.
#
#   PARITY    the parity executable (build/parity)
#   BUILD     the build folder
#   T         a fresh temporary folder, removed at exit unless KEEP=1
#   fixture_report DIR [ARGS...]   a small run with failures: quick cases of relu, add, conv2d, softmax and linear
#             on cpu, qnnpack and the test plugin tp_offbyone (whose conv2d drops an input channel: FAILs), written
#             to DIR/report.json (about 1 s)
# POSIX sh.

set -u
BUILD=${BUILD:-build}
PARITY=${PARITY:-$BUILD/parity}
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
T=$(mktemp -d "${TMPDIR:-/tmp}/parity_${TEST_NAME}_XXXXXX") || exit 3
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$T"' EXIT
n_pass=0 n_fail=0 n_skip=0

ok() { n_pass=$((n_pass + 1)); }
# no MESSAGE: a failed check, named
no() { n_fail=$((n_fail + 1)); echo "FAIL $TEST_NAME: $*"; }
# skip MESSAGE: a check that could not run here (a tool missing), never counted as passed
skip() { n_skip=$((n_skip + 1)); echo "SKIP $TEST_NAME: $*"; }
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() {
    d=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then ok; else no "$d"; sed 's/^/    /' "$T/check.out" | head -20; fi
}

fixture_report() {
    dir=$1
    shift
    "$PARITY" run --suite quick -o relu,add,conv2d,softmax,linear -b 'cpu,qnnpack,tp_offbyone' \
        --plugin "$BUILD/tests/plugins/offbyone.so" --no-progress --out "$dir" "$@" >"$dir.log" 2>&1
    rc=$?
    if [ $rc -ne 1 ] || [ ! -s "$dir/report.json" ]; then
        echo "fixture run: exit $rc (expected 1: failures found)" >&2
        tail -5 "$dir.log" >&2
        return 1
    fi
    return 0
}

# finish: prints the count line and ends the test (exit 1 when a check failed), wherever it is called: a test
# that finds a tool missing calls `skip ...; finish` and nothing after it runs
finish() {
    echo "$TEST_NAME: $n_pass passed, $n_fail failed, $n_skip skipped"
    [ $n_fail -eq 0 ] && exit 0
    exit 1
}
