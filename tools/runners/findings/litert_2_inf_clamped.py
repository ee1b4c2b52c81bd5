"""LiteRT 2.3 finding 2: the built-in kernels clamp a result of +-inf to +-FLT_MAX: ADD (and SUB, MUL, DIV,
CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D) with no fused activation apply the activation range [-FLT_MAX, FLT_MAX]
(docs/findings.md, LiteRT 2). The XNNPACK delegate keeps the infinity. Model: parity's export of
add(x=[2,3,6,7],in=hazard:nan_inf)#seed=1 (ADD, fused_activation_function NONE)."""
import os, sys
import numpy as np
from findings_common import litert_run


run = litert_run

a = np.zeros((2, 6, 7, 3), np.float32)
b = np.zeros((2, 6, 7, 3), np.float32)
a.flat[:3] = [-np.inf, np.inf, 3.0e38]
b.flat[:3] = [1.0, 2.0, 3.0e38]
want = a.flat[:3].astype(np.float64) + b.flat[:3]
want = np.where(np.abs(want) > np.finfo(np.float32).max, np.sign(want) * np.inf, want)   # f32 overflow: inf
bad = 0
for delegate in ("none", "xnnpack"):
    got = run("litert_2_add.tflite", [a, b], delegate).flat[:3]
    print(f"delegate={delegate}: -inf + 1 = {got[0]:.9g}, inf + 2 = {got[1]:.9g}, 3e38 + 3e38 = {got[2]:.9g} "
          f"(want {want[0]}, {want[1]}, {want[2]})")
    if delegate == "none":
        bad = int((got != want).sum())
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
