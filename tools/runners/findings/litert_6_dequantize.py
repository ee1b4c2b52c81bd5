"""LiteRT 2.3 finding 6: the built-in DEQUANTIZE returns what scale * q - scale * zero_point (two rounded products)
gives, not the f32 of scale * (q - zero_point): a result near 0 with a large zero point loses the digits the
products cancel: q = 254, zero point 255, scale 0.1 gives -0.100000381 instead of -0.1 (3.8e-6 relative), q = 242
-1.29999924 instead of -1.3 (docs/findings.md, LiteRT 6). The XNNPACK delegate is right.
Model: parity's export of dequantize(x=[17],dt=qu8,scale=0.1,zp=255,src=input)#seed=1."""
import os, sys
import numpy as np
from findings_common import litert_interpreter


def run(q, delegate):
    it = litert_interpreter("litert_6_dequantize.tflite", delegate)
    it.set_tensor(it.get_input_details()[0]["index"], q)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])

q = np.array([242, 0, 1, 100, 200, 250, 254, 255, 3, 7, 13, 42, 128, 77, 190, 230, 241], np.uint8)
scale = np.float64(np.float32(0.1))
want = (q.astype(np.float64) - 255) * scale          # the exact value; its f32 rounding is the right result
bad = 0
for delegate in ("none", "xnnpack"):
    got = run(q, delegate)
    off = got != want.astype(np.float32)
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-30) * off
    i = int(np.argmax(rel))
    print(f"delegate={delegate}: {int(off.sum())} of {len(q)} not the f32 of (q - 255) * 0.1", end="")
    print(f"; worst q = {q[i]}: {got[i]:.9g}, want {np.float32(want[i]):.9g}, relative error {rel[i]:.2g} (the f32 of "
          f"scale*q - scale*255: {np.float32(np.float32(scale * q[i]) - np.float32(scale * 255)):.9g})"
          if off.any() else "")
    bad += int(off.sum()) if delegate == "none" else 0
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
