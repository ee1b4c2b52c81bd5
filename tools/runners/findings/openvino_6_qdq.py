"""OpenVINO 2026.4 finding 6 (two of its groups): quantized (QDQ) graphs.

(a) Dequantization: the CPU plugin computes the dequantization (q - zero_point) * scale as
q * scale - zero_point * scale, fused (one FMA with the folded constant): the zero point itself dequantizes to
3.8e-7 instead of 0 (scale 0.1, zero point 255), and other integers are off by up to a few ulp of the product, where
ONNX DequantizeLinear, and parity, subtract first (exact for 8-bit integers) and round once. This is the graph
OpenVINO's ONNX frontend makes of DequantizeLinear (Convert, Subtract, Multiply), built here with its own opset 13
on every u8 value. parity's quick cases dequantize(x=[1|17],dt=qu8|qs8,scale=0.1,zp=255|127,src=input) fail by 2.7
times the f32 budget (-1.29999959 for -1.3), as LiteRT's built-in DEQUANTIZE does (LiteRT 6; docs/findings.md,
OpenVINO 6).

(b) A Clip between a DequantizeLinear and a QuantizeLinear (parity's hardtanh qu8: input scale 0.0235294, zero point
128; Clip(-1, 1); output scale 1/127.5, zero point 128): the low-precision transformations move the Clip into the
input's integer domain, where its bound 1.0 is 42.5 steps and becomes 42, 0.988235; requantized, that is 254 where
ONNX's graph gives 255 (1.0 is 255.5 steps, saturated): one output step off for every input above the bound.
openvino_6_hardtanh_qdq.onnx is parity's export of hardtanh(x=[33],dt=qu8)#seed=1, whose 8 such elements fail."""
import sys
import numpy as np
from findings_common import openvino_run, openvino_run_file

Q = np.arange(0, 256, dtype=np.uint8)


def build(ops, ov):
    p = ops.parameter([256], ov.Type.u8)
    d = ops.subtract(ops.convert(p, ov.Type.f32), ops.constant(np.float32(255)))
    return [ops.multiply(d, ops.constant(np.float32(0.1)))], [p]


got = openvino_run(build, [Q])
want = (Q.astype(np.float32) - np.float32(255)) * np.float32(0.1)  # exact subtraction, one rounding
diff = np.nonzero(got != want)[0]
print(f"(a) (q - 255) * 0.1 on q = 0..255: {len(diff)} of 256 differ from the once-rounded f32 result")
for q in (255, 242, 0):
    print(f"  q={q:<3d} got {float(got[q]):.9g}, want {float(want[q]):.9g}")
bad_a = got[255] != 0 or len(diff) > 0

X = np.resize(np.array([1.1745597, 2.9775836, 0.5209313, -0.3], np.float32), 33).astype(np.float32)
s1, s2 = np.float32(0.02352941), np.float32(0.00784314)
q1 = np.clip(np.rint(X / s1) + 128, 0, 255)
c = np.clip((q1 - 128) * s1, -1, 1)
ref = (np.clip(np.rint(c / s2) + 128, 0, 255) - 128) * s2  # ONNX's QDQ graph, step by step
y = openvino_run_file("openvino_6_hardtanh_qdq.onnx", [X])[0]
print("(b) hardtanh qu8 as QDQ (DequantizeLinear, Clip(-1, 1), QuantizeLinear, DequantizeLinear):")
for i in range(4):
    print(f"  x={float(X[i]):<10.7g} got {float(y[i]):.8g} = step {int(round(float(y[i]) / float(s2))) + 128}, "
          f"want {float(ref[i]):.8g} = step {int(round(float(ref[i]) / float(s2))) + 128}")
bad_b = bool(np.any(np.abs(y - ref) > s2 / 2))
print("REPRODUCED" if bad_a and bad_b else "not reproduced")
sys.exit(0 if bad_a and bad_b else 1)
