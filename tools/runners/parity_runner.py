"""parity_runner.py - the runner side of parity's runner protocol, version 1 (docs/runners.md).

A runner is an object with hello(options) -> dict, load(fmt, model_bytes) -> None or dict, and
run(list of numpy arrays) -> list of numpy arrays, or (arrays, run_ms); serve(obj) speaks the protocol for it on
stdin/stdout until "bye" or the end of stdin. Raise Unsupported(reason) for what the runtime cannot do: the reply
says "unsupported" (the case, or the backend at hello, is UNSUPPORTED); any other exception is an "error" reply
with its type and message (its lines joined, the first 600 characters: OpenVINO's first line names only where the
exception passed), and its traceback on stderr.
"""
import collections, hashlib, json, os, sys, time, traceback

try:
    import numpy as np
except ImportError as e:  # every request is then answered unsupported, with the reason
    np, NUMPY_MISSING = None, f"{e} (make deps creates build/venv with numpy and the runtimes)"

VERSION = 1
HEADER_MAX = 1 << 20
DTYPES = ("float32", "float16", "uint8", "int8", "int32", "int64", "bool")


class Unsupported(Exception):
    """The runtime cannot do this: an op, a dtype, an option, the runtime itself missing."""


def int_option(options, key, default, lo):
    """An integer option of the backend spec (threads=N, ...) of at least lo, or Unsupported naming it."""
    value = options.get(key, default)
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = lo - 1
    if n < lo:
        raise Unsupported(f"option {key}={value!r}: an integer >= {lo}")
    return n


class ModelMemo:
    """What a runner made of a model file (a compiled model, a session), kept for a later case whose file has the same
    bytes: one graph, other data (the inputs come with each run). Keyed by the SHA-256 of the bytes and the options the
    runner made it with; the `size` most recently used are kept. Only for what the runtime computes the same way
    whatever ran before on it (a compiled model that holds no state between runs)."""

    def __init__(self, size):
        self.size, self.items = size, collections.OrderedDict()

    @staticmethod
    def key(model, *options):
        return hashlib.sha256(repr(options).encode() + b"\0" + bytes(model)).hexdigest()

    def get(self, key):
        if key in self.items:
            self.items.move_to_end(key)
        return self.items.get(key)

    def put(self, key, value):
        self.items[key] = value
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)


class Malformed(Exception):
    """A request that breaks the protocol (answered as an error, without a traceback)."""


def _read(inp, n):
    """n bytes of stdin into a fresh bytearray (the inputs are then writable arrays), or fewer at its end."""
    buf, got = bytearray(n), 0
    while got < n:
        k = inp.readinto(memoryview(buf)[got:])
        if not k:
            return buf[:got]
        got += k
    return buf


def _array(spec, blob):
    """One input from its {"dtype", "shape"} and its bytes, checked against each other."""
    if not isinstance(spec, dict) or spec.get("dtype") not in DTYPES:
        raise Malformed(f"input {spec!r}: dtype is not one of {', '.join(DTYPES)}")
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise Malformed(f"input {spec!r}: shape is not a list of sizes")
    dt = np.dtype(spec["dtype"]).newbyteorder("<")
    size = dt.itemsize * int(np.prod(shape, dtype=np.int64))
    if len(blob) != size:
        raise Malformed(f"input {spec!r}: {len(blob)} bytes, its dtype and shape make {size}")
    return np.frombuffer(blob, dtype=dt).reshape(shape).astype(dt.newbyteorder("="), copy=False)


def _handle(obj, req, blobs, state):
    """One request: the reply's header fields and blobs. bye is handled by serve."""
    if np is None:
        raise Unsupported(NUMPY_MISSING)
    op = req.get("op")
    if op == "hello":
        if req.get("parity_runner") != VERSION:
            raise Malformed(f"protocol version {req.get('parity_runner')!r}; this runner speaks {VERSION}")
        options = req.get("options", {})
        if not isinstance(options, dict):
            raise Malformed('"options" is not an object')
        state["hello"] = obj.hello(options) or {}
        return state["hello"], []
    if op == "load":
        if "hello" not in state:
            raise Malformed("load before hello")
        fmt, formats = req.get("format"), state["hello"].get("formats")
        if len(blobs) != 1:
            raise Malformed(f"load has {len(blobs)} blobs, not 1 (the model file)")
        if formats and fmt not in formats:
            raise Unsupported(f"format {fmt!r}: this runner reads {', '.join(formats)}")
        state.pop("loaded", None)
        t = time.perf_counter()
        extra = obj.load(fmt, bytes(blobs[0])) or {}
        state["loaded"] = True
        return {"prepare_ms": (time.perf_counter() - t) * 1e3, **extra}, []
    if op == "run":
        specs = req.get("inputs")
        if not isinstance(specs, list) or len(specs) != len(blobs):
            raise Malformed(f'run: "inputs" is not a list of {len(blobs)} (one per blob)')
        if not state.get("loaded"):
            raise Malformed("run before a model was loaded")
        inputs = [_array(s, b) for s, b in zip(specs, blobs)]
        t = time.perf_counter()
        res = obj.run(inputs)
        run_ms = (time.perf_counter() - t) * 1e3
        if isinstance(res, tuple) and len(res) == 2 and isinstance(res[1], (int, float, np.floating)):
            res, run_ms = res
        outs = [np.asarray(a) for a in res]
        for k, a in enumerate(outs):
            if a.dtype.name not in DTYPES:
                raise Malformed(f"output {k} is {a.dtype.name}, which the protocol lacks")
        meta = [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in outs]
        return {"outputs": meta, "run_ms": float(run_ms)}, \
            [np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).reshape(-1).view(np.uint8) for a in outs]
    raise Malformed(f"unknown op {op!r}")


def serve(obj):
    """Answer requests on stdin until bye or its end; the protocol has the real stdout, print goes to stderr."""
    proto = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp, state = sys.stdin.buffer, {}
    while True:
        line = inp.readline(HEADER_MAX + 1)
        if not line:
            return
        blobs = []
        try:
            if not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # skip the rest: the next request starts after it
                    line = inp.readline(HEADER_MAX)
                raise Malformed(f"a request line over {HEADER_MAX} bytes or not ended by a newline")
            try:
                req = json.loads(line)
            except ValueError as e:
                raise Malformed(f"the request is not JSON: {e}")
            if not isinstance(req, dict):
                raise Malformed("the request is not a JSON object")
            sizes = req.get("blobs", [])
            if not isinstance(sizes, list) or not all(type(n) is int and n >= 0 for n in sizes):
                raise Malformed('"blobs" is not a list of sizes')
            blobs = [_read(inp, n) for n in sizes]
            if any(len(b) != n for b, n in zip(blobs, sizes)):
                return  # stdin ended inside a blob
            if req.get("op") == "bye":
                return
            head, blobs = _handle(obj, req, blobs, state)
            line = json.dumps({"ok": True, **head, **({"blobs": [b.nbytes for b in blobs]} if blobs else {})})
        except Exception as e:
            blobs = []
            if isinstance(e, (Unsupported, Malformed)):
                msg = str(e)
            else:
                msg = f"{type(e).__name__}: {' '.join(str(e).split())[:600]}"
                traceback.print_exc()
            line = json.dumps({"ok": False, "status": "unsupported" if isinstance(e, Unsupported) else "error",
                               "message": msg[:4000]})
        sys.stderr.flush()
        proto.write(line.encode() + b"\n")
        for b in blobs:
            proto.write(b)
        proto.flush()
