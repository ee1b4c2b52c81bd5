"""ONNX Runtime 1.32 finding 6 (a semantic difference, not a wrong result): unfused QDQ (graph optimizations off)
runs DequantizeLinear, the float Add, QuantizeLinear; where the exact integer result is a tie (k + 1/2) the f32
roundings of the scales put it either side, so the ties come out half down and half up in one tensor, which no
requantization rule describes (docs/findings.md, ONNX Runtime 6). Model: parity's export of
add(a=[33],b=[1],dt=qu8)#seed=1: a, b quantized with scale 2/255 (f32), zero point 128; y = a + b quantized with
scale 4/255 (exactly twice the f32 input scale), zero point 128: y - 128 = (qa - 128 + qb - 128) / 2 exactly."""
import os, sys
import numpy as np
from findings_common import ort_run

S_IN, S_OUT = np.float32(0.007843137718737125), np.float32(0.01568627543747425)

def run(a, b, opt):
    return ort_run("ort_6_add_qdq.onnx", [a, b], opt)

qa = np.arange(-95, 128, 6)[:33]                   # odd sums with qb - 128 = 88: every element a tie
qb = 88
a = (qa * S_IN).astype(np.float32)                 # exact dequantized values: QuantizeLinear gives qa back
b = np.array([qb * S_IN], np.float32)
exact = (qa.astype(np.float64) + qb) / 2           # y - 128 in output steps, k + 1/2
got = np.round(run(a, b, 0).astype(np.float64) / float(S_OUT)).astype(int)
rules = {"half to even": 2 * np.round(exact / 2), "half up": np.ceil(exact), "half down": np.floor(exact),
         "half away from zero": np.sign(exact) * np.ceil(np.abs(exact)), "half toward zero": np.trunc(exact)}
print("opt=0, qa - 128, qb - 128 = %d, the exact (y - 128) and what came out:" % qb)
for i in range(len(qa)):
    print(f"  {qa[i]:+4d}  {exact[i]:+6.1f} -> {got[i]:+d}", end="\n" if i % 4 == 3 else "")
print()
for name, r in rules.items():
    print(f"{name}: {int((got == r).sum())} of {len(exact)} ties")
ok = all((got != r).any() for r in rules.values()) and (np.abs(got - exact) == 0.5).all()
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
