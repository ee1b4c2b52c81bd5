"""ncnn 1.0.20261020 finding 2: UnaryOp exp on the CPU never returns infinity or NaN: exp(89), exp(+inf) and exp(NaN)
all give 2.4061436e+38 (its exp_ps clamps the argument at 88.376 before the polynomial, and the clamp turns NaN into
the bound), where IEEE exp overflows to +inf and propagates NaN (docs/findings.md, ncnn 2). One UnaryOp (0=7)."""
import math, sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([88.0, 89.0, 100.0, np.inf, np.nan, -1.0], np.float32)
got = ncnn_run(ncnn_layer("UnaryOp 0=7", len(x)), x)
bad = 0
for v, g in zip(x, got):
    w = np.float32(math.exp(v)) if math.isfinite(v) and v < 88.8 else (np.inf if v > 0 else np.nan)
    same = (np.isnan(g) and np.isnan(w)) or g == w or (math.isfinite(w) and abs(g - w) <= 4e-7 * abs(w))
    bad += not same
    print(f"  exp({v}) = {g:.9g}, want {w:.9g}{'' if same else '   <-'}")
print("REPRODUCED" if bad >= 3 else "not reproduced")
sys.exit(0 if bad >= 3 else 1)
