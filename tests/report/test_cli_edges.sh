# test_cli_edges.sh - what a new user meets first, end to end (cli/, the Makefile's install, the docs' commands):
#   - every example case ID in `run --help`, `show --help` and the README exists (`parity show ID` exits 0), and
#     `show` of a quick case says its origin is the quick suite;
#   - the README's list of built-in backends names every built-in backend `parity list backends` shows;
#   - usage errors: an unknown knob is named as such (exit 2, not "not usable"); a mistyped backend, op or model gets
#     "did you mean"; an unwritable --out stops before anything runs (exit 2); `run --html` writes the page;
#     `bench --micro` gives a value and unit per benchmark, or unsupported with the reason; cpu[profile=1] gives
#     per-node times to bench --nodes;
#     `list ops` keeps its columns aligned; counts of one are singular;
#   - `export` to JSON of a case whose constant holds -inf (attention's key-padding mask) writes "-inf" strings, and
#     the file runs and passes on cpu;
#   - `run --baseline B` exits with the diff's gate: 0 when the run's failures are all in B;
#   - the diff of runs with 3 timed runs says latency was not judged, and prints no "0 FAIL";
#   - `parity reduce FINDING` loads the plugin the finding names;
#   - a campaign prints what each backend ran, and warns when most graphs were UNSUPPORTED on one;
#   - a run whose stderr is not a terminal prints a progress line every PARITY_PROGRESS_S seconds (10 by default);
#   - `make install DESTDIR=...`: the installed libparity.a defines no global symbol outside par_; pkg-config finds the staged header without PKG_CONFIG_SYSROOT_DIR, its Version is the
#     ABI's, the docs' hand-build line builds the example plugin; the installed parity finds its cases, its simulated
#     libneuralnetworks.so (in PREFIX/lib/parity, not PREFIX/lib) and its header for repros under its own prefix,
#     never the build tree; a copied parity does not list the build tree's suites.
. tests/report/lib.sh

SRC=$(pwd)
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

# --- example IDs ----------------------------------------------------------------------------------------------------
ids=$({
    "$PARITY" run --help | sed -n "s/.*--case '\([^']*\)'.*/\1/p"
    "$PARITY" show --help | sed -n "s/.*e\.g\. '\([^']*\)'.*/\1/p"
    sed -n "s/.*--case '\([^']*\)'.*/\1/p; s/.*parity show '\([^']*\)'.*/\1/p" README.md
})
n_ids=0
for id in $ids; do
    n_ids=$((n_ids + 1))
    "$PARITY" show "$id" >"$T/show.txt" 2>&1 && ok || no "example ID '$id' does not exist: $(head -1 "$T/show.txt")"
done
[ $n_ids -ge 4 ] && ok || no "found $n_ids example IDs in the help texts and README (expected at least 4)"
"$PARITY" show 'relu(x=[3])#seed=1' 2>&1 | grep -q '^origin suite:quick$' && ok ||
    no "show of a quick case: $("$PARITY" show 'relu(x=[3])#seed=1' 2>&1 | grep '^origin')"

# --- export of infinite data ----------------------------------------------------------------------------------------
pad='sdpa(q=[1,2,7,16],k=[1,2,7,16],v=[1,2,7,16],mask=pad)#seed=1'
if "$PARITY" export "$pad" --out "$T/pad.json" >"$T/pad.log" 2>&1 && grep -q '"-inf"' "$T/pad.json"; then
    "$PARITY" run "$T/pad.json" -b cpu --out "$T/padrun" >"$T/padrun.log" 2>&1 && ok ||
        no "the exported -inf mask case does not pass on cpu: $(tail -2 "$T/padrun.log")"
else
    no "export of $pad: $(head -2 "$T/pad.log")"
fi

# --- README's built-in backends -------------------------------------------------------------------------------------
sed -n '/^Built-in backends:/,/^$/p' README.md >"$T/builtin.txt"
for be in $("$PARITY" list backends 2>/dev/null | awk '$4 == "built-in" {print $1}'); do
    grep -q "\`$be\`" "$T/builtin.txt" && ok || no "README's built-in backend list omits '$be'"
done

