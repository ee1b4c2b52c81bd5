"""ncnn_runner.py - Tencent's ncnn as a parity runner (docs/runners.md): the backend `ncnn`.

The model comes as parity's ncnn block (formats/ncnn.h): a JSON manifest line (the sizes of the .param and the
.bin; per graph input and output its blob name, parity's shape and ncnn's, which drops the batch of 1), the .param
text, the .bin. Inputs arrive in parity's shape and go to ncnn as its Mat of the manifest's shape (the same bytes);
outputs come back reshaped to parity's.

hello's options:
- vulkan=0 (ncnn's CPU path, the default) or 1 (its Vulkan compute path on device 0, Mesa's lavapipe here);
- fp16=0 (the default: the fp16 and bf16 storage, packed and arithmetic options off, so ncnn computes in f32) or 1
  (ncnn's own defaults: on Vulkan, where lavapipe has fp16 arithmetic, declared f16; on the x86 CPU nothing is
  declared, since ncnn then stores only InnerProduct's weights in fp16, measured on the quick suite, and a runner
  declares one arithmetic for the whole graph);
- winograd=0 (the default: ncnn's Winograd convolutions off, since parity's declaration of a Winograd node does not
  reach a runner; with them 30 conv2d records of the quick suite miss the f32 budget by 1.1-30x, as a Winograd
  transform does) or 1 (ncnn's default);
- threads=N (default 1).
"""
import atexit, json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import Unsupported, int_option, serve

try:
    import numpy as np
    import ncnn
    MISSING = None
except ImportError as e:
    ncnn, MISSING = None, f"{e} (make deps RUNTIMES=ncnn installs ncnn into build/venv)"

FP16_OPTS = ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage", "use_bf16_packed")


def _flag(key, value):
    v = str(value)
    if v not in ("0", "1"):
        raise Unsupported(f"option {key}={value!r}: 0 or 1")
    return v == "1"


class Ncnn:
    def hello(self, options):
        if ncnn is None:
            raise Unsupported(MISSING)
        unknown = sorted(set(options) - {"vulkan", "fp16", "winograd", "threads"})
        if unknown:
            raise Unsupported(f"unknown option {', '.join(unknown)} (ncnn knows vulkan, fp16, winograd, threads)")
        self.winograd = _flag("winograd", options.get("winograd", "0"))
        self.vulkan = _flag("vulkan", options.get("vulkan", "0"))
        self.fp16 = _flag("fp16", options.get("fp16", "0"))
        self.threads = int_option(options, "threads", 1, 1)
        hello = {"runtime": "ncnn", "version": ncnn.__version__, "formats": ["ncnn"]}
        if self.vulkan:
            if ncnn.get_gpu_count() < 1:
                raise Unsupported("vulkan=1: ncnn finds no Vulkan device (Mesa's lavapipe: mesa-vulkan-drivers)")
            hello["device"] = ncnn.get_gpu_info(0).device_name()
        if self.fp16 and self.vulkan:
            hello["declares"] = {"arith": "f16"}
        fd, self.binpath = tempfile.mkstemp(prefix="parity-ncnn-", suffix=".bin")
        os.close(fd)
        atexit.register(os.unlink, self.binpath)
        self.net = None
        return hello

    def load(self, fmt, model):
        nl = model.find(b"\n")
        man = json.loads(model[:nl]) if nl > 0 else None
        if not isinstance(man, dict) or man.get("parity_ncnn") != 1:
            raise ValueError("the model is not parity's ncnn block (a manifest line first)")
        p0 = nl + 1
        p1 = p0 + man["param"]
        if p1 + man["bin"] != len(model):
            raise ValueError(f"the block has {len(model)} bytes, its manifest says {p1 + man['bin']}")
        with open(self.binpath, "wb") as f:  # from a file ncnn copies the weights (from memory it keeps a pointer)
            f.write(model[p1:])
        if self.net is not None:
            self.net.clear()
        net = ncnn.Net()
        net.opt.use_vulkan_compute = self.vulkan
        net.opt.num_threads = self.threads
        if not self.fp16:
            for k in FP16_OPTS:
                setattr(net.opt, k, False)
        if not self.winograd:
            net.opt.use_winograd_convolution = False
        if net.load_param_mem(model[p0:p1].decode()) != 0:
            raise Unsupported("ncnn's load_param refused the .param (its log above names the layer)")
        if net.load_model(self.binpath) != 0:
            raise ValueError("ncnn's load_model failed")
        self.net, self.man = net, man

    def run(self, inputs):
        ins, outs = self.man["inputs"], self.man["outputs"]
        if len(inputs) != len(ins):
            raise ValueError(f"{len(inputs)} inputs, the model has {len(ins)}")
        ex = self.net.create_extractor()
        for spec, x in zip(ins, inputs):
            if list(x.shape) != spec["shape"]:
                raise ValueError(f"input {spec['blob']} is {list(x.shape)}, the model's is {spec['shape']}")
            # cloned: a Mat made from a numpy array that an in-place first layer (ReLU, ...) reads crashes the
            # extractor (docs/findings.md, ncnn 1)
            m = ncnn.Mat(np.ascontiguousarray(x, dtype=np.float32).reshape(spec["ncnn"])).clone()
            if ex.input(spec["blob"], m) != 0:
                raise ValueError(f"ncnn refused input {spec['blob']}")
        res = []
        for spec in outs:
            ret, m = ex.extract(spec["blob"])
            if ret != 0:
                raise ValueError(f"ncnn's extract of {spec['blob']} returned {ret}")
            a = np.array(m, dtype=np.float32)
            if list(a.shape) != spec["ncnn"]:
                raise ValueError(f"output {spec['blob']} has ncnn shape {list(a.shape)}, the model's is "
                                 f"{spec['ncnn']} (parity's {spec['shape']})")
            res.append(a.reshape(spec["shape"]))
        return res


if __name__ == "__main__":
    serve(Ncnn())
