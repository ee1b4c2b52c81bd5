# tests/report/test_html.sh - the HTML report (`parity report FILE --html OUT`, docs/reports-html.md) of a small run
# with real failures, checked as a browser sees it: headless Chromium loads it without a console message, its DOM
# has the heatmap and the failure table with every failing record of the report (counted from report.json with
# Python's json, not by parity), the page references nothing outside itself, and its script runs (a link to a
# heatmap row opens that row's case list). Also: a report without failures renders; a missing, a truncated report
# and an unwritable output each give one line naming the file and exit 2, with nothing left behind. The screenshot
# is kept at $BUILD/report/report.png. Without chromium (or python3) those checks are skipped, never passed.
. tests/report/lib.sh

# (CHROMIUM=none runs the test as on a machine without a browser: those checks are then skipped)
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ "$CHROMIUM" = none ] && CHROMIUM=
# chromium_run OUT ERR ARGS...: headless Chromium, console messages on stderr (lines with ":CONSOLE")
chromium_run() {
    o=$1 e=$2
    shift 2
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d "$T/chr_XXXXXX")" \
        --enable-logging=stderr --v=0 "$@" >"$o" 2>"$e"
}

fixture_report "$T/fx" || { no "fixture run"; finish; exit 1; }
"$PARITY" report "$T/fx/report.json" --html "$T/fx/report.html" >"$T/render.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && [ -s "$T/fx/report.html" ]; then ok; else no "render: exit $rc (expected 1: the report has failures)"; fi
html="$T/fx/report.html"

# Self-contained: no URL, no protocol-relative reference, no file loaded by src=, no link but to an anchor, no CSS
# import or url().
check "no external reference" sh -c "! grep -nE 'https?:|//|src=|@import|url\\(' '$html'"
check "every href is an anchor" sh -c "! grep -noE 'href=\"[^#][^\"]*\"' '$html'"
check "html has one heatmap" sh -c "[ \$(grep -c 'id=\"heatmap\"' '$html') = 1 ]"
check "html has one failure table" sh -c "[ \$(grep -c '<table id=\"failures\"' '$html') = 1 ]"

# The environment names the architecture parity was built for and, per backend, the kernels its describe names
# (the values of report.json's environment.arch and backends[].kernels).
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/fx/report.json" >"$T/arch.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["environment"]["arch"])
print(" ".join(b["kernels"] for b in r["backends"] if b.get("kernels")))
EOF
    arch=$(sed -n 1p "$T/arch.txt") kern=$(sed -n 2p "$T/arch.txt")
    check "html shows the architecture ($arch)" grep -q "architecture (built for)</th><td>$arch<" "$html"
    for k in $kern; do check "html shows the kernels $k" grep -q "<th>kernels</th><td>$k<" "$html"; done
    if [ -n "$kern" ]; then ok; else no "no backend of the fixture names its kernels"; fi
else
    skip "python3 absent: the architecture and kernels rows not checked"
fi

# The failing records of the report, as (backend, case) lines, from the JSON itself.
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/fx/report.json" >"$T/fails.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    if x["verdict"] in ("CRASH", "TIMEOUT", "FAIL", "FLAKY", "ERROR"):
        print(x["case"])
EOF
    nf=$(wc -l <"$T/fails.txt")
    if [ "$nf" -gt 0 ]; then ok; else no "the fixture has no failing record to look for"; fi
else
    skip "python3 absent: the failing records of the report not counted"
    nf=
fi

if [ -z "$CHROMIUM" ]; then
    skip "chromium absent: console, DOM, failure rows, script and screenshot not checked"
    skip "chromium absent: the detection of a script error not checked"
