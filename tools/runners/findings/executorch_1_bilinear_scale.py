"""ExecuTorch 1.5.1 finding 1: the XNNPACK delegate's upsample_bilinear2d ignores the scale factors a program gives
and interpolates with the ratio of the sizes instead: scale_factor=(1.3, 0.7) on a 5x5 input (a 6x3 output) maps
output pixels with 5/6 and 5/3, not 1/1.3 and 1/0.7, as torch eager and ExecuTorch's portable kernel do
(docs/findings.md, ExecuTorch 1). One F.interpolate, lowered with and without the delegate."""
import sys
import numpy as np
import torch
import torch.nn.functional as F
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.runtime import Runtime


class Up(torch.nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=(1.3, 0.7), mode="bilinear", align_corners=False)


def bilinear_ref(x, scale, out):
    """float64 half-pixel bilinear with the given scales (ONNX Resize, aten.upsample_bilinear2d.vec)."""
    h, w = x.shape
    def taps(o, n, s):
        src = max((o + 0.5) / s - 0.5, 0.0)
        i0 = min(int(np.floor(src)), n - 1)
        return i0, min(i0 + 1, n - 1), src - i0
    y = np.zeros(out)
    for i in range(out[0]):
        a0, a1, fa = taps(i, h, scale[0])
        for j in range(out[1]):
            b0, b1, fb = taps(j, w, scale[1])
            y[i, j] = (x[a0, b0] * (1 - fa) + x[a1, b0] * fa) * (1 - fb) + (x[a0, b1] * (1 - fa) + x[a1, b1] * fa) * fb
    return y


x = torch.arange(25, dtype=torch.float32).reshape(1, 1, 5, 5)
want = bilinear_ref(x[0, 0].double().numpy(), (1.3, 0.7), (6, 3))
ep = torch.export.export(Up(), (x,))
err = {}
for name, edge in (("xnnpack", to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])),
                   ("portable", to_edge(ep))):
    got = Runtime.get().load_program(edge.to_executorch().buffer).load_method("forward").execute([x])[0]
    err[name] = np.abs(got[0, 0].double().numpy() - want).max()
    print(f"  {name}: row 0 {got[0, 0, 0].tolist()}, want {want[0].round(4).tolist()}: max error {err[name]:.3g}")
ok = err["xnnpack"] > 0.1 and err["portable"] < 1e-4
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
