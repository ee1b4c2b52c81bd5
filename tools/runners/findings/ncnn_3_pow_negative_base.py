"""ncnn 1.0.20261020 finding 3: BinaryOp pow on the CPU computes exp(b * log(a)), so a negative base with an integer
exponent gives 2.4061436e+38 (log's NaN through exp's clamp, ncnn 2) where (-2)^3 = -8 (docs/findings.md, ncnn 3).
One BinaryOp (0=6, with_scalar b=3)."""
import sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([-2.0, -0.5, -3.0, 2.0, 3.0], np.float32)
got = ncnn_run(ncnn_layer("BinaryOp 0=6 1=1 2=3.0", len(x)), x)
bad = 0
for v, g in zip(x, got):
    w = float(v) ** 3
    same = abs(g - w) <= 1e-6 * abs(w)
    bad += not same
    print(f"  pow({v}, 3) = {g:.9g}, want {w:.9g}{'' if same else '   <-'}")
print("REPRODUCED" if bad >= 2 else "not reproduced")
sys.exit(0 if bad >= 2 else 1)
