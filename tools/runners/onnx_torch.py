"""onnx_torch.py - the ONNX graphs parity exports as torch modules, for runtimes whose input is a PyTorch program
(ExecuTorch: tools/runners/executorch_runner.py). No dependency on the onnx package: a small protobuf reader of the
fields parity's writer uses (formats/onnx_write.c), then one table entry per ONNX op that maps it to torch functions
of the same semantics (opset 17). An op or attribute outside the table raises Unsupported naming it.

Values that decide shapes (Reshape's shape, Slice's starts, Pad's pads, Resize's sizes, Clip's bounds, reduction
axes) must be initializers: they are read here as Python numbers, so torch.export sees a static graph.
"""
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F


class Unsupported(Exception):
    pass


# ---- protobuf ------------------------------------------------------------------------------------------------

def _varint(b, i):
    n = s = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return n, i


def _fields(b):
    """(field number, wire type, value) of one message: ints for varints, bytes for the rest."""
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = _varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        elif w == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise Unsupported(f"model: protobuf wire type {w} (field {f})")
        out.append((f, w, v))
    return out


def _signed(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def _ints(w, v):
    """A repeated int64: packed (one bytes value) or not."""
    if w == 0:
        return [_signed(v)]
    out, i = [], 0
    while i < len(v):
        n, i = _varint(v, i)
        out.append(_signed(n))
    return out


def _floats(w, v):
    return list(struct.unpack(f"<{len(v) // 4}f", v)) if w == 2 else [struct.unpack("<f", v)[0]]


# ONNX TensorProto.DataType -> numpy
NP_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16,
         11: np.float64}


def _tensor(b):
    dims, dt, name, raw, f32, i32, i64 = [], 1, "", None, [], [], []
    for f, w, v in _fields(b):
        if f == 1:
            dims += _ints(w, v)
        elif f == 2:
            dt = v
        elif f == 4:
            f32 += _floats(w, v)
        elif f == 5:
            i32 += _ints(w, v)
        elif f == 7:
            i64 += _ints(w, v)
        elif f == 8:
            name = v.decode()
        elif f == 9:
            raw = v
    if dt not in NP_OF:
        raise Unsupported(f"model: tensor {name!r} has ONNX data type {dt}")
    t = NP_OF[dt]
    if raw is not None:
        a = np.frombuffer(raw, dtype=np.dtype(t).newbyteorder("<")).astype(t)
    elif f32:
        a = np.array(f32, dtype=t)
    elif i64:
        a = np.array(i64, dtype=t)
    else:
        a = np.array(i32, dtype=np.int32).astype(t)  # int32_data also carries 8-bit, bool and f16 bits
    return name, a.reshape(dims)


def _attr(b):
    name, kind, val = "", 0, {}
    for f, w, v in _fields(b):
        if f == 1:
            name = v.decode()
        elif f == 20:
            kind = v
        elif f == 2:
            val["f"] = _floats(w, v)[0]
        elif f == 3:
            val["i"] = _signed(v)
        elif f == 4:
            val["s"] = v.decode()
        elif f == 5:
            val["t"] = _tensor(v)[1]
        elif f == 7:
            val.setdefault("floats", []).extend(_floats(w, v))
        elif f == 8:
            val.setdefault("ints", []).extend(_ints(w, v))
    # AttributeType: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS, 7 INTS
    key = {1: "f", 2: "i", 3: "s", 4: "t", 6: "floats", 7: "ints"}.get(kind)
    if key is None:
        raise Unsupported(f"model: attribute {name!r} of type {kind}")
    return name, val.get(key, [] if key in ("floats", "ints") else None)


