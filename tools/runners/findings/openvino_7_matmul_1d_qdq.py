"""OpenVINO 2026.4 finding 7: a dequantized MatMul of a 1-D input ([1] x [1, 2], the QDQ form of a linear layer on
a vector) returns shape [1, 2], not the [2] of ONNX's MatMul (numpy's matmul: the 1 prepended to a 1-D first operand
is removed again); the same graph in f32 gives [2] (docs/findings.md, OpenVINO 7). Model: parity's export of a reduced
fuzz graph (DequantizeLinear of the u8 input and the per-channel s8 weight, Transpose, MatMul, Add of the bias,
QuantizeLinear), read by OpenVINO's ONNX frontend and compiled for the CPU plugin with parity's runner's options."""
import sys
import numpy as np
from findings_common import openvino_run_file

got = openvino_run_file("openvino_7_matmul_1d_qdq.onnx", [np.array([200], np.uint8)])[0]
print(f"output: shape {list(got.shape)} {got.tolist()}; want shape [2] (ONNX MatMul of [1] by [1, 2])")
bad = list(got.shape) != [2]
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
