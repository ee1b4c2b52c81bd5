"""findings_common.py - what the finding scripts beside it share: the model file beside them run once through the
runtime's own API, with the options of parity's runner (tools/runners/ort_runner.py, litert_runner.py): one thread,
ONNX Runtime's graph optimizations on (opt=1) or off (opt=0), LiteRT's default XNNPACK delegate or its built-in
kernels."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def litert_interpreter(model, delegate):
    """LiteRT's Interpreter on the .tflite file `model` beside this file, tensors allocated; delegate "xnnpack" (the
    default delegates) or "none" (the built-in kernels)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kernels = {"xnnpack": OpResolverType.AUTO, "none": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    it = Interpreter(model_path=os.path.join(HERE, model), num_threads=1,
                     experimental_op_resolver_type=kernels[delegate])
    it.allocate_tensors()
    return it


def litert_run(model, inputs, delegate):
    """The first output of `model` on `inputs` (in the model's input order)."""
    it = litert_interpreter(model, delegate)
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def ort_run(model, inputs, opt):
    """The first output of the .onnx file `model` beside this file on `inputs` (in the model's input order), CPU
    execution provider, graph optimizations all (opt=1) or none (opt=0)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    level = ort.GraphOptimizationLevel
    so.graph_optimization_level = level.ORT_ENABLE_ALL if opt else level.ORT_DISABLE_ALL
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    s = ort.InferenceSession(os.path.join(HERE, model), so, providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: x for i, x in zip(s.get_inputs(), inputs)})[0]
