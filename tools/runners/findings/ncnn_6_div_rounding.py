"""ncnn 1.0.20261020 finding 6: BinaryOp div on the x86 CPU is not IEEE division: of 4,096 quotients a / b with a in
[-1, 1], b in [0.5, 2], a large share differ from the correctly rounded f32 quotient, by up to about 2 ulp (a
reciprocal estimate refined by Newton, then a multiply) (docs/findings.md, ncnn 6). Input x divided by a
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
ok = (y != want).sum() > 0 and ulp.max() > 1.0
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
