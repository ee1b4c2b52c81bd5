"""ncnn 1.0.20261020 finding 9: the CPU's sign (UnaryOp 20), HardSwish and Softmax lose NaN: sign(NaN) = 0,
hardswish(NaN) = 0, a Softmax row holding a NaN is 0 everywhere (NaN: docs/ops.md); GELU(-inf) is NaN (-0); and
UnaryOp sin and cos of huge arguments (|x| near FLT_MAX, 1e30) are NaN or inf where the result is in [-1, 1]
(docs/findings.md, ncnn 9). One layer each, on the inputs below; the right answer is float64 numpy's."""
import math, sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([np.nan, -np.inf, np.inf, 3.0e38, -2.5e38, 1.0e30, 2.0, -1.0], np.float32)
xd = x.astype(np.float64)
with np.errstate(all="ignore"):
    hsw = np.where(np.isnan(xd), np.nan, np.where(xd <= -3, 0.0, np.where(xd >= 3, xd, xd * (xd + 3) / 6)))
    gelu = np.array([v if math.isnan(v) else (-0.0 if v == -math.inf else
                     v * 0.5 * (1 + math.erf(v / math.sqrt(2))) if math.isfinite(v) else v) for v in xd])
    smax = np.full_like(xd, np.nan)  # a row holding a NaN: every element NaN
    cases = [("sign", "UnaryOp 0=20", np.sign(xd), x), ("hardswish", "HardSwish 0=1.66666672e-01 1=5.0e-01", hsw, x),
             ("gelu", "GELU", gelu, x), ("softmax", "Softmax 0=0 1=1", smax, x),
             ("sin", "UnaryOp 0=9", np.sin(xd[3:]), x[3:]), ("cos", "UnaryOp 0=10", np.cos(xd[3:]), x[3:])]
bad = {}
for name, line, want, xin in cases:
    got = ncnn_run(ncnn_layer(line, len(xin)), xin).astype(np.float64)
    for v, g, w in zip(xin, got, want):
        same = (math.isnan(g) and math.isnan(w)) or g == w or \
            (math.isfinite(w) and math.isfinite(g) and abs(g - w) <= 1e-5 * max(abs(w), 1e-30))
        if not same:
            bad[name] = bad.get(name, 0) + 1
            print(f"  {name}({v:g}) = {g:.9g}, want {w:.9g}")
print(f"wrong: {bad}")
ok = all(k in bad for k in ("sign", "hardswish", "gelu", "softmax", "sin", "cos"))
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
