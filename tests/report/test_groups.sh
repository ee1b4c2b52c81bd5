# test_groups.sh - the failure groups (reports/groups.c) on the planted bugs of two test plugins, end to end:
#   - tp_stride2 (conv2d at a horizontal stride of 2 leaves out the input's last column, so only some stride-2 cases
#     fail): `parity report --groups` names s=[2,2] with no failure outside it, and the summary of the run says so in
#     its first lines (before the list of failures);
#   - tp_chan8 (conv2d leaves out the last input channel when the channel count is not a multiple of 8): the group is
#     "input channels % 8 != 0", with no failure outside it;
#   - the HTML page of the stride-2 run: the group in the first screen (Chromium, 1280 x 800), before the heatmap;
#     the heatmap without its all-UNSUPPORTED rows (listed in a folded list) and with the hazard-input row marked; a
#     screenshot is kept at $BUILD/report/groups.png; the latency chart of a run without model cases folded;
#   - per failure the output's shape (in the reason and on the page) and an error map (report.json: worst.shape,
#     worst.error_map; an inline SVG on the page): every map of tp_stride2 fails at its right edge only, and the
#     reader refuses a map whose cells do not fit its size;
#   - a report without failures has no groups ("no failures").
. tests/report/lib.sh

run_plugin() { # NAME: the quick conv2d cases on tests/plugins/NAME.so into $T/NAME
    "$PARITY" run --suite quick -o conv2d -b "tp_$1" --plugin "$BUILD/tests/plugins/$1.so" --no-progress \
        --out "$T/$1" >"$T/$1.log" 2>&1
}

run_plugin stride2
[ $? -eq 1 ] && ok || no "tp_stride2 run: expected exit 1 (failures): $(tail -2 "$T/stride2.log")"
"$PARITY" report "$T/stride2/report.json" --groups >"$T/g1.txt" 2>&1
grep -Eq '^conv2d on tp_stride2: [1-9][0-9]* of [0-9]+ with s=\[2,2\] fail, 0 of [1-9][0-9]* others$' "$T/g1.txt" &&
    ok || no "stride-2 bug not named by the groups: $(cat "$T/g1.txt")"
# in the summary: within its first 10 lines
head -10 "$T/stride2.log" | grep -q 'conv2d on tp_stride2: .* with s=\[2,2\] fail, 0 of' && ok ||
    no "the run's summary does not start with the group: $(head -10 "$T/stride2.log")"

# the HTML page starts with the groups (in the first screen, 1280 x 800), then the heatmap without the rows where
# every record was UNSUPPORTED (folded below it), rows of hazard-input cases apart and marked
"$PARITY" report "$T/stride2/report.json" --html "$T/s2.html" >/dev/null 2>&1
h="$T/s2.html"
grep -q 'conv2d on tp_stride2: [0-9]* of [0-9]* with s=\[2,2\] fail, 0 of' "$h" && ok || no "the page has no stride-2 group"
start=$(grep -n 'id="start"' "$h" | head -1 | cut -d: -f1)
heat=$(grep -n 'id="heatmap"' "$h" | head -1 | cut -d: -f1)
[ -n "$start" ] && [ -n "$heat" ] && [ "$start" -lt "$heat" ] && ok || no "the groups are not before the heatmap"
sed -n '/<table id="heatmap"/,/<\/table>/p' "$h" >"$T/heat.html"
grep -q '>conv2d qs8<' "$T/heat.html" && no "an all-UNSUPPORTED row (conv2d qs8) is in the heatmap" || ok
grep -q '<details id="folded">.*conv2d qs8' "$h" && ok || no "the folded rows are not listed"
grep -q 'conv2d f32 <span class="tag">hazard inputs</span>' "$T/heat.html" && ok || no "no hazard-input row in the heatmap"
# a run without model cases: the latency chart of the slowest single ops is folded (microseconds, no benchmark)
grep -q '<details id="latency-cases">' "$h" && ok || no "the latency chart of single-op cases is not folded"
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -n "$CHROMIUM" ]; then
    # a copy of the page with a line of script that records where the first group ends on a 1280 x 800 screen
    sed 's|</body>|<script>document.body.setAttribute("data-bottom",Math.round(document.querySelector("ol.groups li").getBoundingClientRect().bottom))</script></body>|' \
        "$h" >"$T/probe.html"
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d "$T/chr_XXXXXX")" \
        --window-size=1280,800 --dump-dom "file://$T/probe.html" >"$T/probe.dom" 2>/dev/null
    bottom=$(sed -n 's/.*data-bottom="\([0-9]*\)".*/\1/p' "$T/probe.dom" | head -1)
    [ -n "$bottom" ] && [ "$bottom" -le 800 ] && ok || no "the first group ends at y=${bottom:-?}, below the first screen"
    mkdir -p "$BUILD/report"
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d "$T/chr_XXXXXX")" \
        --window-size=1280,1400 --screenshot="$BUILD/report/groups.png" "file://$h" >/dev/null 2>&1
    [ -s "$BUILD/report/groups.png" ] && ok || no "no screenshot"
