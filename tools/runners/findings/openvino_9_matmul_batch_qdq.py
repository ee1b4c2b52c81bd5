"""OpenVINO 2026.4 finding 9: a dequantized MatMul whose first operand has a batch of 2 and whose second broadcasts
a batch of 1 ([2,1,1] x [1,1,1], QDQ) computes the first batch and returns 0 for the second (docs/findings.md,
OpenVINO 9). Model: parity's export of a reduced fuzz graph (two DequantizeLinear, MatMul, QuantizeLinear,
DequantizeLinear, ReduceSum over the size-1 axis 1)."""
import sys
import numpy as np
from findings_common import openvino_run_file

a = np.array([19, 76], np.int8).reshape(2, 1, 1)
b = np.array([26], np.int8).reshape(1, 1, 1)
got = openvino_run_file("openvino_9_matmul_batch_qdq.onnx", [b, a])[0].ravel()
# float64: dequantize, multiply, quantize to the output's scale and zero point (round half to even), dequantize
prod = (a.astype(np.float64) + 128) * 0.010535313 * (b.astype(np.float64) - 25) * 0.0154997455
want = (np.clip(np.round(prod / 0.0472019) - 10, -128, 127) + 10) * 0.0472019
print(f"got {got.tolist()}, want {want.ravel().tolist()}")
bad = not np.allclose(got, want.ravel(), atol=1e-6)
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
