"""LiteRT 2.3 finding 3: GELU(-inf) is NaN, with either kernel set; the limit is -0 (docs/ops.md) (docs/findings.md,
LiteRT 3). Model: parity's export of gelu(x=[2,3,6,7],in=hazard:nan_inf)#seed=1 (one GELU node)."""
import os, sys
import numpy as np
from findings_common import litert_run


run = litert_run

from math import erfc
x = np.zeros((2, 6, 7, 3), np.float32)
x.flat[:4] = [-np.inf, np.inf, -10.0, 1.0]
def gelu(v):
    return -0.0 if v == -np.inf else (v if v == np.inf else 0.5 * v * erfc(-v / np.sqrt(2)))
want = [gelu(float(v)) for v in x.flat[:4]]
bad = 0
for delegate in ("xnnpack", "none"):
    got = run("litert_3_gelu.tflite", [x], delegate).flat[:4]
    print(f"delegate={delegate}: gelu(-inf, inf, -10, 1) = {[float(v) for v in got]} "
          f"(want {[float(f'{v:.8g}') for v in want]})")
    bad += int(np.isnan(got).any())
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
