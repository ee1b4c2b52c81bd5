"""ONNX Runtime 1.32 finding 5: the fused QLinearAveragePool (graph optimizations on) with ceil_mode=1 divides the
last window, which ceil_mode adds past the input's end, by the full kernel size (9) instead of the elements it
covers; with optimizations off (DequantizeLinear, AveragePool, QuantizeLinear) it is right (docs/findings.md,
ONNX Runtime 5). Model: parity's export of
avg_pool2d(in=[1,5,8,8],k=[3,3],s=[2,2],p=[0,0,0,0],ceil=1,cip=1,dt=qu8)#seed=1: x (qu8, scale 2/255, zero point
128) -> AveragePool 3x3 / 2, ceil_mode=1, count_include_pad=1 -> y (qu8, scale 2/255, zero point 128)."""
import os, sys
import numpy as np
from findings_common import ort_run


def run(x, opt):
    return ort_run("ort_5_avgpool_ceil.onnx", [x], opt)

x = np.full((1, 5, 8, 8), 0.4, np.float32)      # 0.4 / (2/255) = 51: exactly representable, q = 179
# Output row/column 3 starts at input index 6: the window covers rows/columns 6..7 only (2 of 3; there is no
# padding, so count_include_pad has nothing to count), and the average of a constant is the constant.
want = np.round(x.astype(np.float64)[0, 0, 6:8, 6:8].mean() / (2 / 255)) * (2 / 255)
got1, got0 = run(x, 1)[0, 0], run(x, 0)[0, 0]
print(f"y[0,0,3,3] opt=1 (QLinearAveragePool): {got1[3, 3]:.9g}, opt=0: {got0[3, 3]:.9g}, want {want:.9g}")
print(f"opt=1 row 3: {got1[3]}\nopt=0 row 3: {got0[3]}")
print(f"opt=1 / want at [3,3]: {got1[3, 3] / want:.4f} (4/9 = {4 / 9:.4f}), "
      f"at [0,3]: {got1[0, 3] / want:.4f} (6/9 = {6 / 9:.4f})")
ok = abs(got1[3, 3] - want) > 0.01 and abs(got0[3, 3] - want) < 0.01
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