# --- usage errors ---------------------------------------------------------------------------------------------------
"$PARITY" run --suite quick -o relu -b 'cpu[threadz=2]' --no-progress --out "$T/k" >"$T/knob.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "unknown knob 'threadz'" "$T/knob.txt" && ! grep -q 'not usable' "$T/knob.txt" && ok ||
    no "unknown knob: exit $rc, $(cat "$T/knob.txt")"
"$PARITY" run --suite quick -o relu -b cpuu --no-progress --out "$T/k" >"$T/cpuu.txt" 2>&1
grep -q "did you mean 'cpu'" "$T/cpuu.txt" && ok || no "-b cpuu: $(cat "$T/cpuu.txt")"
"$PARITY" run --suite quick -o conv2dd -b cpu --no-progress --out "$T/k" >"$T/op.txt" 2>&1
grep -q "did you mean 'conv2d'" "$T/op.txt" && ok || no "-o conv2dd: $(cat "$T/op.txt")"
"$PARITY" bench --model mobilenet_v9 -b cpu >"$T/model.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "did you mean 'mobilenet_v2'" "$T/model.txt" && grep -q 'mobilenet_v3_small' "$T/model.txt" &&
    ok || no "bench --model mobilenet_v9: exit $rc, $(cat "$T/model.txt")"
# cpu[profile=1] times each step of a run and reports it as the device time (PAR_PROC_DEVICE_TIME), per node too, so
# bench --nodes shows where a model's time goes on the CPU; plain cpu reports none.
"$PARITY" bench cases/bench/relu64.json -b 'cpu[profile=1],cpu' --repeat 5 --warmup 1 --nodes --json "$T/prof.json" \
    >"$T/prof.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -Eq '^ +0 [^ ]+ +relu +[0-9.]+ ms' "$T/prof.txt" && ok || no "bench cpu[profile=1]: exit $rc, $(cat "$T/prof.txt")"
if [ $have_py = 1 ]; then
    python3 - "$T/prof.json" <<'PY' && ok || no "bench cpu[profile=1] JSON: $(cat "$T/prof.json")"
import json, sys
b = json.load(open(sys.argv[1]))["cases"][0]["backends"]
p, c = b[0], b[1]
assert 0 < p["device_median_ms"] <= p["median_ms"] * 1.0001 + 1e-9 and p["nodes"][0]["op"] == "relu", p
assert "device_median_ms" not in c and "nodes" not in c, c
PY
fi
# bench --micro runs each backend's micro-benchmark in a sandboxed child of its own: a value with its unit, or
# "unsupported" with the backend's reason (an unknown name), in the table and the JSON.
"$PARITY" bench --micro peak --micro nope -b cpu --threads 1 --json "$T/micro.json" >"$T/micro.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -Eq '^cpu +peak +[0-9.e+]+ +GFLOP/s$' "$T/micro.txt" &&
    grep -Eq '^cpu +nope +unsupported +.*nope' "$T/micro.txt" && ok || no "bench --micro: exit $rc, $(cat "$T/micro.txt")"
if [ $have_py = 1 ]; then
    python3 - "$T/micro.json" <<'PY' && ok || no "bench --micro JSON: $(cat "$T/micro.json")"
import json, sys
m = {e["name"]: e for e in json.load(open(sys.argv[1]))["micro"]}
assert m["peak"]["value"] > 0 and m["peak"]["unit"] == "GFLOP/s", m
assert "value" not in m["nope"] and "nope" in m["nope"]["error"], m
PY
fi
"$PARITY" run --suite quick -o relu -b cpu --no-progress --out /dev/null/x >"$T/out.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && ! grep -q '^conformance:' "$T/out.txt" && grep -q '/dev/null/x' "$T/out.txt" && ok ||
    no "--out /dev/null/x: exit $rc (expected 2, before running): $(tail -2 "$T/out.txt")"
"$PARITY" run --suite quick -o relu -b cpu --no-progress --out "$T/h" --html "$T/h/page.html" >"$T/html.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '<html' "$T/h/page.html" 2>/dev/null && ok || no "run --html: exit $rc, $(tail -2 "$T/html.txt")"
# list ops: the inputs column starts at the same place on every line
"$PARITY" list ops | awk '{ i = index($0, " " $2 " "); print i }' | sort -u >"$T/cols.txt"
[ "$(wc -l <"$T/cols.txt")" -eq 1 ] && ok || no "list ops: the inputs column starts at $(tr '\n' ' ' <"$T/cols.txt")"
"$PARITY" merge "$T/h/report.json" -o "$T/merged.json" >"$T/merge.txt" 2>&1
grep -q ' on 1 backend ' "$T/merge.txt" && ok || no "merge of one backend: $(cat "$T/merge.txt")"

