"""findings_common.py - what the finding scripts beside it share: the model file beside them run once through the
runtime's own API, with the options of parity's runner (tools/runners/ort_runner.py, litert_runner.py, and
ncnn_runner.py for a one-layer ncnn network written inline, openvino_runner.py for a model built with OpenVINO's
opset API inline): one thread,
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


def ncnn_run(param, x, vulkan=False, out="y"):
    """ncnn's output blob `out` of the network written in `param` (.param text, layers without weights) on the numpy
    array `x` as its input blob "x", with the options of parity's runner (tools/runners/ncnn_runner.py): one
    thread, the fp16 and bf16 storage, packed and arithmetic options off, Winograd off; the CPU path, or the Vulkan
    path on device 0 (vulkan=True). The input Mat is cloned (ncnn 1: a Mat over a numpy array crashes an in-place
    layer)."""
    import numpy as np
    import ncnn
    net = ncnn.Net()
    net.opt.use_vulkan_compute = vulkan
    net.opt.num_threads = 1
    for k in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage", "use_bf16_packed"):
        setattr(net.opt, k, False)
    net.opt.use_winograd_convolution = False
    assert net.load_param_mem(param) == 0
    net.load_model_mem("")
    ex = net.create_extractor()
    ex.input("x", ncnn.Mat(np.ascontiguousarray(x, np.float32)).clone())
    ret, m = ex.extract(out)
    assert ret == 0
    return np.array(m)


def ncnn_layer(line, n):
    """The .param text of Input x ([n]) -> one layer `line` (its type and parameters) -> y."""
    ty, params = (line.split(" ", 1) + [""])[:2]
    return f"7767517\n2 2\nInput x 0 1 x 0={n}\n{ty} op 1 1 x y {params}\n"


def openvino_run(build, inputs):
    """The first output of the OpenVINO model that build(ops, ov) returns as (results, parameters), built with
    OpenVINO's own opset 13 API, on `inputs`, compiled for the CPU plugin with the options of parity's runner
    (tools/runners/openvino_runner.py): INFERENCE_PRECISION_HINT f32, one thread, one stream."""
    import openvino as ov
    import openvino.opset13 as ops
    results, params = build(ops, ov)
    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1"}
    cm = core.compile_model(ov.Model(results, params), "CPU", cfg)
    return cm(inputs)[cm.outputs[0]]


def openvino_run_file(model, inputs):
    """All outputs of the .onnx file `model` beside this file, read by OpenVINO's ONNX frontend and compiled for the
    CPU plugin with the options of parity's runner (as openvino_run), on `inputs` (in the model's input order)."""
    import openvino as ov
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1"}
    cm = ov.Core().compile_model(os.path.join(HERE, model), "CPU", cfg)
    res = cm(inputs)
    return [res[o] for o in cm.outputs]
