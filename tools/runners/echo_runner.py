"""echo_runner.py - a runner that answers run with its inputs (input k as output k): the protocol's own cost, on
cases whose outputs have their inputs' dtypes and shapes (relu, for one). Reads ONNX and TFLite, loads nothing."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import Unsupported, serve


class Echo:
    def hello(self, options):
        if options:
            raise Unsupported(f"unknown option {', '.join(sorted(options))} (echo takes none)")
        return {"runtime": "echo", "version": "1", "formats": ["onnx", "tflite"]}

    def load(self, fmt, model):
        pass

    def run(self, inputs):
        return inputs


if __name__ == "__main__":
    serve(Echo())
