"""ncnn 1.0.20261020 finding 8: the CPU's UnaryOp log, reciprocal and rsqrt, Sigmoid and Clip get zeros, infinities,
subnormals and NaN wrong (IEEE and docs/ops.md in brackets): log(0) = NaN (-inf), log(inf) = 88.72 (inf), log(1e-45)
= -87.34 (-103.28: a subnormal taken as the smallest normal), log(NaN) = -87.34 (NaN); 1 / 0 = NaN (inf), 1 / inf =
NaN (0); rsqrt(0) = NaN (inf), rsqrt(inf) = NaN (0); sigmoid(NaN) = 4.2e-39 (NaN); clip(NaN, -1, 1) = -1 (NaN)
(docs/findings.md, ncnn 8). One layer each on [0, -0, 1e-45, inf, nan, 2, -1, 0.5]."""
import math, sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([0.0, -0.0, 1e-45, np.inf, np.nan, 2.0, -1.0, 0.5], np.float32)
xd = x.astype(np.float64)
with np.errstate(all="ignore"):
    cases = [("log", "UnaryOp 0=8", np.log(xd)), ("reciprocal", "UnaryOp 0=15", 1.0 / xd),
             ("rsqrt", "UnaryOp 0=6", 1.0 / np.sqrt(xd)), ("sigmoid", "Sigmoid", 1.0 / (1.0 + np.exp(-xd))),
             ("clip", "Clip 0=-1.0 1=1.0", np.clip(xd, -1, 1))]
bad = 0
for name, line, want in cases:
    got = ncnn_run(ncnn_layer(line, len(x)), x).astype(np.float64)
    for v, g, w in zip(x, got, want):
        same = (math.isnan(g) and math.isnan(w)) or g == w or \
            (math.isfinite(w) and math.isfinite(g) and abs(g - w) <= 1e-6 * max(abs(w), 1e-30))
        if not same:
            bad += 1
            print(f"  {name}({v}) = {g:.9g}, want {w:.9g}")
print(f"{bad} wrong")
print("REPRODUCED" if bad >= 8 else "not reproduced")
sys.exit(0 if bad >= 8 else 1)
