"""ncnn 1.0.20261020 finding 4: Softplus on the CPU is log(1 + exp(x)) evaluated as written, so it overflows to +inf
for x above about 88.7, where softplus(x) = x + log1p(exp(-x)) is x (docs/findings.md, ncnn 4). One Softplus."""
import math, sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([20.0, 88.0, 89.0, 99.2527924, 1000.0], np.float32)
got = ncnn_run(ncnn_layer("Softplus", len(x)), x)
bad = 0
for v, g in zip(x, got):
    w = float(v) + math.log1p(math.exp(-float(v)))
    same = math.isfinite(g) and abs(g - w) <= 1e-6 * abs(w)
    bad += not same
    print(f"  softplus({v}) = {g:.9g}, want {w:.9g}{'' if same else '   <-'}")
print("REPRODUCED" if bad >= 2 else "not reproduced")
sys.exit(0 if bad >= 2 else 1)