def _value_info(b):
    name, elem, shape = "", 1, []
    for f, w, v in _fields(b):
        if f == 1:
            name = v.decode()
        elif f == 2:
            for f2, _, tt in _fields(v):
                if f2 != 1:
                    continue
                for f3, w3, v3 in _fields(tt):
                    if f3 == 1:
                        elem = v3
                    elif f3 == 2:
                        for _, _, dim in _fields(v3):
                            d = dict((f4, v4) for f4, _, v4 in _fields(dim))
                            if 1 not in d:
                                raise Unsupported(f"model: input {name!r} has a symbolic dimension")
                            shape.append(d[1])
    return name, elem, shape


def read_model(data):
    """{"inputs": [(name, numpy dtype, shape)], "outputs": [names], "inits": {name: array}, "nodes": [...]}."""
    graph = None
    for f, _, v in _fields(data):
        if f == 7:
            graph = v
    if graph is None:
        raise Unsupported("model: no graph (is it an ONNX file?)")
    g = {"inputs": [], "outputs": [], "inits": {}, "nodes": []}
    for f, _, v in _fields(graph):
        if f == 1:
            node = {"inputs": [], "outputs": [], "op": "", "domain": "", "attrs": {}}
            for f2, _, v2 in _fields(v):
                if f2 == 1:
                    node["inputs"].append(v2.decode())
                elif f2 == 2:
                    node["outputs"].append(v2.decode())
                elif f2 == 4:
                    node["op"] = v2.decode()
                elif f2 == 7:
                    node["domain"] = v2.decode()
                elif f2 == 5:
                    k, a = _attr(v2)
                    node["attrs"][k] = a
            g["nodes"].append(node)
        elif f == 5:
            name, a = _tensor(v)
            g["inits"][name] = a
        elif f == 11:
            g["inputs"].append(_value_info(v))
        elif f == 12:
            g["outputs"].append(_value_info(v)[0])
    g["inputs"] = [(n, NP_OF.get(e), s) for n, e, s in g["inputs"] if n not in g["inits"]]
    for n, t, _ in g["inputs"]:
        if t is None:
            raise Unsupported(f"model: input {n!r} has an ONNX data type this runner does not map")
    return g


# ---- ops -----------------------------------------------------------------------------------------------------

def _const(ctx, name, what):
    if name not in ctx.consts:
        raise Unsupported(f"{ctx.op}: {what} ({name!r}) is computed in the graph, not an initializer")
    return ctx.consts[name]


def _opt_const(ctx, ins, k, what):
    return None if len(ins) <= k or ins[k] == "" else _const(ctx, ins[k], what)


def _pads_split(pads, n):
    """ONNX's [b1..bn, e1..en] -> F.pad's list (last dim first)."""
    out = []
    for d in reversed(range(n)):
        out += [int(pads[d]), int(pads[n + d])]
    return out


def _conv(ctx, x, w, b=None):
    a = ctx.attrs
    n = w.dim() - 2
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise Unsupported(f"Conv: auto_pad={a['auto_pad']}")
    pads = a.get("pads") or [0] * 2 * n
    stride, dil = a.get("strides") or [1] * n, a.get("dilations") or [1] * n
    if pads[:n] != pads[n:]:
        x, pads = F.pad(x, _pads_split(pads, n)), [0] * 2 * n
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}.get(n)
    if fn is None:
        raise Unsupported(f"Conv: {n} spatial dimensions")
    return fn(x, w, b, stride, pads[:n], dil, a.get("group", 1))


def _conv_t(ctx, x, w, b=None):
    a = ctx.attrs
    n = w.dim() - 2
    if n != 2 or a.get("output_shape") or a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise Unsupported("ConvTranspose: only 2-d with explicit pads")
    pads = a.get("pads") or [0] * 4
    y = F.conv_transpose2d(x, w, b, a.get("strides") or [1, 1], 0, a.get("output_padding") or [0, 0],
                           a.get("group", 1), a.get("dilations") or [1, 1])
    return y[:, :, pads[0]:y.shape[2] - pads[2], pads[1]:y.shape[3] - pads[3]]


