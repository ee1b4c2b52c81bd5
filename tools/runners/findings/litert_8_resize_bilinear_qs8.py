"""LiteRT 2.3 finding 8: the built-in int8 RESIZE_BILINEAR with align_corners=True returns integers up to 1.2 steps away
from the exact interpolation, where the nearest integer is at most half a step away (docs/findings.md, LiteRT 8).
The XNNPACK delegate (and the uint8 built-in kernel) round to the nearest integer. Model: parity's export of
upsample_bilinear2d(in=[1,8,5,6],size=[10,12],ac=1,dt=qs8)#seed=1: [1, 5, 6, 8] NHWC -> [1, 10, 12, 8], scale
1/127.5, zero point 0 on both sides."""
import os, sys
import numpy as np
from findings_common import litert_interpreter

S = np.float32(0.007843137718737125)
H, W, OH, OW = 5, 6, 10, 12

def run(x, delegate):
    it = litert_interpreter("litert_8_resize_bilinear.tflite", delegate)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return np.round(it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64) / S)

q = (np.arange(H * W * 8).reshape(1, H, W, 8) * 37 % 255 - 127).astype(np.float64)   # int8 values, fixed
fy, fx = np.arange(OH) * (H - 1) / (OH - 1), np.arange(OW) * (W - 1) / (OW - 1)      # align_corners
y0, x0 = np.minimum(fy.astype(int), H - 2), np.minimum(fx.astype(int), W - 2)
dy, dx = (fy - y0)[:, None, None], (fx - x0)[None, :, None]
want = (q[0][y0][:, x0] * (1 - dy) * (1 - dx) + q[0][y0][:, x0 + 1] * (1 - dy) * dx
        + q[0][y0 + 1][:, x0] * dy * (1 - dx) + q[0][y0 + 1][:, x0 + 1] * dy * dx)
worst = {}
for delegate in ("none", "xnnpack"):
    got = run((q * S).astype(np.float32), delegate)[0]
    off = np.abs(got - want)
    i = tuple(int(v) for v in np.unravel_index(off.argmax(), off.shape))
    print(f"delegate={delegate}: {int((off > 0.5 + 1e-9).sum())} of {off.size} not the nearest integer, "
          f"worst (y, x, c) "
          f"{i}: {got[i]:.0f}, exact {want[i]:.3f}")
    worst[delegate] = off.max()
ok = worst["none"] > 0.5 + 1e-9
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
