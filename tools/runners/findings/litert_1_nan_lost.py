"""LiteRT 2.3 finding 1: NaN is lost by MAXIMUM (and MINIMUM, MAX_POOL_2D, REDUCE_MAX) with either kernel set, and
by EXP (and AVERAGE_POOL_2D) on the XNNPACK delegate (docs/findings.md, LiteRT 1). A NaN input must give NaN
(docs/ops.md). Models: parity's exports of maximum(...) and exp(x=[2,3,6,7],in=hazard:nan_inf)#seed=1 (NHWC)."""
import os, sys
import numpy as np
from findings_common import litert_run


run = litert_run

a = np.zeros((2, 6, 7, 3), np.float32)
b = np.zeros((2, 6, 7, 3), np.float32)
a.flat[:3] = [np.nan, 1.0, np.nan]
b.flat[:3] = [-1.5, np.nan, np.nan]
lost = 0
for delegate in ("xnnpack", "none"):
    m = run("litert_1_maximum.tflite", [a, b], delegate).flat[:3]
    e = run("litert_1_exp.tflite", [a], delegate).flat[:1]
    print(f"delegate={delegate}: MAXIMUM(nan, -1.5) = {m[0]}, MAXIMUM(1, nan) = {m[1]}, MAXIMUM(nan, nan) = {m[2]}; "
          f"EXP(nan) = {e[0]} (want nan for all: numpy {np.maximum(np.float64(np.nan), -1.5)}, "
          f"{np.exp(np.float64(np.nan))})")
    lost += int((~np.isnan(m)).sum() + (~np.isnan(e)).sum())
print("REPRODUCED" if lost else "not reproduced")
sys.exit(0 if lost else 1)