def _pool_pads(ctx, x, n, fill):
    a = ctx.attrs
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", ""):
        raise Unsupported(f"{ctx.op}: auto_pad={a['auto_pad']}")
    k = a["kernel_shape"]
    pads = a.get("pads") or [0] * 2 * n
    if pads[:n] != pads[n:] or any(2 * p > kk for p, kk in zip(pads, k)):
        return F.pad(x, _pads_split(pads, n), value=fill), [0] * n, True
    return x, pads[:n], False


def _maxpool(ctx, x):
    a = ctx.attrs
    n = len(a["kernel_shape"])
    if n != 2:
        raise Unsupported(f"MaxPool: {n} spatial dimensions")
    x, p, _ = _pool_pads(ctx, x, n, -math.inf)
    return F.max_pool2d(x, a["kernel_shape"], a.get("strides") or [1, 1], p, a.get("dilations") or [1, 1],
                        bool(a.get("ceil_mode", 0)))


def _avgpool(ctx, x):
    a = ctx.attrs
    n = len(a["kernel_shape"])
    if n != 2:
        raise Unsupported(f"AveragePool: {n} spatial dimensions")
    include = bool(a.get("count_include_pad", 0))
    x2, p, padded = _pool_pads(ctx, x, n, 0.0)
    if padded and not include and any(a.get("pads") or []):
        raise Unsupported("AveragePool: asymmetric pads without count_include_pad")
    return F.avg_pool2d(x2, a["kernel_shape"], a.get("strides") or [1, 1], p, bool(a.get("ceil_mode", 0)),
                        include)


def _gemm(ctx, A, B, C=None):
    a = ctx.attrs
    if a.get("transA", 0):
        A = A.t()
    if a.get("transB", 0):
        B = B.t()
    y = torch.matmul(A, B)
    if a.get("alpha", 1.0) != 1.0:
        y = y * a["alpha"]
    if C is not None:
        y = y + (C * a["beta"] if a.get("beta", 1.0) != 1.0 else C)
    return y


def _axes(ctx, x, k=1):
    a = ctx.attrs.get("axes")
    if a is None and len(ctx.ins) > k and ctx.ins[k]:
        a = [int(v) for v in np.ravel(_const(ctx, ctx.ins[k], "axes"))]
    return None if a is None else [int(v) % max(x.dim(), 1) for v in a]


def _reduce(fn):
    def red(ctx, x, *_):
        axes = _axes(ctx, x)
        keep = bool(ctx.attrs.get("keepdims", 1))
        if not axes:
            if ctx.attrs.get("noop_with_empty_axes", 0):
                return x
            axes = list(range(x.dim()))
        for d in sorted(axes, reverse=True):
            x = fn(x, d, keep)
        return x
    return red


def _reshape(ctx, x, _):
    shape = [int(v) for v in _const(ctx, ctx.ins[1], "shape")]
    if not ctx.attrs.get("allowzero", 0):
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return torch.reshape(x, shape)


def _slice(ctx, x, *_):
    ins = ctx.ins
    starts = _const(ctx, ins[1], "starts")
    ends = _const(ctx, ins[2], "ends")
    axes = _opt_const(ctx, ins, 3, "axes")
    steps = _opt_const(ctx, ins, 4, "steps")
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.dim()
    for s, e, ax, st in zip(starts, ends, axes, steps):
        ax, n, st = int(ax) % x.dim(), x.shape[int(ax) % x.dim()], int(st)
        if st <= 0:
            raise Unsupported(f"Slice: step {st}")
        s, e = int(s), int(e)
        s = max(0, min(n, s + n if s < 0 else s))
        e = max(0, min(n, e + n if e < 0 else e))
        idx[ax] = slice(s, e, st)
    return x[tuple(idx)]


