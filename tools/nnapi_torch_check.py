#!/usr/bin/env python3
"""nnapi_torch_check.py - PyTorch's own NNAPI path run against parity's simulated libneuralnetworks.so.

torch.backends._nnapi (PyTorch's converter from TorchScript to an NNAPI model, and its runtime, which dlopens
"libneuralnetworks.so") is an unmodified client of the NNAPI C API. This converts three small models (float NHWC,
float NCHW with depthwise conv, a quantized conv), runs each through the simulated library and compares with
PyTorch's own CPU result: float within 1e-4 absolute, quantized within 1 step (PyTorch's QNNPACK requantizes in
fp32, NNAPI with gemmlowp: ties may differ by one).

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
        d = (got - want).abs().max().item()
        print(f"nnapi_torch_check: {name}: max |d| {d:.3g} (tolerance {tol:g})")
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


def main():
    ctypes.cdll.LoadLibrary(os.path.abspath(LIB))
    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"
    ok = True
    x = torch.randn(1, 3, 8, 8).contiguous(memory_format=torch.channels_last)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
                            torch.nn.Flatten(), torch.nn.Linear(64, 5))
    ok &= check("float conv, relu, avg pool, linear (NHWC)", m, x, 1e-4)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3, stride=2, groups=3), torch.nn.Hardtanh(0.0, 6.0),
                            torch.nn.Conv2d(3, 2, 1), torch.nn.Sigmoid())
    ok &= check("float depthwise conv, relu6, 1x1 conv, sigmoid (NCHW)", m, torch.randn(1, 3, 8, 8), 1e-4)
    qx = torch.quantize_per_tensor(torch.randn(1, 4, 6, 6), 0.03, 128, torch.quint8)
    ok &= check("quantized conv (quint8 activations, qint8 weights)", QuantConv(),
                qx.contiguous(memory_format=torch.channels_last), 1, quant=True)
    print("nnapi_torch_check: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
