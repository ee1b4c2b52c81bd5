"""ONNX Runtime 1.32 finding 3: Softsign(-inf) is NaN (the limit is -1) and Softsign of a value near FLT_MAX is
1.00000024, above 1 (docs/findings.md, ONNX Runtime 3). Model: parity's export of
softsign(x=[2,3,6,7],in=hazard:nan_inf)#seed=1 (one Softsign node)."""
import os, sys
import numpy as np
from findings_common import ort_run


def run(x, opt):
    return ort_run("ort_3_softsign.onnx", [x], opt)

vals = np.array([-np.inf, np.inf, 2.9985184e38, -3.3e38, 2.0e38, 2.0], np.float32)
x = np.zeros((2, 3, 6, 7), np.float32)
x.flat[:len(vals)] = vals
v64 = vals.astype(np.float64)
want = np.where(np.isinf(v64), np.sign(v64), v64 / (1 + np.abs(np.where(np.isinf(v64), 0, v64))))
bad = 0
for opt in (1, 0):
    got = run(x, opt).flat[:len(vals)]
    print(f"opt={opt}")
    for v, g, w in zip(vals, got, want):
        print(f"  softsign({v:g}) = {g:.9g}, want {np.float32(w):.9g}")
    bad += int(np.isnan(got).any() or (np.abs(got) > 1).any())
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