else
    # The detection itself: a page with a deliberate script error must show up as a console line.
    printf '<!DOCTYPE html><html><body><p>x</p><script>no_such_function();</script></body></html>\n' >"$T/bad.html"
    chromium_run "$T/bad.dom" "$T/bad.err" --dump-dom "file://$T/bad.html"
    check "a script error is detected (console line with Uncaught)" grep -q 'CONSOLE.*Uncaught' "$T/bad.err"

    chromium_run "$T/fx.dom" "$T/fx.err" --dump-dom "file://$html"
    rc=$?
    if [ $rc -eq 0 ] && [ -s "$T/fx.dom" ]; then ok; else no "chromium --dump-dom: exit $rc"; tail -5 "$T/fx.err"; fi
    check "no console message while loading" sh -c "! grep ':CONSOLE' '$T/fx.err'"
    check "DOM has the heatmap" grep -q '<table id="heatmap"' "$T/fx.dom"
    check "DOM has the failure table" grep -q '<table id="failures"' "$T/fx.dom"
    if [ -n "$nf" ]; then
        rows=$(grep -c '<tr id="f[0-9]*"' "$T/fx.dom")
        if [ "$rows" = "$nf" ]; then ok; else no "failure table: $rows rows, the report has $nf failing records"; fi
        # each failing case's ID in the failure table (IDs of the fixture have no & < >, which the DOM escapes)
        # (the table holds tables of its own: it ends where the environment section begins)
        sed -n '/<table id="failures"/,/<section id="environment"/p' "$T/fx.dom" >"$T/ftable.html"
        missing=0
        while IFS= read -r id; do
            grep -qF "$id" "$T/ftable.html" && continue
            missing=$((missing + 1))
            [ $missing -le 5 ] && echo "    missing: $id"
        done <"$T/fails.txt"
        if [ $missing -eq 0 ]; then ok; else no "failure table: $missing failing records missing"; fi
    else
        skip "python3 absent: failure rows not compared with the report"
    fi
    # The script ran: a link to a heatmap row (#g0) opens that row's case list.
    chromium_run "$T/g0.dom" "$T/g0.err" --dump-dom "file://$html#g0"
    check "the script opens the case list a link targets" grep -q '<details id="g0" open' "$T/g0.dom"
    mkdir -p "$BUILD/report"
    chromium_run "$T/shot.out" "$T/shot.err" --screenshot="$BUILD/report/report.png" --window-size=1280,2000 \
        "file://$html"
    check "screenshot $BUILD/report/report.png" test -s "$BUILD/report/report.png"
fi

# A report without failures (a passing run) renders, exit 0, and says so.
mkdir -p "$T/pass"
"$PARITY" run --suite quick -o relu -b cpu --no-progress --out "$T/pass" >"$T/pass.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    "$PARITY" report "$T/pass/report.json" --html "$T/pass/report.html" >"$T/pass.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q 'No failures' "$T/pass/report.html"; then ok; else no "passing report: exit $rc"; fi
    check "passing report: heatmap" grep -q '<table id="heatmap"' "$T/pass/report.html"
    if [ -n "$CHROMIUM" ]; then
        chromium_run "$T/pass.dom" "$T/pass.err" --dump-dom "file://$T/pass/report.html"
        check "passing report: no console message" sh -c "! grep ':CONSOLE' '$T/pass.err'"
    else
        skip "chromium absent: passing report not loaded"
    fi
else
    no "passing run: exit $rc (expected 0)"
fi

# Bad input: exit 2 and one line naming the file; nothing written.
"$PARITY" report "$T/none.json" --html "$T/none.html" >"$T/none.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/none.out")" -eq 1 ] && grep -q "none.json" "$T/none.out" && [ ! -e "$T/none.html" ]; then
    ok
else
    no "missing report: exit $rc"; cat "$T/none.out"
fi
head -c 2000 "$T/fx/report.json" >"$T/trunc.json"
"$PARITY" report "$T/trunc.json" --html "$T/trunc.html" >"$T/trunc.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/trunc.out")" -eq 1 ] && grep -q "trunc.json" "$T/trunc.out" && [ ! -e "$T/trunc.html" ]; then
    ok
else
    no "truncated report: exit $rc"; cat "$T/trunc.out"
fi
# An output that cannot be written (a folder is in the way): exit 2, the message names it, no temporary file left.
mkdir -p "$T/w/out.html"
"$PARITY" report "$T/fx/report.json" --html "$T/w/out.html" >"$T/w.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "out.html" "$T/w.out" && [ "$(ls "$T/w")" = "out.html" ] && [ -d "$T/w/out.html" ]; then
    ok
else
    no "unwritable output: exit $rc, left: $(ls "$T/w")"; cat "$T/w.out"
fi
# An existing page is replaced whole (atomic write): rendering over the earlier page gives the same bytes.
cp "$html" "$T/first.html"
"$PARITY" report "$T/fx/report.json" --html "$html" >/dev/null 2>&1
check "rendering is deterministic and replaces the page" cmp -s "$html" "$T/first.html"

finish
