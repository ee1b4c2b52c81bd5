"""ncnn 1.0.20261020 finding 1 (its Python binding): an input Mat made from a numpy array (ncnn.Mat(array)) that an
in-place layer reads first (ReLU, Sigmoid, UnaryOp, ... : support_inplace) crashes the extractor with a segmentation
fault; the same input cloned (ncnn.Mat(array).clone()) runs (docs/findings.md, ncnn 1). One ReLU layer, [7] f32."""
import subprocess, sys

CHILD = r"""
import sys, numpy as np, ncnn
net = ncnn.Net()
net.load_param_mem("7767517\n2 2\nInput x 0 1 x 0=7\nReLU op 1 1 x y\n")
net.load_model_mem("")
m = ncnn.Mat(np.arange(7, dtype=np.float32) - 3)
if sys.argv[1] == "clone":
    m = m.clone()
ex = net.create_extractor()
ex.input("x", m)
ret, y = ex.extract("y")
print(ret, np.array(y).tolist())
"""
res = {}
for mode in ("clone", "numpy"):
    p = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, timeout=60)
    res[mode] = p.returncode
    print(f"{mode}: exit {p.returncode} {p.stdout.strip()}")
ok = res["clone"] == 0 and res["numpy"] in (-11, 139)
print("REPRODUCED" if ok else "not reproduced")
sys.exit(0 if ok else 1)
