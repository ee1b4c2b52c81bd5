"""ONNX Runtime 1.32 finding 8: with graph optimizations on, a QDQ graph Transpose -> cubic Resize (scales
[1, 1, 2, 0.75], valid: ONNX Runtime's cubic kernel takes NCHW scales with the two outer ones 1) -> Transpose fails at
session creation: the optimizer moves the Resize to NHWC, scales [1, 2, 0.75, 1], which its own cubic kernel refuses
("'Cubic' mode only supports ... other scales >= 1"); with optimizations off it runs (docs/findings.md, ONNX
Runtime 8). Model: parity's export of a reduced fuzz graph (permute, dequantize, upsample_bicubic2d, quantize,
permute; qs8)."""
import sys
import numpy as np
from findings_common import ort_run

x = np.full((1, 2, 1, 1), -13, np.int8)
res = {}
for opt in (0, 1):
    try:
        res[opt] = ort_run("ort_8_resize_cubic_nhwc.onnx", [x], opt)
        print(f"opt={opt}: runs, output {res[opt].ravel().tolist()}")
    except Exception as e:
        print(f"opt={opt}: {' '.join(str(e).split())[:400]}")
ok = 0 in res and 1 not in res
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
