"""OpenVINO 2026.4 finding 5: the CPU plugin's Sigmoid (and Swish, SiLU, through it) returns 0 for x <= -87, where
sigmoid(x) = e^x / (1 + e^x) is still a normal f32 number down to x = ln(FLT_MIN) = -87.34 (sigmoid(-87) =
1.65e-38): a normal result flushed to zero. Its Exp is right there and flushes only below -87.34. parity's quick
case silu(x=[1,16,8,8],x=wide) has x = -87.27461, where silu is -1.09e-36 and OpenVINO gives -0: 1.06 times the f32
budget, whose underflow allowance is FLT_MIN per rounding (docs/findings.md, OpenVINO 5). The inputs are laid out
in a tensor of 1024 elements, the case's size: the vectorized kernel is the one that cuts off."""
import math
import sys
import numpy as np
from findings_common import openvino_run

xs = [-80.0, -87.0, -87.27461, -87.3, -87.33, -87.5]
X = np.resize(np.array(xs, np.float32), 1024).astype(np.float32)


def one(op):
    def build(ops, ov):
        p = ops.parameter([len(X)], ov.Type.f32)
        return [op(ops, p)], [p]
    return build


sig = openvino_run(one(lambda ops, p: ops.sigmoid(p)), [X])
swish = openvino_run(one(lambda ops, p: ops.swish(p)), [X])
ex = openvino_run(one(lambda ops, p: ops.exp(p)), [X])
bad = 0
for i, x in enumerate(xs):
    ws = math.exp(x) / (1 + math.exp(x))
    print(f"x={x:<10g} Sigmoid {float(sig[i]):<11.4g} (want {ws:.4g})   Swish {float(swish[i]):<11.4g} "
          f"(want {x * ws:.4g})   Exp {float(ex[i]):<10.4g} (want {math.exp(x):.4g})")
    bad += ws >= 2.0 ** -126 and float(sig[i]) == 0
print(f"{bad} normal sigmoid results given as 0")
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
