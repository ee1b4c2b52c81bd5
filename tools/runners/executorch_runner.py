"""executorch_runner.py - ExecuTorch as a parity runner (docs/runners.md): the backend `executorch`.

The model parity sends is ONNX; tools/runners/onnx_torch.py makes it a torch module, torch.export traces it, and
ExecuTorch's own flow lowers it: to_edge_transform_and_lower with the XNNPACK partitioner (delegate=xnnpack, the
default: what XNNPACK takes runs in its delegate, the rest on the portable kernels) or to_edge alone
(delegate=none: ExecuTorch's portable kernels only), then to_executorch. The program (.pte bytes) runs through
executorch.runtime. Lowering costs about a second a model (several under load): programs are cached in memory and
on disk (build/cache/executorch/, keyed by the SHA-256 of the ONNX bytes, the options and the versions), so a suite
run a second time loads them in milliseconds; prepare_ms says which (the reply's "cached").

hello's options: delegate=xnnpack (default) or none; threads=N (XNNPACK's threadpool, default 1).
"""
import hashlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_runner import Unsupported, int_option, serve

from importlib.metadata import PackageNotFoundError, version as _pkg_version

try:
    ET_VERSION, TORCH_VERSION = _pkg_version("executorch"), _pkg_version("torch")
    MISSING = None
except PackageNotFoundError as e:
    ET_VERSION = TORCH_VERSION = None
    MISSING = f"No module named '{e.name}' (make deps RUNTIMES=executorch installs executorch into build/venv)"

np = torch = onnx_torch = None
_ET = {}


def _stack():
    """torch and ExecuTorch's flow, imported at the first load, not at hello: the import takes 10-60 s, and the
    probe (`parity list backends`) only says hello."""
    global np, torch, onnx_torch
    if not _ET:
        import numpy as np
        import torch
        from executorch.exir import to_edge, to_edge_transform_and_lower
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.runtime import Runtime
        import onnx_torch
        _ET.update(to_edge=to_edge, lower=to_edge_transform_and_lower, xnnpack=XnnpackPartitioner,
                   runtime=Runtime.get())
    return _ET


DELEGATES = ("xnnpack", "none")
CACHE_DIR = os.environ.get("PARITY_EXECUTORCH_CACHE") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build", "cache", "executorch")
MEM_CACHE_MAX = 64


class ExecuTorch:
    def __init__(self):
        self.memo = {}

    def hello(self, options):
        if MISSING:
            raise Unsupported(MISSING)
        unknown = sorted(set(options) - {"delegate", "threads"})
        if unknown:
            raise Unsupported(f"unknown option {', '.join(unknown)} (executorch knows delegate, threads)")
        self.delegate = str(options.get("delegate", "xnnpack"))
        if self.delegate not in DELEGATES:
            raise Unsupported(f"option delegate={self.delegate!r}: xnnpack or none")
        self.threads = int_option(options, "threads", 1, 1)
        # XNNPACK runs with FTZ/DAZ set (as the `xnnpack` and `litert` backends declare): measured on relu's
        # subnormal edge cases, which come out as 0 through the delegate; the portable kernels keep them.
        declares = {"flush_subnormals": True} if self.delegate == "xnnpack" else {}
        return {"runtime": "executorch", "version": ET_VERSION, "torch": TORCH_VERSION, "formats": ["onnx"],
                "delegate": self.delegate, "declares": declares}

    def _key(self, model):
        h = hashlib.sha256(model)
        h.update(f"|{self.delegate}|{ET_VERSION}|{TORCH_VERSION}|{_converter_hash()}".encode())
        return h.hexdigest()

    def _lower(self, model):
        g = onnx_torch.read_model(model)
        mod = onnx_torch.OnnxModule(g).eval()
        ex = tuple(torch.from_numpy(np.zeros(s, dtype=t)) for _, t, s in g["inputs"])
        try:
            ep = torch.export.export(mod, ex, strict=False)
        except onnx_torch.Unsupported:
            raise
        except Exception as e:
            raise Unsupported(f"torch.export: {_first_line(e)}") from e
        try:
            et = _ET
            if self.delegate == "xnnpack":
                edge = et["lower"](ep, partitioner=[et["xnnpack"]()])
            else:
                edge = et["to_edge"](ep)
            return edge.to_executorch().buffer
        except Exception as e:
            raise Unsupported(f"lowering: {_first_line(e)}") from e

    def _program(self, model):
        key = self._key(model)
        if key in self.memo:
            return self.memo[key], "memory"
        path = os.path.join(CACHE_DIR, key[:2], key + ".pte")
        try:
            with open(path, "rb") as f:
                pte, where = f.read(), "disk"
        except OSError:
            try:
                pte, where = self._lower(model), "lowered"
            except onnx_torch.Unsupported as e:
                raise Unsupported(str(e)) from e
            _store(path, pte)
        if len(self.memo) >= MEM_CACHE_MAX:
            self.memo.pop(next(iter(self.memo)))
        self.memo[key] = pte
        return pte, where

    def load(self, fmt, model):
        self.method = None
        try:
            et = _stack()
        except ImportError as e:
            raise Unsupported(f"{e} (make deps RUNTIMES=executorch installs executorch into build/venv)") from e
        torch.set_num_threads(self.threads)
        pte, where = self._program(model)
        self.program = et["runtime"].load_program(pte)
        self.method = self.program.load_method("forward")
        return {"cached": where, "pte_bytes": len(pte)}

    def run(self, inputs):
        outs = self.method.execute([torch.from_numpy(x.copy()) for x in inputs])
        return [o.numpy() if hasattr(o, "numpy") else o for o in outs]


def _first_line(e):
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


_CONV_HASH = []


def _converter_hash():
    """The converter's own source is part of the cache key: a fix to it invalidates what it lowered before."""
    if not _CONV_HASH:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_torch.py"), "rb") as f:
            _CONV_HASH.append(hashlib.sha256(f.read()).hexdigest()[:16])
    return _CONV_HASH[0]


def _store(path, data):
    """Best effort: a cache that cannot be written (read-only tree, sandbox) only costs the next run a lowering."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


if __name__ == "__main__":
    serve(ExecuTorch())
