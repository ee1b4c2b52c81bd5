"""OpenVINO 2026.4 finding 8: a constant Pad (value 0) of a dequantized tensor pads with -zero_point x scale, not 0:
the low-precision transformations move the Pad before the dequantization and pad the integers with 0, which is not
the integer of 0.0 when the zero point is not 0 (docs/findings.md, OpenVINO 8). Model: parity's export of a reduced
fuzz graph (DequantizeLinear of an s8 [1] input with zero point 50, Reshape, QuantizeLinear, DequantizeLinear, Pad
[3, 0] with 0)."""
import sys
import numpy as np
from findings_common import openvino_run_file

got = openvino_run_file("openvino_8_pad_qdq.onnx", [np.array([50], np.int8)])[0]
print(f"Pad([3, 0], 0) of dequantize(50, scale 0.0046159667, zero point 50) = {got.tolist()}; want [0, 0, 0, 0]")
bad = bool(np.any(got[:3] != 0))
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
