"""ncnn 1.0.20261020 finding 5: TanH on the CPU loses relative accuracy for small |x|: tanh(1e-5) is 1.4e-3 relative
off, tanh(1e-3) 4.7e-5, where f32 rounding is 6e-8 and tanh(x) ~ x there (docs/findings.md, ncnn 5). One TanH."""
import sys
import numpy as np
from findings_common import ncnn_layer, ncnn_run

x = np.array([1e-5, 1e-3, -0.00687892827, 0.0471482179, 0.3, 2.0], np.float32)
got = ncnn_run(ncnn_layer("TanH", len(x)), x).astype(np.float64)
want = np.tanh(x.astype(np.float64))
rel = np.abs(got - want) / np.abs(want)
for v, g, w, r in zip(x, got, want, rel):
    print(f"  tanh({v:.9g}) = {g:.9g}, want {w:.9g}: {r:.2e} relative")
ok = rel.max() > 1e-5
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
