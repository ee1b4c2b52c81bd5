"""OpenVINO 2026.4 finding 11: with INFERENCE_PRECISION_HINT bf16, attention written out as ops, Softmax(q k^T * scale
+ mask) v with an additive mask of shape [1, 1, 1, S] holding -inf for padded keys (parity's sdpa with mask=pad, as
exported to ONNX: Transpose, MatMul, Mul, Add, Softmax, MatMul), which the CPU plugin compiles into one Subgraph (its
snippets MHA), returns garbage: values up to 1e36 and NaN where every result lies in [-1, 1] (a convex combination of
v's rows). The same model in f32 is right; in bf16 it is garbage whatever the masked entries hold (-inf, or -1: not
an infinity's doing), and plausible with a mask of zeros. Built
here with OpenVINO's own opset 13; q, k, v uniform in [-1, 1], shapes [1, 2, 7, 16], keys 4-6 masked
(docs/findings.md, OpenVINO 11)."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

rng = np.random.default_rng(1)
Q, K, V = (rng.uniform(-1, 1, (1, 2, 7, 16)).astype(np.float32) for _ in range(3))


def model(neg):
    p = [ops.parameter([1, 2, 7, 16], ov.Type.f32) for _ in range(3)]
    mask = np.zeros((1, 1, 1, 7), np.float32)
    mask[..., 4:] = neg
    s = ops.matmul(p[0], ops.transpose(p[1], ops.constant(np.array([0, 1, 3, 2], np.int64))), False, False)
    s = ops.add(ops.multiply(s, ops.constant(np.float32(0.25))), ops.constant(mask))
    return ov.Model([ops.matmul(ops.softmax(s, -1), p[2], False, False)], p)


def run(neg, prec):
    cfg = {"INFERENCE_PRECISION_HINT": prec, "INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1"}
    cm = ov.Core().compile_model(model(neg), "CPU", cfg)
    return cm([Q, K, V])[cm.outputs[0]]


s = Q.astype(np.float64) @ K.astype(np.float64).transpose(0, 1, 3, 2) * 0.25
s[..., 4:] = -np.inf
w = np.exp(s - s.max(-1, keepdims=True))
want = (w / w.sum(-1, keepdims=True)) @ V.astype(np.float64)
bad = False
for neg, prec in ((-np.inf, "f32"), (-np.inf, "bf16"), (-1.0, "bf16")):
    y = run(neg, prec)
    err = float(np.nanmax(np.abs(y - want))) if not np.isnan(y).any() else float("nan")
    print(f"mask {neg:<6g} {prec:<4s}: max |y| {float(np.nanmax(np.abs(y))):.3g}, NaN {int(np.isnan(y).sum())}"
          + (f", max error {err:.3g} against float64" if neg == -np.inf else ""))
    if prec == "bf16" and neg == -np.inf:
        bad = not (np.abs(y) <= 1.01).all()
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
