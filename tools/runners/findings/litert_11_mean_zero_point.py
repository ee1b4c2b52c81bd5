"""LiteRT 2.3 finding 11: the built-in int8 MEAN with an output scale other than the input's rounds the zero point's
term apart from the sum's, round(sum x r) - round(zero_point x r) with r = input scale / output scale, instead of
round((sum - zero_point) x r): one step off where the two roundings fall on different sides. A one-element mean of
q = -31 (scale 0.019400056, zero point -32: the value 0.0194) to scale 0.008653352, zero point 6 is 2.24 steps, so
8; the built-in kernel gives 9 (round(-69.50) - round(-71.74) + 6). The XNNPACK delegate gives 8 (docs/findings.md,
LiteRT 11). Model: parity's export of a reduced fuzz graph, global_avg_pool2d of qs8 [1,1,1,1] (a MEAN over H, W)."""
import sys
import numpy as np
from findings_common import litert_run

x = np.full((1, 1, 1, 1), -31, np.int8)
want = int(np.round((-31 + 32) * 0.019400056 / 0.008653352)) + 6
bad = 0
for delegate in ("none", "xnnpack"):
    got = int(litert_run("litert_11_mean_zero_point.tflite", [x], delegate).ravel()[0])
    print(f"delegate={delegate}: mean of q = -31 as qs8 (0.008653352, 6) = {got}, want {want}")
    bad += got != want if delegate == "none" else 0
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
