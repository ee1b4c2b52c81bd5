#!/bin/sh
# run_all.sh - run every finding script of ONNX Runtime, LiteRT, OpenVINO, ncnn and ExecuTorch (docs/findings.md,
# "Findings in ONNX Runtime 1.32", "Findings in LiteRT 2.3", "Findings in OpenVINO 2026.4", "Findings in ncnn",
# "Findings in ExecuTorch 1.5") under
# build/venv/bin/python (PYTHON overrides it) and print one summary line.
# Exit 0 when every finding reproduces, 1 otherwise.
dir=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-$dir/../../../build/venv/bin/python}
n=0 ok=0 failed=
for f in $(ls "$dir"/ort_*.py | sort -V) $(ls "$dir"/litert_*.py | sort -V) $(ls "$dir"/openvino_*.py | sort -V) \
    $(ls "$dir"/ncnn_*.py 2>/dev/null | sort -V) $(ls "$dir"/executorch_*.py 2>/dev/null | sort -V); do
    name=$(basename "$f" .py)
    n=$((n + 1))
    if "$py" "$f" >/tmp/parity-finding.$$ 2>&1; then
        ok=$((ok + 1)); echo "REPRODUCED      $name"
    else
        failed="$failed $name"; echo "not reproduced  $name"; sed 's/^/    /' /tmp/parity-finding.$$ | tail -n 5
    fi
done
rm -f /tmp/parity-finding.$$
echo "findings: $ok of $n reproduced${failed:+; not reproduced:$failed}"
[ "$ok" -eq "$n" ]
