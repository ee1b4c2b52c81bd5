"""ort_runner.py - ONNX Runtime as a parity runner (docs/runners.md): the backend `ort`.

hello's options: opt=1 (graph optimizations ORT_ENABLE_ALL, the default) or 0 (ORT_DISABLE_ALL); threads=N
(intra-op threads, default 1; 0: ONNX Runtime's own choice; inter-op always 1); provider=NAME (an execution
provider of this onnxruntime, default CPUExecutionProvider; "CPU" is short for it).
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import Unsupported, int_option, serve

try:
    import onnxruntime as ort
    MISSING = None
except ImportError as e:
    ort, MISSING = None, f"{e} (make deps installs onnxruntime into build/venv)"



class Ort:
    def hello(self, options):
        if ort is None:
            raise Unsupported(MISSING)
        unknown = sorted(set(options) - {"opt", "threads", "provider"})
        if unknown:
            raise Unsupported(f"unknown option {', '.join(unknown)} (ort knows opt, threads, provider)")
        opt = str(options.get("opt", "1"))
        if opt not in ("0", "1"):
            raise Unsupported(f"option opt={opt!r}: 1 (all graph optimizations) or 0 (none)")
        self.level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL if opt == "1" else \
            ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.threads = int_option(options, "threads", 1, 0)
        provider = str(options.get("provider", "CPUExecutionProvider"))
        available = ort.get_available_providers()
        if provider not in available and provider + "ExecutionProvider" in available:
            provider += "ExecutionProvider"
        if provider not in available:
            raise Unsupported(f"provider {provider!r} is not in this onnxruntime (it has {', '.join(available)})")
        self.providers = [provider]
        return {"runtime": "onnxruntime", "version": ort.__version__, "formats": ["onnx"],
                "providers": self.providers, "available_providers": available}

    def load(self, fmt, model):
        so = ort.SessionOptions()
        so.graph_optimization_level = self.level
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3  # errors only: warnings would fill every case's record
        self.session = None
        try:
            self.session = ort.InferenceSession(model, sess_options=so, providers=self.providers)
        except Exception as e:
            text = str(e)
            if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
                raise Unsupported(text.strip().splitlines()[0]) from e
            raise
        self.names = [i.name for i in self.session.get_inputs()]

    def run(self, inputs):
        if len(inputs) != len(self.names):
            raise ValueError(f"{len(inputs)} inputs, the model has {len(self.names)} ({', '.join(self.names)})")
        return self.session.run(None, dict(zip(self.names, inputs)))


if __name__ == "__main__":
    serve(Ort())