# --- run --baseline with known failures -----------------------------------------------------------------------------
fixture_report "$T/fx" || { no "fixture run"; finish; exit 1; }
fixture_report_baseline() {
    "$PARITY" run --suite quick -o relu,add,conv2d,softmax,linear -b 'cpu,qnnpack,tp_offbyone' \
        --plugin "$BUILD/tests/plugins/offbyone.so" --no-progress --out "$T/again" --baseline "$T/fx/report.json" \
        >"$T/again.log" 2>&1
}
fixture_report_baseline
rc=$?
grep -q '^parity diff: \(PASS\|WARN\)' "$T/again.log" && [ $rc -eq 0 ] && ok ||
    no "run --baseline with the baseline's own failures: exit $rc, $(grep '^parity diff' "$T/again.log")"
# the latency rows of a diff of 3-sample runs: not judged, and no "0 FAIL"
"$PARITY" diff "$T/fx/report.json" "$T/again/report.json" >"$T/lat.txt" 2>&1
grep -q '^  latency regression  *0  *not judged' "$T/lat.txt" && ! grep -q ' 0  *FAIL' "$T/lat.txt" &&
    grep -q '^latency: not judged' "$T/lat.txt" && ok || no "3-sample diff: $(grep -i latency "$T/lat.txt")"

# --- reduce a finding of a plugin -----------------------------------------------------------------------------------
"$PARITY" fuzz --plugin "$BUILD/tests/plugins/toggle.so" -b tp_toggle --count 2 --seed 3 --max-nodes 1 \
    --weights '*=0,relu=1' --no-reduce --no-progress --out "$T/fz" >"$T/fz.log" 2>&1
