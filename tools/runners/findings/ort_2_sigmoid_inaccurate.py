"""ONNX Runtime 1.32 finding 2: Sigmoid is inaccurate for negative inputs (docs/findings.md, ONNX Runtime 2).
The error is absolute, up to about 1e-7 (small results come out as multiples of 2^-25), so the relative error
grows as sigmoid(x) shrinks: 1e-5 at x = -5, 2e-4 at x = -8, 17% at x = -15, and from about x = -17 the result is
0 where sigmoid(x) is a normal f32 (sigmoid(-50) = 1.9e-22). parity's budget is a few ULP (relative).
Model: parity's export of sigmoid(x=[16])#seed=1."""
import os, sys
import numpy as np
from findings_common import ort_run


def run(x, opt):
    return ort_run("ort_2_sigmoid.onnx", [x], opt)

x = np.array([-1, -2, -5, -8, -10, -15, -20, -50, -87, 1, 2, 5, 8, 0, 0.5, -0.5], np.float32)
want = 1 / (1 + np.exp(-x.astype(np.float64)))
worst = 0.0
for opt in (1, 0):
    got = run(x, opt)
    rel = np.abs(got - want) / want
    worst = max(worst, rel.max())
    print(f"opt={opt}")
    for xi, g, w, r in zip(x[:9], got, want, rel):
        print(f"  sigmoid({xi:g}) = {g:.9g}, want {w:.9g}, relative error {r:.2g}")
ok = worst > 1e-5
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
