"""OpenVINO 2026.4 finding 12: with INFERENCE_PRECISION_HINT bf16, a 3x3 convolution with dilation 2 (padding 2) gives
NaN at outputs whose taps do not read a non-finite input element: one +inf in the input turns outputs NaN that the
definition (and the plugin in f32) leaves finite, as if the kernel multiplied the skipped positions between the
dilated taps by zero weights (0 x inf = NaN). parity's quick case conv2d(x=[2,3,6,7],d=2,in=hazard:nan_inf) has 38
such elements. Built here with OpenVINO's own opset 13: a 1x3x6x7 input of ones with +inf at (0, 0, 2, 3), weights of
ones (docs/findings.md, OpenVINO 12)."""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

X = np.ones((1, 3, 6, 7), np.float32)
X[0, 0, 2, 3] = np.inf
W = np.ones((3, 3, 3, 3), np.float32)


def run(prec):
    p = ops.parameter(list(X.shape), ov.Type.f32)
    y = ops.convolution(p, ops.constant(W), [1, 1], [2, 2], [2, 2], [2, 2])
    cfg = {"INFERENCE_PRECISION_HINT": prec, "INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1"}
    cm = ov.Core().compile_model(ov.Model([y], [p]), "CPU", cfg)
    return cm([X])[cm.outputs[0]]


# which outputs read the +inf: those (oh, ow) with oh - 2 + 2 i = 2 and ow - 2 + 2 j = 3 for taps i, j in 0..2
reads = np.zeros((6, 7), bool)
for i in range(3):
    for j in range(3):
        oh, ow = 2 + 2 - 2 * i, 3 + 2 - 2 * j
        if 0 <= oh < 6 and 0 <= ow < 7:
            reads[oh, ow] = True
bad = False
for prec in ("f32", "bf16"):
    y = run(prec)
    nan_outside = int(np.isnan(y[0][:, ~reads]).sum())
    print(f"{prec:<4s}: {int(np.isnan(y).sum())} NaN, {int(np.isinf(y).sum())} inf; NaN at outputs that do not read "
          f"the inf: {nan_outside} (of {3 * int((~reads).sum())})")
    bad |= prec == "bf16" and nan_outside > 0
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