else
    skip "chromium absent: the first screen not checked"
fi

# per failure: the output's shape (in the reason and the page) and the error map; the stride-2 bug is at the right
# edge, so no map of tp_stride2 has failing cells in its first column, and most have them in the last column only
grep -q 'worst \[[0-9,]*\] of \[[0-9,]*\]' "$T/stride2.log" && ok || no "the failure lines do not give the output's shape"
grep -q '<svg class="emap"' "$h" && ok || no "no error map on the page"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/stride2/report.json" >"$T/emap.txt" 2>&1 <<'PY' && ok || no "error maps of tp_stride2: $(cat "$T/emap.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
n = edge = 0
for r in d["results"]:
    if r["verdict"] != "FAIL":
        continue
    w = r["worst"]
    em = w["error_map"]
    cells = bytes.fromhex(em["cells"])
    rows, cols = em["rows"], em["cols"]
    assert len(w["shape"]) == len(w["coords"]) and all(c < s for c, s in zip(w["coords"], w["shape"])), w
    bad = [(i // cols, i % cols) for i, v in enumerate(cells) if v]
    assert bad, ("a FAIL without failing cells", r["case"])
    assert cols < 3 or all(c > 0 for _, c in bad), ("failing cells at the left edge", r["case"], bad)
    n += 1
    edge += all(c == cols - 1 for _, c in bad)
assert n > 0 and edge > n // 2, (n, edge)
print(n, "maps")
PY
    # a map the reader must refuse: cells that do not fit rows x cols
    python3 - "$T/stride2/report.json" "$T/badmap.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d["results"] if r["verdict"] == "FAIL")
r["worst"]["error_map"]["cells"] = r["worst"]["error_map"]["cells"][:-2]
json.dump(d, open(sys.argv[2], "w"))
PY
    "$PARITY" report "$T/badmap.json" >"$T/badmap.txt" 2>&1
    [ $? -eq 2 ] && grep -q 'error_map.cells' "$T/badmap.txt" && ok || no "a bad error map was read: $(head -2 "$T/badmap.txt")"
else
    skip "python3 absent: error maps not checked"
fi

run_plugin chan8
"$PARITY" report "$T/chan8/report.json" --groups >"$T/g2.txt" 2>&1
grep -Eq '^conv2d on tp_chan8: [1-9][0-9]* of [0-9]+ with input channels % 8 != 0 fail, 0 of [1-9][0-9]* others$' \
    "$T/g2.txt" && ok || no "channel bug not named by the groups: $(cat "$T/g2.txt")"

"$PARITY" run --suite quick -o relu -b cpu --no-progress --out "$T/clean" >/dev/null 2>&1
"$PARITY" report "$T/clean/report.json" --groups >"$T/g3.txt" 2>&1
[ "$(cat "$T/g3.txt")" = "no failures" ] && ok || no "a clean report's groups: $(cat "$T/g3.txt")"

finish