def _pad(ctx, x, *_):
    pads = [int(v) for v in _const(ctx, ctx.ins[1], "pads")]
    value = _opt_const(ctx, ctx.ins, 2, "constant_value")
    if _opt_const(ctx, ctx.ins, 3, "axes") is not None:
        raise Unsupported("Pad: axes input")
    mode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}.get(ctx.attrs.get("mode", "constant"))
    if mode is None:
        raise Unsupported(f"Pad: mode={ctx.attrs['mode']}")
    n = x.dim()
    p = _pads_split(pads, n)
    while len(p) > 2 and p[-1] == 0 and p[-2] == 0:
        p = p[:-2]
    if mode == "constant":
        return F.pad(x, p, value=float(value) if value is not None else 0.0)
    return F.pad(x, p, mode=mode)


def _clip(ctx, x, *_):
    lo = _opt_const(ctx, ctx.ins, 1, "min")
    hi = _opt_const(ctx, ctx.ins, 2, "max")
    return torch.clamp(x, None if lo is None else float(lo), None if hi is None else float(hi))


def _resize(ctx, x, *_):
    a = ctx.attrs
    scales = _opt_const(ctx, ctx.ins, 2, "scales")
    sizes = _opt_const(ctx, ctx.ins, 3, "sizes")
    if x.dim() != 4:
        raise Unsupported(f"Resize: rank {x.dim()}")
    if sizes is not None and len(sizes):
        size, sc = [int(v) for v in sizes[2:]], None
    elif scales is not None and len(scales):
        size, sc = None, [float(v) for v in scales[2:]]
    else:
        raise Unsupported("Resize: neither scales nor sizes")
    mode, ct = a.get("mode", "nearest"), a.get("coordinate_transformation_mode", "half_pixel")
    near = a.get("nearest_mode", "round_prefer_floor")
    if mode == "nearest" and ct == "asymmetric" and near == "floor":
        return F.interpolate(x, size=size, scale_factor=sc, mode="nearest")
    if mode == "nearest" and ct == "half_pixel" and near == "round_prefer_ceil":
        return F.interpolate(x, size=size, scale_factor=sc, mode="nearest-exact")
    if mode in ("linear", "cubic") and ct in ("half_pixel", "align_corners", "pytorch_half_pixel") and \
            (mode == "linear" or a.get("cubic_coeff_a", -0.75) == -0.75) and not a.get("exclude_outside", 0):
        m = "bilinear" if mode == "linear" else "bicubic"
        return F.interpolate(x, size=size, scale_factor=sc, mode=m, align_corners=(ct == "align_corners"))
    raise Unsupported(f"Resize: mode={mode}, coordinate_transformation_mode={ct}, nearest_mode={near}")


def _arg(fn):
    """ArgMax / ArgMin (opset 13): torch's give the first of equal elements, so select_last_index=1 takes the first
    of the reversed axis; the indices are int64, as ONNX's."""
    def arg(ctx, x):
        ax = ctx.attrs.get("axis", 0) % max(x.dim(), 1)
        keep = bool(ctx.attrs.get("keepdims", 1))
        if ctx.attrs.get("select_last_index", 0):
            return (x.shape[ax] - 1) - fn(torch.flip(x, [ax]), ax, keep)
        return fn(x, ax, keep)
    return arg


def _gather(ctx, x, idx):
    ax = ctx.attrs.get("axis", 0) % x.dim()
    idx = idx.long()
    idx = torch.where(idx < 0, idx + x.shape[ax], idx)
    out = torch.index_select(x, ax, idx.reshape(-1))
    return out.reshape(list(x.shape[:ax]) + list(idx.shape) + list(x.shape[ax + 1:]))


def _layer_norm(ctx, x, scale, bias=None):
    ax = ctx.attrs.get("axis", -1) % x.dim()
    if len(ctx.outputs) > 1 and any(ctx.outputs[1:]):
        raise Unsupported("LayerNormalization: Mean / InvStdDev outputs")
    return F.layer_norm(x, list(x.shape[ax:]), scale, bias, ctx.attrs.get("epsilon", 1e-5))


