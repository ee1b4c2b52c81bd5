"""ONNX Runtime 1.32 finding 7: ConvTranspose refuses an output_padding that is less than the dilation but not less
than the stride ("output_padding (1) may be too large for stride (1)"), which ONNX's ConvTranspose and PyTorch's
conv_transpose2d both define: the output is one column longer, computed like the others (docs/findings.md, ONNX
Runtime 7). Model: parity's export of a conv_transpose2d of a [1,1,3,3] input by a [1,1,2,2] kernel, stride 1,
dilation [1,2], output_padding [0,1] (one ConvTranspose node; OpenVINO runs the same file)."""
import sys
import numpy as np
from findings_common import ort_run

w = np.array([0.52609265, 0.43282476, -0.014926165, 0.07323961], np.float32).reshape(2, 2)
x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3) / 8 - 0.5
# ONNX's output shape: stride (in - 1) + output_padding + dilation (k - 1) + 1 = [4, 6]
want = np.zeros((4, 6))
for ih in range(3):
    for iw in range(3):
        for kh in range(2):
            for kw in range(2):
                want[ih + kh, iw + 2 * kw] += float(x[0, 0, ih, iw]) * float(w[kh, kw])
print("want (float64, ONNX's definition):", np.array2string(want, precision=4).replace("\n", ""))
bad = 0
for opt in (1, 0):
    try:
        got = ort_run("ort_7_convtranspose_output_padding.onnx", [x], opt)
        print(f"opt={opt}: got {np.array2string(got[0, 0], precision=4)}".replace("\n", ""))
        bad += got.shape != (1, 1, 4, 6) or not np.allclose(got[0, 0], want, atol=1e-5)
    except Exception as e:
        print(f"opt={opt}: {str(e).splitlines()[0][:300]}")
        bad += 1
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
