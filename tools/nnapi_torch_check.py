#!/usr/bin/env python3
"""nnapi_torch_check.py - PyTorch's own NNAPI path run against parity's simulated libneuralnetworks.so.

torch.backends._nnapi (PyTorch's converter from TorchScript to an NNAPI model, and its runtime, which dlopens
"libneuralnetworks.so") is an unmodified client of the NNAPI C API. This converts small models (float NHWC and NCHW:
conv, depthwise conv, relu, relu6, prelu, average and max pool, adaptive average pool, sigmoid, broadcast mul, add,
cat, nearest upsampling, softmax, linear; quantized: conv, add, mul, relu, sigmoid), runs each through the simulated
library and compares with PyTorch's own CPU result: float within NNAPI's generated tests' rule (1e-5 + 5 ulp of the expected value), quantized within 1 step (PyTorch's
QNNPACK requantizes in fp32, NNAPI with gemmlowp: ties may differ by one).

    LD_LIBRARY_PATH=build/lib /usr/bin/python3 tools/nnapi_torch_check.py [build/lib/libneuralnetworks.so]

PARITY_NNAPI_PROFILE picks the simulated device as for any client (docs/backends/nnapi.md). Exit status 0 when all
agree, 1 when one does not, 77 when PyTorch (Debian's python3-torch) is not installed: a skip, never a pass.
"""
import ctypes
import os
import sys

try:
    import torch
    from torch.backends._nnapi.prepare import convert_model_to_nnapi
except ImportError:
    print("nnapi_torch_check: skip: PyTorch (python3-torch) is not installed")
    print("nnapi-torch: 0 passed, 0 failed, 1 skipped")
    sys.exit(77)

LIB = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "lib", "libneuralnetworks.so")


def check(name, model, inp, tol, quant=False):
    model.eval()
    nnapi = convert_model_to_nnapi(torch.jit.trace(model, inp), inp)
    want, got = model(inp), nnapi(inp)
    if quant:
        d = (got.int_repr().int() - want.int_repr().int()).abs().max().item()
        print(f"nnapi_torch_check: {name}: max difference {d} step(s) (tolerance {tol})")
    else:
        # NNAPI's generated tests' float32 rule: |d| <= 1e-5 + 5 ulp |expected| (ulp of 1: 2^-23), element-wise
        d = (got - want).abs()
        over = (d - (tol + 5 * 2.0**-23 * want.abs())).max().item()
        print(f"nnapi_torch_check: {name}: max |d| {d.max().item():.3g} "
              f"(tolerance {tol:g} + 5 ulp |expected|)")
        return over <= 0
    return d <= tol


class QuantConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.quantized.Conv2d(4, 4, 3, padding=1)
        w = torch.quantize_per_tensor(torch.randn(4, 4, 3, 3), 0.02, 0, torch.qint8)
        self.conv.set_weight_bias(w, torch.randn(4))
        self.conv.scale, self.conv.zero_point = 0.05, 128

    def forward(self, x):
        return self.conv(x)


class Block(torch.nn.Module):
    """A MobileNetV3-like block: 1x1 conv, relu6, depthwise conv, prelu, squeeze-excite gate, 1x1 conv, residual."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(4, 8, 1)
        self.act = torch.nn.Hardtanh(0.0, 6.0)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pr = torch.nn.PReLU()
        self.c2 = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.pr(self.dw(self.act(self.c1(x))))
        y = y * torch.sigmoid(torch.nn.functional.adaptive_avg_pool2d(y, 1))
        return self.c2(y) + x


class Mix(torch.nn.Module):
    def forward(self, x):
        a = torch.cat([x, torch.sigmoid(x)], dim=1)
        u = torch.nn.functional.interpolate(a, scale_factor=2.0, mode="nearest")
        return torch.softmax(torch.nn.functional.max_pool2d(u, 2, 2).flatten(1), dim=1)


class QuantAddMul(torch.nn.Module):
    def forward(self, a):
        return torch.ops.quantized.add(a, torch.ops.quantized.mul(a, a, 0.05, 120), 0.1, 100)


class QuantReluSigmoid(torch.nn.Module):
    def forward(self, a):
        return torch.sigmoid(torch.nn.functional.relu(a))


def main():
    ctypes.cdll.LoadLibrary(os.path.abspath(LIB))
    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"
    checks = []
    x = torch.randn(1, 3, 8, 8).contiguous(memory_format=torch.channels_last)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
                            torch.nn.Flatten(), torch.nn.Linear(64, 5))
    checks.append(check("float conv, relu, avg pool, linear (NHWC)", m, x, 1e-5))
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3, stride=2, groups=3), torch.nn.Hardtanh(0.0, 6.0),
                            torch.nn.Conv2d(3, 2, 1), torch.nn.Sigmoid())
    checks.append(check("float depthwise conv, relu6, 1x1 conv, sigmoid (NCHW)", m, torch.randn(1, 3, 8, 8), 1e-5))
    qx = torch.quantize_per_tensor(torch.randn(1, 4, 6, 6), 0.03, 128, torch.quint8)
    checks.append(check("quantized conv (quint8 activations, qint8 weights)", QuantConv(),
                        qx.contiguous(memory_format=torch.channels_last), 1, quant=True))
    # (per-channel qint8 weights: PyTorch 1.13's converter asserts per-tensor weights in add_qconv2d, so they are
    # tested through parity's own nnapi backend and the simulator's tests only)
    xb = torch.randn(1, 4, 6, 6).contiguous(memory_format=torch.channels_last)
    checks.append(check("MobileNetV3-like block (NHWC)", Block(), xb, 1e-5))
    checks.append(check("cat, sigmoid, nearest upsampling, max pool, softmax (NCHW)", Mix(), torch.randn(1, 2, 3, 3),
                        1e-5))
    qa = torch.quantize_per_tensor(torch.randn(1, 4, 5, 5), 0.05, 128, torch.quint8)
    qa = qa.contiguous(memory_format=torch.channels_last)
    checks.append(check("quantized add and mul", QuantAddMul(), qa, 1, quant=True))
    checks.append(check("quantized relu, sigmoid", QuantReluSigmoid(), qa, 1, quant=True))
    ok = all(checks)
    print("nnapi_torch_check: " + ("all agree" if ok else "FAILED"))
    print(f"nnapi-torch: {sum(checks)} passed, {len(checks) - sum(checks)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
