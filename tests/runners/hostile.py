"""hostile.py - what the test runners here share: parity_runner.py from tools/runners, a runner base that loads
nothing, relu, and the protocol's real stdout (for the runners that write to it behind serve's back)."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "runners"))
import numpy as np
from parity_runner import Unsupported, serve  # noqa: F401 (re-exported for the runners here)

RAW_STDOUT = os.dup(1)  # taken before serve moves stdout aside: the protocol stream itself


class Base:
    def hello(self, options):
        return {"runtime": type(self).__name__.lower(), "version": "1", "formats": ["onnx", "tflite"]}

    def load(self, fmt, model):
        pass

    def run(self, inputs):
        return [np.maximum(inputs[0], 0)]
