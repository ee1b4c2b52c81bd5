"""ncnn 1.0.20261020 finding 7: GELU on the Vulkan path ignores fast_gelu=0: it computes the tanh approximation
0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3))) where the CPU path (and PyTorch's gelu) compute 0.5 x erfc(-x / sqrt 2);
the two differ by up to about 5e-4 (docs/findings.md, ncnn 7). One GELU (0=0), Mesa's lavapipe here."""
import math, sys
import numpy as np
import ncnn
from findings_common import ncnn_layer, ncnn_run

if ncnn.get_gpu_count() < 1:
    print("no Vulkan device: not reproduced")
    sys.exit(1)
x = np.array([-2.5, -1.0, -0.3, 0.5, 1.0, 2.2], np.float32)
vk = ncnn_run(ncnn_layer("GELU 0=0", len(x)), x, vulkan=True).astype(np.float64)
cpu = ncnn_run(ncnn_layer("GELU 0=0", len(x)), x).astype(np.float64)
exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
tanh = np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
                 for v in x.astype(np.float64)])
for v, a, c, e, t in zip(x, vk, cpu, exact, tanh):
    print(f"  gelu({v}): vulkan {a:.9g}, cpu {c:.9g}, erf form {e:.9g}, tanh form {t:.9g}")
ok = np.abs(vk - exact).max() > 1e-4 and np.abs(vk - tanh).max() < 1e-5 and np.abs(cpu - exact).max() < 1e-5
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
