#!/bin/sh
# check_nnapi.sh EXE OUTDIR JOBS - the `make check` step of the nnapi backend: the quick suite and the reduced cases of
# cases/regressions through the simulated libneuralnetworks.so on each device profile and on the oldest feature level, judged like every backend, then the
# records that did not pass compared with backends/nnapi/known_findings.txt: the semantic differences of NNAPI
# itself (Android's kernels, faithfully simulated) that the harness finds and docs/backends/nnapi.md describes.
# Every record must PASS, be UNSUPPORTED (skipped), or be a listed finding that still reproduces with its listed
# verdict; anything else, and a listed finding that no longer reproduces (fixed: take it off the list), fails.
# Count line: `conformance-nnapi: P passed, F failed, S skipped`, P counting PASS records and reproduced findings
# (each named above it). Without the built library: one skip with the reason, never a pass.
exe=$1 out=$2 jobs=$3
known=backends/nnapi/known_findings.txt
lib=$(dirname "$exe")/lib/libneuralnetworks.so
if [ ! -f "$lib" ]; then
    echo "SKIP conformance-nnapi: no simulated NNAPI library at $lib"
    echo "conformance-nnapi: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
specs='nnapi,nnapi[profile=npu-int8],nnapi[profile=gpu-fp16],nnapi[level=27]'
"$exe" run --suite quick cases/regressions -b "$specs" -j "$jobs" --no-progress --out "$out" >"$out.log" 2>&1
rc=$?
grep -v "^conformance: " "$out.log" | tail -n 25
if [ "$rc" -gt 1 ] || [ ! -f "$out/report.json" ]; then
    echo "conformance-nnapi: parity run exited $rc (output in $out.log)"
    echo "conformance-nnapi: 0 passed, 1 failed"
    exit 1
fi
exec python3 - "$out/report.json" "$known" <<'PY'
import json, sys
sys.path.insert(0, "tools")
from known_findings import load, compare  # the comparison with the list, shared with check_onednn.sh
report, known_path = sys.argv[1], sys.argv[2]
known = load(known_path, "conformance-nnapi")
r = json.load(open(report))
passed, failed, skipped = compare(r["results"], known, known_path, each=True)
# Partitioned graphs report their split (PAR_PROC_NOTE): on the npu-int8 profile, the quantized graphs whose float
# edges run on the CPU fallback must pass with a note naming both devices.
split = [x for x in r["results"] if x["backend"] == "nnapi[profile=npu-int8]" and x["verdict"] == "PASS"
         and "parity-npu-int8" in x.get("note", "") and "parity-reference" in x.get("note", "")]
if split:
    passed += 1
    print(f"SPLIT   {len(split)} partitioned records pass with their split, e.g. {split[0]['case']}: {split[0]['note']}")
else:
    failed += 1
    print("NOSPLIT no npu-int8 record passed with a note naming both the accelerator and the CPU fallback")
print(f"conformance-nnapi: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
