"""OpenVINO 2026.4 finding 1: NaN is lost by Relu, Clamp, Maximum, Minimum, ReduceMax, MaxPool, Greater, Exp and
SoftMax on the CPU plugin (docs/findings.md, OpenVINO 1). A NaN input must give NaN (a comparison with NaN false,
ArgMax / TopK the index of the first NaN: docs/ops.md)."""
import sys
import numpy as np
from findings_common import openvino_run

x = np.array([1.0, np.nan, -2.0, 3.0], np.float32)


def unary(op):
    def build(ops, ov):
        p = ops.parameter([4], ov.Type.f32)
        return [op(ops, p)], [p]
    return build


cases = {
    "Relu": unary(lambda ops, p: ops.relu(p)),
    "Clamp(-1, 1)": unary(lambda ops, p: ops.clamp(p, -1.0, 1.0)),
    "Maximum(x, 0)": unary(lambda ops, p: ops.maximum(p, ops.constant(np.zeros(4, np.float32)))),
    "Minimum(x, 0)": unary(lambda ops, p: ops.minimum(p, ops.constant(np.zeros(4, np.float32)))),
    "Exp": unary(lambda ops, p: ops.exp(p)),
    "ReduceMax": unary(lambda ops, p: ops.reduce_max(p, ops.constant(np.array([0], np.int64)), True)),
    "SoftMax": unary(lambda ops, p: ops.softmax(p, 0)),
}
bad = 0
for name, build in cases.items():
    got = openvino_run(build, [x])
    nan_kept = np.isnan(got[0 if name == "ReduceMax" else 1])
    if name == "SoftMax":
        nan_kept = np.isnan(got).all()  # one NaN in the row makes every element NaN
    print(f"{name}([1, nan, -2, 3]) = {got}{'' if nan_kept else '   <- NaN lost'}")
    bad += not nan_kept


def greater(ops, ov):
    p = ops.parameter([4], ov.Type.f32)
    return [ops.convert(ops.greater(p, ops.constant(np.zeros(4, np.float32))), "f32")], [p]


g = openvino_run(greater, [x])
print(f"Greater([1, nan, -2, 3], 0) = {g} (want [1, 0, 0, 1]: a comparison with NaN is false)")
bad += g[1] != 0
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
