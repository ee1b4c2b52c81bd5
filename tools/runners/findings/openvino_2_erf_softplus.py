"""OpenVINO 2026.4 finding 2: Erf and SoftPlus on the CPU plugin in f32 are off by far more than f32 rounding:
Erf by up to 36 times parity's f32 budget on ordinary inputs and returns 0 for subnormal inputs (erf(x) = 2x/sqrt(pi)
there); SoftPlus has an absolute error of about 1e-6 where log(1 + e^x) is small, so softplus(-20) = -1.9e-6 < 0
(docs/findings.md, OpenVINO 2). The script prints
the error in units of the f32 result's ulp against float64."""
import math, sys
import numpy as np
from findings_common import openvino_run


def unary(op):
    def build(ops, ov):
        p = ops.parameter([len(X)], ov.Type.f32)
        return [op(ops, p)], [p]
    return build


def ulps(got, want):
    return abs(float(got) - want) / float(np.spacing(np.float32(abs(want)) if want else np.float32(1e-45)))


X = np.array([0.1, 0.5, 1.0, 1.7, 2.5, 1e-40, -20.0, -16.0], np.float32)
erf = openvino_run(unary(lambda ops, p: ops.erf(p)), [X])
sp = openvino_run(unary(lambda ops, p: ops.softplus(p)), [X])
worst_erf = worst_sp = 0.0
for x, e, s in zip(X, erf, sp):
    we, ws = math.erf(float(x)), math.log1p(math.exp(float(x)))
    ue, us = ulps(e, we), ulps(s, ws)
    worst_erf, worst_sp = max(worst_erf, ue), max(worst_sp, us)
    print(f"x={float(x):<10.3g} erf {float(e):.9g} (want {we:.9g}, {ue:.1f} ulp)   "
          f"softplus {float(s):.9g} (want {ws:.9g}, {us:.1f} ulp)")
print(f"worst: erf {worst_erf:.1f} ulp, softplus {worst_sp:.1f} ulp (a correctly rounded f32 result is within 0.5)")
bad = worst_erf > 4 or worst_sp > 4
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
