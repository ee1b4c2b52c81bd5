"""ncnn 1.0.20261020 finding 6: BinaryOp div on the x86 CPU is not IEEE division: of 4,096 quotients a / b with a in
[-1, 1], b in [0.5, 2], a large share differ from the correctly rounded f32 quotient, by up to about 2 ulp (a
reciprocal estimate refined by Newton, then a multiply); with a scalar divisor x / 2 is not exact (2 / 2 = 0.99999994 in
a vector lane), and 1 / 1.25e38 is 0 where it is a subnormal (docs/findings.md, ncnn 6). Input x divided by a
MemoryData b."""
import os, sys, tempfile
import numpy as np
import ncnn

rng = np.random.default_rng(1)
a = rng.uniform(-1, 1, 4096).astype(np.float32)
b = rng.uniform(0.5, 2, 4096).astype(np.float32)
net = ncnn.Net()
net.opt.num_threads = 1
for k in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage", "use_bf16_packed"):
    setattr(net.opt, k, False)
net.load_param_mem("7767517\n3 3\nInput x 0 1 x 0=4096\nMemoryData m 0 1 b 0=4096\nBinaryOp op 2 1 x b y 0=3\n")
with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
    f.write(b.tobytes())
net.load_model(f.name)
os.unlink(f.name)
ex = net.create_extractor()
ex.input("x", ncnn.Mat(a).clone())
ret, m = ex.extract("y")
y = np.array(m)
want = a / b  # numpy's f32 division: correctly rounded
ulp = np.abs(y.astype(np.float64) - a.astype(np.float64) / b) / np.spacing(np.abs(want))
print(f"  {int((y != want).sum())} of {a.size} quotients differ from IEEE f32 division; worst {ulp.max():.2f} ulp "
      f"from the exact quotient (IEEE: 0.5)")
# a scalar divisor (BinaryOp with_scalar) and the reciprocal (RDIV, 1 / x)
from findings_common import ncnn_layer, ncnn_run
xs = np.array([1e-40, -3e-39, 1e-38, 2.0, 3.0, -7.0, 0.1, 2.0], np.float32)
half = ncnn_run(ncnn_layer("BinaryOp 0=3 1=1 2=2.0", len(xs)), xs)
rcp = ncnn_run(ncnn_layer("BinaryOp 0=8 1=1 2=1.0", 3), np.array([4.0, 1.25e38, 2e38], np.float32))
n_half = int((half != xs / np.float32(2)).sum())
print(f"  x / 2 (exact in IEEE) for {xs.tolist()}: {half.tolist()}: {n_half} of {len(xs)} not x / 2")
print(f"  1 / 4 = {rcp[0]:.9g}, 1 / 1.25e38 = {rcp[1]:.9g}, 1 / 2e38 = {rcp[2]:.9g} (want 0.25, 8e-39, 5e-39)")
ok = (y != want).sum() > 0 and ulp.max() > 1.0 and n_half > 0 and rcp[1] == 0.0
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
