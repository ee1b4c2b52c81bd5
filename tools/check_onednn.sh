#!/bin/sh
# check_onednn.sh EXE OUTDIR JOBS - the `make check` step of the onednn backend: the quick suite on oneDNN 2.6 with
# each fpmath setting, judged like every backend, then the records that did not pass compared with
# backends/onednn/known_findings.txt: what oneDNN itself computes otherwise than parity's ops (docs/findings.md,
# "Findings in oneDNN 2.6", each with a direct-call repro under tools/). Every record must PASS, be UNSUPPORTED
# (skipped), or be a listed finding that still reproduces with its listed verdict; anything else, and a listed
# finding that no longer reproduces (take it off the list), fails.
# Count line: `conformance-onednn: P passed, F failed, S skipped`. Built without oneDNN: one skip, never a pass.
exe=$1 out=$2 jobs=$3
known=backends/onednn/known_findings.txt
if ! "$exe" list backends 2>/dev/null | grep -q '^onednn '; then
    echo "SKIP conformance-onednn: built without oneDNN (make deps installs libdnnl-dev)"
    echo "conformance-onednn: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
"$exe" run --suite quick -b 'onednn,onednn[fpmath=bf16]' -j "$jobs" --no-progress --out "$out" >"$out.log" 2>&1
rc=$?
grep -v "^conformance: " "$out.log" | grep -E '^(backend|onednn|ties|infinite)' | head -n 8
if [ "$rc" -gt 1 ] || [ ! -f "$out/report.json" ]; then
    echo "conformance-onednn: parity run exited $rc (output in $out.log)"
    echo "conformance-onednn: 0 passed, 1 failed"
    exit 1
fi
exec python3 tools/known_findings.py "$out/report.json" "$known" conformance-onednn
