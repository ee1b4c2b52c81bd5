"""ONNX Runtime 1.32 finding 4: Tanh of a subnormal input is not the input (docs/findings.md, ONNX Runtime 4).
For |x| < 2^-126, tanh(x) = x to far better than f32 precision; ONNX Runtime returns values 5e-4 relative off (about
75 steps of the subnormal spacing 1.4e-45), where parity's budget is a couple of subnormal steps. Model: parity's
export of tanh(x=[2,3,6,7],in=hazard:subnormal)#seed=1 (one Tanh node)."""
import os, sys
import numpy as np
from findings_common import ort_run


def run(x, opt):
    return ort_run("ort_4_tanh.onnx", [x], opt)

vals = np.array([-2.082876e-40, 1.0e-40, 5.0e-39, -1.1e-38, 1.4e-45], np.float32)
x = np.zeros((2, 3, 6, 7), np.float32)
x.flat[:len(vals)] = vals
want = np.tanh(vals.astype(np.float64))
step = 2.0 ** -149
worst = 0.0
for opt in (1, 0):
    got = run(x, opt).flat[:len(vals)].astype(np.float64)
    print(f"opt={opt}")
    for v, g, w in zip(vals, got, want):
        print(f"  tanh({v:.9g}) = {g:.9g}, want {w:.9g}: {abs(g - w) / step:.0f} subnormal steps off")
    worst = max(worst, (np.abs(got - want) / step).max())
ok = worst > 4
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
