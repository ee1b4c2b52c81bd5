"""openvino_runner.py - OpenVINO's CPU plugin as a parity runner (docs/runners.md): the backend `openvino`.

hello's options: precision=f32 (the default here: INFERENCE_PRECISION_HINT f32, so that f32 models are computed in
f32 whatever the CPU offers), bf16 or f16 (the plugin's lower-precision inference, declared to parity so that the
oracle budgets it as such: bf16 as bf16_storage, since the plugin stores every activation, input and weight in
bfloat16 between its f32 kernels, and with flushed subnormals, since its conversions to bfloat16 flush them (a
subnormal f32 result, which bfloat16 could hold as a subnormal, comes out as 0); f16 as f16); threads=N (INFERENCE_NUM_THREADS, default 1). The plugin's own
default on a CPU with AVX-512 BF16 or AMX is bf16, not f32: an unset hint would compute an f32 model in bf16. A
precision the CPU does not list among its OPTIMIZATION_CAPABILITIES (FP16, BF16) makes the instance UNSUPPORTED at
hello: on a CPU without FP16 the plugin compiles an f16 hint as bf16 (its compiled model reports bfloat16), which the
f16 declaration would misjudge.
Inputs are fed by name, in the order the ONNX graph declares them (an input that no node reads is dropped by the
conversion, and is not fed).
compile_model is most of a case's cost (about 25 ms of CPU for one small node; the front end's conversion 2 ms, the
infer request 1.3 ms), so the compiled model and its infer request are kept for a later case with the same file
(parity_runner.ModelMemo: the same graph and constants, other inputs): 15 % of the quick suite's cases. The load
reply's "cached" says whether this case's was ("memory") or compiled ("compiled").
"""
import io, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import ModelMemo, Unsupported, int_option, serve

try:
    import openvino as ov
    MISSING = None
except ImportError as e:
    ov, MISSING = None, f"{e} (make deps installs openvino into build/venv)"

PRECISIONS = {"f32": "f32", "bf16": "bf16_storage", "f16": "f16"}
MEMO_SIZE = 64  # compiled models of small graphs: a few hundred KiB each


class OpenVino:
    def hello(self, options):
        if ov is None:
            raise Unsupported(MISSING)
        unknown = sorted(set(options) - {"precision", "threads"})
        if unknown:
            raise Unsupported(f"unknown option {', '.join(unknown)} (openvino knows precision, threads)")
        self.precision = str(options.get("precision", "f32"))
        if self.precision not in PRECISIONS:
            raise Unsupported(f"option precision={self.precision!r}: f32, bf16 or f16")
        self.threads = int_option(options, "threads", 1, 1)
        if not hasattr(self, "core"):
            self.core = ov.Core()
        if "CPU" not in self.core.available_devices:
            raise Unsupported(f"no CPU device in this OpenVINO ({', '.join(self.core.available_devices)})")
        caps = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        cap = {"bf16": "BF16", "f16": "FP16"}.get(self.precision)
        if cap and cap not in caps:
            raise Unsupported(f"precision={self.precision}: this CPU's OPTIMIZATION_CAPABILITIES ({', '.join(caps)}) "
                              f"lack {cap}; the plugin would compile the hint as "
                              f"{'bf16' if 'BF16' in caps else 'f32'}")
        return {"runtime": "openvino", "version": ov.__version__, "formats": ["onnx"], "device": "CPU",
                "declares": {"arith": PRECISIONS[self.precision], "flush_subnormals": self.precision == "bf16"}}

    def load(self, fmt, model):
        self.compiled = None
        if not hasattr(self, "memo"):
            self.memo = ModelMemo(MEMO_SIZE)
        key = ModelMemo.key(model, self.precision, self.threads)
        kept = self.memo.get(key)
        if kept:
            self.compiled, self.request, self.names = kept
            return {"cached": "memory"}
        try:
            # the ONNX front end, not read_model, so that the graph's declared inputs are known in their order: the
            # converted model drops an input that no node reads, and parity sends one array per declared input
            fe = ov.frontend.FrontEndManager().load_by_framework("onnx")
            im = fe.load(io.BytesIO(bytes(model)))
            names = [sorted(p.get_names())[0] for p in im.get_inputs()]
            m = fe.convert(im)
        except Exception as e:
            raise Unsupported(str(e).strip().splitlines()[0][:300]) from e
        cfg = {"INFERENCE_PRECISION_HINT": self.precision, "INFERENCE_NUM_THREADS": str(self.threads),
               "NUM_STREAMS": "1"}
        try:
            compiled = self.core.compile_model(m, "CPU", cfg)
        except Exception as e:
            text = str(e).strip().splitlines()[0][:300]
            if "not supported" in text.lower() or "unsupported" in text.lower():
                raise Unsupported(text) from e
            raise
        self.compiled, self.request, self.names = compiled, compiled.create_infer_request(), names
        self.memo.put(key, (self.compiled, self.request, self.names))
        return {"cached": "compiled"}

    def run(self, inputs):
        if len(inputs) != len(self.names):
            raise ValueError(f"{len(inputs)} inputs, the model has {len(self.names)} ({', '.join(self.names)})")
        read = {n for i in self.compiled.inputs for n in i.get_names()}
        self.request.infer({n: a for n, a in zip(self.names, inputs) if n in read})
        return [self.request.get_output_tensor(i).data.copy() for i in range(len(self.compiled.outputs))]


if __name__ == "__main__":
    serve(OpenVino())