f=$(ls -d "$T"/fz/findings/*/ 2>/dev/null | head -1)
if [ -n "$f" ]; then
    "$PARITY" reduce "$f" --out "$T/red" --time 20 >"$T/red.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] && [ -s "$T/red/reduced.json" ] && ok || no "reduce FINDING without --plugin: exit $rc, $(tail -2 "$T/red.log")"
else
    no "the toggle campaign made no finding: $(tail -2 "$T/fz.log")"
fi

# --- a campaign says what each backend ran --------------------------------------------------------------------------
# tp_offbyone runs 7 ops: most generated graphs are UNSUPPORTED there, and the summary says so
"$PARITY" fuzz --plugin "$BUILD/tests/plugins/offbyone.so" -b tp_offbyone --count 60 --seed 1 --no-reduce \
    --no-progress --out "$T/fz2" >"$T/fz2.log" 2>&1
grep -Eq '^  tp_offbyone: [0-9]+ graphs? ran \([0-9]+ passed, [0-9]+ not passing\), [0-9]+ unsupported$' "$T/fz2.log" &&
    grep -q 'warning: .* UNSUPPORTED on tp_offbyone.*--weights' "$T/fz2.log" && ok ||
    no "the campaign's summary hides what the backend ran: $(cat "$T/fz2.log")"

# --- progress lines off a terminal ------------------------------------------------------------------------------------
PARITY_PROGRESS_S=0.2 "$PARITY" run --suite quick -o conv2d -b cpu,qnnpack --out "$T/pg" >/dev/null 2>"$T/pg.err"
grep -Eq '^parity: [0-9]+/[0-9]+ records \([0-9]+%\), [0-9]+ not passing, [0-9.]+ records/s, [0-9]+ s elapsed' \
    "$T/pg.err" && ok || no "no progress line on a run whose stderr is a file: $(head -3 "$T/pg.err")"
PARITY_PROGRESS_S=0.2 "$PARITY" run --suite quick -o conv2d -b cpu --no-progress --out "$T/pg2" >/dev/null 2>"$T/pg2.err"
grep -q 'records/s' "$T/pg2.err" && no "--no-progress still prints progress lines" || ok

# --- install --------------------------------------------------------------------------------------------------------
ST="$T/stage"
PFX=/opt/parity-test
env -u MAKEFLAGS -u MAKELEVEL make -s install DESTDIR="$ST" PREFIX="$PFX" BUILD="$BUILD" >"$T/install.log" 2>&1 ||
    no "make install: $(tail -3 "$T/install.log")"
I="$ST$PFX"
# the installed library's global symbols are the par_ API only: a program that links it meets none of the modules'
# own names (cpu_, vk_, gen_, ...)
if command -v nm >/dev/null 2>&1; then
    other=$(nm -g --defined-only "$I/lib/parity/libparity.a" 2>/dev/null | awk 'NF == 3 && $3 !~ /^par_/ { print $3 }')
    n_par=$(nm -g --defined-only "$I/lib/parity/libparity.a" 2>/dev/null | awk 'NF == 3 && $3 ~ /^par_/' | wc -l)
    [ -z "$other" ] && [ "$n_par" -gt 100 ] && ok ||
        no "installed libparity.a: $n_par par_ symbols, others: $(echo $other | cut -c1-200)"
fi
if command -v pkg-config >/dev/null 2>&1; then
    cflags=$(PKG_CONFIG_PATH="$I/lib/pkgconfig" pkg-config --cflags parity-backend 2>&1)
    abi=$(sed -n 's/^#define PAR_BACKEND_API_VERSION \([0-9]*\)u*$/\1/p' core/parity_backend.h)
    [ "$(PKG_CONFIG_PATH="$I/lib/pkgconfig" pkg-config --modversion parity-backend)" = "$abi" ] && ok ||
        no "parity-backend.pc's Version is not the ABI's ($abi)"
    cc -std=c11 -fPIC -shared $cflags backends/example/*.c -o "$T/libex.so" -lm >"$T/cc.log" 2>&1 && ok ||
        no "the example plugin with pkg-config --cflags of the staged install ($cflags): $(head -3 "$T/cc.log")"
else
    skip "pkg-config not installed"
fi
# the docs' hand-build line, run as written (output into $T)
awk '/Before `make` is available/ { on = 1; next } on && /^```sh$/ { inb = 1; next } inb && /^```$/ { exit }
     inb { print }' docs/writing-a-backend.md |
    sed "s|-o /tmp/libparity_example.so|-o $T/libhand.so|" >"$T/hand.sh"
[ -s "$T/hand.sh" ] && sh "$T/hand.sh" >"$T/hand.log" 2>&1 && [ -s "$T/libhand.so" ] && ok ||
    no "docs/writing-a-backend.md's hand-build line: $(cat "$T/hand.sh" "$T/hand.log" 2>/dev/null | head -5)"
[ -f "$I/lib/parity/libneuralnetworks.so" ] && [ ! -e "$I/lib/libneuralnetworks.so" ] && ok ||
    no "the simulated libneuralnetworks.so belongs in PREFIX/lib/parity/, not PREFIX/lib: $(ls "$I/lib" | tr '\n' ' ')"
"$I/bin/parity" list suites >"$T/suites.txt" 2>&1
grep -q "$I/share/parity/cases" "$T/suites.txt" && ! grep -q "$SRC" "$T/suites.txt" && ok ||
    no "installed parity's suites: $(grep models "$T/suites.txt")"
"$I/bin/parity" list backends >"$T/be.txt" 2>&1
grep -q '^nnapi  *[a-z0-9+]*  *yes' "$T/be.txt" && ok || no "installed parity's nnapi: $(grep nnapi "$T/be.txt" | cut -c1-200)"
if [ -n "$f" ]; then
    "$I/bin/parity" reduce "$f" --plugin "$BUILD/tests/plugins/toggle.so" --out "$T/ired" --time 20 >"$T/ired.log" 2>&1
    line=$(sed -n 's/^repro: *\(.*\) && .*/\1/p' "$T/ired.log")
    case "$line" in
    *"$SRC"*) no "installed parity's repro names the build tree: $line" ;;
    *"-I$I/include/parity"*) (eval "$line") >"$T/icc.log" 2>&1 && ok || no "the installed repro line fails: $line" ;;
    *) no "installed parity's repro line: '$line'" ;;
    esac
fi
mkdir -p "$T/copy" && cp "$PARITY" "$T/copy/parity"
"$T/copy/parity" list suites 2>&1 | grep -q "$SRC" && no "a copied parity lists the build tree's suites" || ok

finish
