"""litert_runner.py - LiteRT (TensorFlow Lite) as a parity runner (docs/runners.md): the backend `litert`.

hello's options: delegate=xnnpack (the interpreter's default delegates, XNNPACK: the default) or none (the built-in
kernels alone: OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES); threads=N (num_threads, default 1; 0: LiteRT's own
choice). Inputs and outputs are positional in get_input_details()/get_output_details() order, which is the
subgraph's inputs/outputs order (the interpreter's InputIndices/OutputIndices), the model file's order.
"""
import os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import Unsupported, int_option, serve

try:
    import ai_edge_litert
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    MISSING = None
except ImportError as e:
    ai_edge_litert, MISSING = None, f"{e} (make deps installs ai-edge-litert into build/venv)"

# what LiteRT says when it lacks an op, or a kernel for a dtype
UNSUPPORTED = re.compile(r"didn.t find (op for builtin opcode|custom op)|builtin_code out of range|"
                         r"unsupported|not supported", re.I)


class LiteRT:
    def hello(self, options):
        if MISSING:
            raise Unsupported(MISSING)
        unknown = sorted(set(options) - {"delegate", "threads"})
        if unknown:
            raise Unsupported(f"unknown option {', '.join(unknown)} (litert knows delegate, threads)")
        delegate = str(options.get("delegate", "xnnpack"))
        if delegate not in ("xnnpack", "none"):
            raise Unsupported(f"option delegate={delegate!r}: xnnpack (the default delegates) or none")
        self.resolver = OpResolverType.AUTO if delegate == "xnnpack" else \
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        self.threads = int_option(options, "threads", 1, 0)
        # What parity's quick suite measured of each (docs/runners.md, "Declarations"): the XNNPACK delegate flushes
        # subnormal inputs and results to zero (relu of 1.15e-38 is 0), as XNNPACK does; its quantized add rounds
        # exact ties half up (rndnu). The built-in kernels keep subnormals and requantize as gemmlowp (ties half away
        # from zero).
        declares = {"flush_subnormals": True, "requant": "rndnu"} if delegate == "xnnpack" else \
            {"requant": "gemmlowp"}
        return {"runtime": "litert", "version": ai_edge_litert.__version__, "formats": ["tflite"],
                "delegate": delegate, "declares": declares}

    def load(self, fmt, model):
        self.interp = None
        try:
            interp = Interpreter(model_content=model, num_threads=self.threads or None,
                                 experimental_op_resolver_type=self.resolver)
            interp.allocate_tensors()
        except Exception as e:
            text = (str(e).strip().splitlines() or [""])[0]
            if UNSUPPORTED.search(str(e)):
                raise Unsupported(text) from e
            raise
        self.interp = interp
        self.ins = [d["index"] for d in interp.get_input_details()]
        self.outs = [d["index"] for d in interp.get_output_details()]

    def run(self, inputs):
        if len(inputs) != len(self.ins):
            raise ValueError(f"{len(inputs)} inputs, the model has {len(self.ins)}")
        for index, x in zip(self.ins, inputs):
            self.interp.set_tensor(index, x)
        self.interp.invoke()
        return [self.interp.get_tensor(index).copy() for index in self.outs]


if __name__ == "__main__":
    serve(LiteRT())
