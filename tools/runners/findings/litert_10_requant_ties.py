"""LiteRT 2.3 finding 10 (a semantic difference, not a wrong result): the built-in int8 FULLY_CONNECTED rounds the
exact ties of gemmlowp's requantization (the fixed-point multiplier, then a rounding right shift) half up, where
gemmlowp (and TFLite's reference MultiplyByQuantizedMultiplier) rounds them half away from zero; CONV_2D rounds
them half to even and ADD half away from zero, so no one declared scheme describes the built-in kernels
(docs/findings.md, LiteRT 10). Model: parity's export of linear(in=[3,8],w=[17,8],bias=0,dt=qs8)#seed=1: x (scale
2/255, zero point 0) x w^T (int8 [17, 8], scale 0.0035355, zero point 0) -> y (scale 4/255, zero point 0)."""
import math, os, sys
import numpy as np
from findings_common import litert_interpreter

it = litert_interpreter("litert_10_fc.tflite", "none")
t = {d["name"]: d for d in it.get_tensor_details()}
w = it.get_tensor(t["w"]["index"]).astype(np.int64)
sx, sw, sy = (float(np.float32(t[n]["quantization"][0])) for n in ("x_q", "w", "y_q"))
frac, exp = math.frexp(sx * sw / sy)                  # gemmlowp's QuantizeMultiplier: M = m0 * 2^(exp - 31)
m0, shift = round(frac * (1 << 31)), -exp
def high_mul(a):                                       # SaturatingRoundingDoublingHighMul(a, m0)
    p = a * m0
    return int((p + ((1 << 30) if p >= 0 else 1 - (1 << 30))) / (1 << 31))   # C division: toward zero
ties = []                                              # x = [k, 0, ...]: acc = k * w[j, 0]; exact ties below zero
for k in range(-127, 128):
    for j in range(w.shape[0]):
        h = high_mul(k * int(w[j, 0]))
        if h < 0 and h & ((1 << shift) - 1) == 1 << (shift - 1):
            ties.append((k, j, h / (1 << shift)))
x = np.zeros((3, 8), np.float32)
for r, (k, j, exact) in enumerate(ties[:3]):
    x[r, 0] = np.float32(k * sx)                       # quantizes back to exactly k
it.set_tensor(it.get_input_details()[0]["index"], x)
it.invoke()
y = np.round(it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64) / sy)
up = 0
for r, (k, j, exact) in enumerate(ties[:3]):
    got = y[r, j]
    print(f"x_q[0] = {k}, w[{j}, 0] = {w[j, 0]}: acc {k * w[j, 0]}, gemmlowp's exact tie {exact:+.1f}: got {got:+.0f} "
          f"(half away from zero: {math.floor(exact):+d}, half up: {math.ceil(exact):+d})")
    up += got == math.ceil(exact)
ok = len(ties) > 0 and up == min(len(ties), 3)
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