def _batch_norm(ctx, x, s, b, mean, var):
    if len(ctx.outputs) > 1 and any(ctx.outputs[1:]):
        raise Unsupported("BatchNormalization: training outputs")
    return F.batch_norm(x, mean, var, s, b, False, 0.0, ctx.attrs.get("epsilon", 1e-5))


def _softmax(fn):
    def sm(ctx, x):
        return fn(x, dim=ctx.attrs.get("axis", -1))
    return sm


def _variadic(fn):
    def v(ctx, *xs):
        y = xs[0]
        for z in xs[1:]:
            y = fn(y, z)
        return y
    return v


def _unary(fn):
    return lambda ctx, x: fn(x)


def _binary(fn):
    return lambda ctx, x, y: fn(x, y)


def _cast(ctx, x):
    t = NP_OF.get(ctx.attrs.get("to"))
    if t is None:
        raise Unsupported(f"Cast: to={ctx.attrs.get('to')}")
    return x.to(getattr(torch, np.dtype(t).name if t is not np.bool_ else "bool"))


OPS = {
    "Abs": _unary(torch.abs), "Neg": _unary(torch.neg), "Relu": _unary(torch.relu),
    "Sigmoid": _unary(torch.sigmoid), "Tanh": _unary(torch.tanh), "Exp": _unary(torch.exp),
    "Log": _unary(torch.log), "Sqrt": _unary(torch.sqrt), "Erf": _unary(torch.erf), "Sin": _unary(torch.sin),
    "Cos": _unary(torch.cos), "Tan": _unary(torch.tan), "Floor": _unary(torch.floor), "Ceil": _unary(torch.ceil),
    "Round": _unary(torch.round), "Sign": _unary(torch.sign), "Reciprocal": _unary(torch.reciprocal),
    "Softplus": _unary(F.softplus),
    "Softsign": _unary(lambda x: torch.where(torch.isinf(x), torch.sign(x), F.softsign(x))),  # F.softsign: NaN at inf
    "HardSwish": _unary(F.hardswish),
    "Not": _unary(torch.logical_not), "Identity": _unary(lambda x: x),
    "Elu": lambda ctx, x: F.elu(x, ctx.attrs.get("alpha", 1.0)),
    "LeakyRelu": lambda ctx, x: F.leaky_relu(x, ctx.attrs.get("alpha", 0.01)),
    "HardSigmoid": lambda ctx, x: torch.clamp(x * ctx.attrs.get("alpha", 0.2) + ctx.attrs.get("beta", 0.5), 0, 1),
    "Gelu": lambda ctx, x: F.gelu(x, approximate=ctx.attrs.get("approximate", "none")),
    "Add": _binary(torch.add), "Sub": _binary(torch.sub), "Mul": _binary(torch.mul), "Div": _binary(torch.div),
    "Pow": _binary(torch.pow), "Max": _variadic(torch.maximum), "Min": _variadic(torch.minimum),
    "Sum": _variadic(torch.add), "Equal": _binary(torch.eq), "Greater": _binary(torch.gt),
    "Less": _binary(torch.lt), "GreaterOrEqual": _binary(torch.ge), "LessOrEqual": _binary(torch.le),
    "And": _binary(torch.logical_and), "Or": _binary(torch.logical_or), "Xor": _binary(torch.logical_xor),
    "Where": lambda ctx, c, x, y: torch.where(c, x, y), "PRelu": _binary(lambda x, s: torch.where(x < 0, x * s, x)),
    "MatMul": _binary(torch.matmul), "Gemm": _gemm, "Conv": _conv, "ConvTranspose": _conv_t,
    "MaxPool": _maxpool, "AveragePool": _avgpool,
    "GlobalAveragePool": lambda ctx, x: torch.mean(x, dim=list(range(2, x.dim())), keepdim=True),
    "GlobalMaxPool": lambda ctx, x: torch.amax(x, dim=list(range(2, x.dim())), keepdim=True),
    "Softmax": _softmax(torch.softmax), "LogSoftmax": _softmax(torch.log_softmax),
    "ReduceSum": _reduce(lambda x, d, k: torch.sum(x, d, k)),
    "ReduceMean": _reduce(lambda x, d, k: torch.mean(x, d, k)),
    "ReduceMax": _reduce(lambda x, d, k: torch.amax(x, d, k)),
    "ReduceMin": _reduce(lambda x, d, k: torch.amin(x, d, k)),
    "ReduceProd": _reduce(lambda x, d, k: torch.prod(x, d, k)),
    "ArgMax": _arg(torch.argmax), "ArgMin": _arg(torch.argmin),
    "Reshape": _reshape, "Slice": _slice, "Pad": _pad, "Clip": _clip, "Resize": _resize, "Gather": _gather,
    "Transpose": lambda ctx, x: x.permute(ctx.attrs.get("perm") or list(reversed(range(x.dim())))),
    "Flatten": lambda ctx, x: _flatten(ctx, x),
    "Concat": lambda ctx, *xs: torch.cat(xs, ctx.attrs["axis"]),
    "Unsqueeze": lambda ctx, x, *_: _unsqueeze(ctx, x), "Squeeze": lambda ctx, x, *_: _squeeze(ctx, x),
    "LayerNormalization": _layer_norm, "BatchNormalization": _batch_norm,
    "InstanceNormalization": lambda ctx, x, s, b: F.instance_norm(x, weight=s, bias=b,
                                                                  eps=ctx.attrs.get("epsilon", 1e-5)),
    "Cast": _cast,
}


