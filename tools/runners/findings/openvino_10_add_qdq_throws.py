"""OpenVINO 2026.4 finding 10: compiling a QDQ Add of a quantized input and a quantized constant (QuantizeLinear,
DequantizeLinear on both sides, Add, QuantizeLinear) throws inside the CPU plugin's low-precision AddTransformation:
"CALLBACK HAS THROWN: Check 'index < m_inputs.size()' failed ... index '0' out of range" (docs/findings.md,
OpenVINO 10). Model: parity's export of a reduced fuzz graph (an add of f32 [2] input and constant, quantized)."""
import sys
import numpy as np
from findings_common import openvino_run_file

try:
    got = openvino_run_file("openvino_10_add_qdq_throws.onnx", [np.array([0.5, -0.25], np.float32)])[0]
    print(f"compiled and ran: {got.tolist()}")
    bad = False
except Exception as e:
    text = " ".join(str(e).split())
    print(text[text.find("[AddTransformation]"):][:300] if "[AddTransformation]" in text else text[:300])
    bad = True
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
