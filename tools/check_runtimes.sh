#!/bin/sh
# check_runtimes.sh EXE OUTDIR JOBS RUNTIME - the `make check` step of one runtime under test through its runner
# (docs/runners.md): the quick suite on its instances, judged like every backend, then the records that did not pass
# compared with backends/runner/known_RUNTIME.txt (tools/known_findings.py): what the runtime itself computes
# otherwise than parity's ops (docs/findings.md, "Findings in ONNX Runtime" / "in LiteRT" / "in OpenVINO" / "in
# ncnn" / "in ExecuTorch", each with a script of the runtime's own API under tools/runners/findings/). Every record
# must PASS, be UNSUPPORTED (skipped), or be a listed finding that still reproduces with its listed verdict; anything
# else, and a listed finding that no longer reproduces, fails. make check runs ort, litert and ncnn; make nightly
# (tools/nightly.sh) runs openvino (f32 and bf16), whose per-case compile is too slow for check; executorch runs on
# request. Where the runtime is not installed (no build/venv, or its package missing): one skip naming why, never a
# pass.
# With the suite run the reduced cases: every finding's (tools/runners/findings/*.json, the runtimes' bugs that fuzzing
# found outside the quick suite) and every fixed bug's (cases/regressions/*.json), about 20 cases, seconds, on every
# runtime but executorch (seconds a case): a finding that stops reproducing, or a new failure on one, fails the step.
# And the real models of cases/models/external.txt that the list names (a line whose case ID is the model's file name
# without its extension: ONNX Runtime's sigmoid on PP-OCRv4's detector, which `make run` meets in the default suite),
# where make deps fetched them (build/models/); one that is not there is a SKIP line, and its records are left out of
# the comparison. No localization (--no-localize): the step is about verdicts, and a failing model would be walked
# prefix by prefix.
exe=$1 out=$2 jobs=$3 rt=$4 opts=
reduced=$(ls tools/runners/findings/*.json cases/regressions/*.json)
case $rt in
ort) backends='ort,ort[opt=0]' ;;
litert) backends='litert,litert[delegate=none]' ;;
openvino) backends='openvino,openvino[precision=bf16]' ;; # the plugin compiles each case's model: make nightly's
ncnn) backends='ncnn' ;; # its CPU path in f32 (8 s); ncnn[vulkan=1] takes 213 s on lavapipe: docs/runners.md
executorch) backends='executorch' opts='--timeout 600' reduced= ;; # each worker's first case waits for torch's import
*) echo "check_runtimes.sh: unknown runtime '$rt'" >&2; exit 2 ;;
esac
known=backends/runner/known_$rt.txt
models= shapes= absent=
while read -r file shape; do
    case $file in '' | '#'*) continue ;; esac
    id=${file%.*}
    grep -q "^[^#]* $id\$" "$known" || continue
    if [ -f "build/models/$file" ]; then
        models="$models build/models/$file"
        for sh in $(echo "$shape" | tr ';' ' '); do shapes="$shapes --shape $sh"; done
    else
        echo "SKIP conformance-$rt: $id is listed in $known but build/models/$file is not there (make deps fetches it)"
        absent="$absent $id"
    fi
done <cases/models/external.txt
if [ -n "$absent" ]; then
    mkdir -p "$out"
    for id in $absent; do printf '/ %s$/d\n' "$id"; done >"$out.absent.sed"
    sed -f "$out.absent.sed" "$known" >"$out.known.txt"
    known=$out.known.txt
fi
why=$("$exe" list backends 2>/dev/null | awk -v n="$rt" '$1 == n && $3 != "yes" { sub(/.* -- /, ""); print; exit }')
if ! "$exe" list backends 2>/dev/null | awk -v n="$rt" '$1 == n && $3 == "yes" { f = 1 } END { exit !f }'; then
    echo "SKIP conformance-$rt: ${why:-no backend '$rt' in this build} (make deps installs the runtimes into build/venv)"
    echo "conformance-$rt: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
"$exe" run --suite quick $reduced $models $shapes -b "$backends" -j "$jobs" $opts --no-localize \
    --no-progress --out "$out" >"$out.log" 2>&1
rc=$?
grep -v "^conformance: " "$out.log" | grep -E "^(backend|$rt|ties|infinite)" | head -n 8
if [ "$rc" -gt 1 ] || [ ! -f "$out/report.json" ]; then
    echo "conformance-$rt: parity run exited $rc (output in $out.log)"
    echo "conformance-$rt: 0 passed, 1 failed"
    exit 1
fi
exec python3 tools/known_findings.py "$out/report.json" "$known" "conformance-$rt"