def _flatten(ctx, x):
    a = ctx.attrs.get("axis", 1)
    a = a + x.dim() if a < 0 else a
    return x.reshape(int(np.prod(x.shape[:a])), -1)


def _unsqueeze(ctx, x):
    axes = ctx.attrs.get("axes") or [int(v) for v in np.ravel(_const(ctx, ctx.ins[1], "axes"))]
    for a in sorted(int(a) % (x.dim() + len(axes)) for a in axes):
        x = torch.unsqueeze(x, a)
    return x


def _squeeze(ctx, x):
    axes = _axes(ctx, x)
    return torch.squeeze(x) if axes is None else torch.squeeze(x, axes)


class _Ctx:
    def __init__(self, node, consts):
        self.op, self.attrs, self.ins, self.outputs, self.consts = node["op"], node["attrs"], node["inputs"], \
            node["outputs"], consts


class OnnxModule(torch.nn.Module):
    """The graph as a module: forward runs the nodes in the file's order (ONNX's are topologically sorted)."""

    def __init__(self, g):
        super().__init__()
        self.g = g
        self.consts = dict(g["inits"])
        self.names = {}
        for k, (name, a) in enumerate(g["inits"].items()):
            self.names[name] = f"c{k}"
            self.register_buffer(f"c{k}", torch.from_numpy(np.array(a)), persistent=False)
        for node in g["nodes"]:
            if node["domain"] not in ("", "ai.onnx"):
                raise Unsupported(f"op {node['domain']}.{node['op']}")
            if node["op"] == "Constant":
                self.consts[node["outputs"][0]] = node["attrs"].get("value")
            elif node["op"] not in OPS:
                raise Unsupported(f"op {node['op']} (this runner's ONNX to torch table lacks it)")

    def forward(self, *xs):
        env = {n: x for (n, _, _), x in zip(self.g["inputs"], xs)}
        for name in self.names:
            env[name] = getattr(self, self.names[name])
        for node in self.g["nodes"]:
            if node["op"] == "Constant":
                env[node["outputs"][0]] = torch.from_numpy(np.array(node["attrs"]["value"]))
                continue
            args = [env[i] if i else None for i in node["inputs"]]
            while args and args[-1] is None:
                args.pop()
            y = OPS[node["op"]](_Ctx(node, self.consts), *args)
            env[node["outputs"][0]] = y
        return tuple(env[n] for n in self.g["outputs"])
