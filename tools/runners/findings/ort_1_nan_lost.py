"""ONNX Runtime 1.32 finding 1: ReduceMax, ReduceMin, MaxPool and ArgMax lose NaN (docs/findings.md, ONNX Runtime 1).
A NaN input must give NaN, and ArgMax / ArgMin the index of the first NaN (docs/ops.md). The models are parity's
exports of amax(x=[2,3,6,7],in=hazard:nan_inf)#seed=1 (ReduceMax over the last axis), max_pool2d(...) (MaxPool
2x2/2) and argmax(...) (ArgMax along the last axis, then a Cast to int32)."""
import os, sys
import numpy as np
from findings_common import ort_run


def run(model, x, opt):
    return ort_run(model, [x], opt)

x = np.zeros((2, 3, 6, 7), np.float32)
x[0, 0, 0] = [1, 2, np.nan, 3, 4, 5, 6]       # NaN not first in the row
x[0, 0, 1] = [1, 2, 3, 4, 5, 6, 7]
x64 = x.astype(np.float64)
want_max = x64[0, 0, 0].max()                  # numpy propagates NaN: nan
want_pool = x64[0, 0, 0:2, 2:4].max()          # window [0:2, 2:4] holds the NaN: nan
bad = 0
for opt in (1, 0):
    got_max = run("ort_1_reducemax.onnx", x, opt)[0, 0, 0]
    got_pool = run("ort_1_maxpool.onnx", x, opt)[0, 0, 0, 1]
    print(f"opt={opt}: ReduceMax([1, 2, nan, 3, 4, 5, 6]) = {got_max} (want {want_max}); "
          f"MaxPool window [[nan, 3], [3, 4]] = {got_pool} (want {want_pool})")
    bad += (not np.isnan(got_max)) + (not np.isnan(got_pool))
    xa = np.zeros((2, 3, 6, 7), np.float32)
    xa[0, 0, 0, :2] = [1.0, np.nan]  # argmax along the last axis of the row [1, nan, 0, ...]: the NaN, index 1
    got_arg = run("ort_1_argmax.onnx", xa, opt)[0, 0, 0]
    print(f"opt={opt}: ArgMax([1, nan, 0, 0, 0, 0, 0]) = {got_arg} (want 1)")
    bad += got_arg != 1
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
