"""test_protocol.py - the runner side of parity's runner protocol alone (docs/runners.md), without parity's C side:
tools/runners' framing (through echo_runner.py), ort_runner.py and litert_runner.py on small models, and the
hostile runners here each misbehaving as it says. Run with build/venv/bin/python; what cannot run is skipped."""
import json, os, select, signal, struct, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNERS = os.path.join(ROOT, "tools", "runners")
PARITY = os.path.join(ROOT, "build", "parity")
sys.path.insert(0, HERE)
import numpy as np
import onnx_bytes as ob

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    if not ok:
        print(f"FAIL {name}: {detail}")


def skip(name, why):
    print(f"skip {name}: {why}")


class Runner:
    """A runner process and our side of the protocol, with timeouts; its stderr is drained and counted."""

    def __init__(self, script, env=None, argv=None):
        self.p = subprocess.Popen(argv or [sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, start_new_session=True)
        self.buf, self.err, self.err_bytes = b"", b"", 0
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        while True:
            b = os.read(self.p.stderr.fileno(), 1 << 20)
            if not b:
                return
            self.err_bytes += len(b)
            self.err = (self.err + b)[-65536:]

    def send(self, head, blobs=()):
        if blobs:
            head = {**head, "blobs": [len(b) for b in blobs]}
        self.send_raw(json.dumps(head).encode() + b"\n" + b"".join(blobs))

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def _fill(self, deadline):
        r, _, _ = select.select([self.p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            raise TimeoutError("no reply in time")
        b = os.read(self.p.stdout.fileno(), 1 << 20)
        if not b:
            raise EOFError("the runner closed its stdout")
        self.buf += b

    def reply(self, timeout=30.0, limit=1 << 20):
        """(header, blobs). TimeoutError, EOFError, or ValueError (a line over limit, or not JSON)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if len(self.buf) > limit:
                raise ValueError(f"no newline in the first {len(self.buf)} bytes")
            self._fill(deadline)
        line, self.buf = self.buf.split(b"\n", 1)
        head = json.loads(line)
        blobs = []
        for n in head.get("blobs", []):
            while len(self.buf) < n:
                self._fill(deadline)
            blobs.append(self.buf[:n])
            self.buf = self.buf[n:]
        return head, blobs

    def ask(self, head, blobs=(), timeout=30.0):
        self.send(head, blobs)
        return self.reply(timeout)

    def hello(self, **options):
        return self.ask({"parity_runner": 1, "op": "hello", "options": options})[0]

    def run(self, *arrays, timeout=30.0):
        head = {"op": "run", "inputs": [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in arrays]}
        h, blobs = self.ask(head, [np.ascontiguousarray(a).tobytes() for a in arrays], timeout)
        outs = [np.frombuffer(b, np.dtype(o["dtype"])).reshape(o["shape"]) for o, b in zip(h.get("outputs", []), blobs)]
        return h, outs

    def bye(self, timeout=10.0):
        try:
            self.send({"op": "bye"})
        except BrokenPipeError:
            pass
        return self.wait(timeout)

    def wait(self, timeout=10.0):
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
        self.p.wait()


def inline(code):
    """A runner from a few lines of Python: parity_runner importable, the rest of code its own."""
    return Runner(None, argv=[sys.executable, "-c", f"import sys; sys.path.insert(0, {RUNNERS!r})\n{code}"])


def relu_input(shape, seed=1):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return x


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------------------------------------------------
def test_framing():
    r = Runner(os.path.join(RUNNERS, "echo_runner.py"))
    h = r.hello()
    check("echo hello", h.get("ok") and h.get("formats") == ["onnx", "tflite"], h)
    h = r.hello(threads="1")
    check("echo refuses an option", h.get("status") == "unsupported" and "threads" in h.get("message", ""), h)
    h = r.ask({"parity_runner": 2, "op": "hello", "options": {}})[0]
    check("protocol version 2 refused", h.get("status") == "error" and "version" in h.get("message", ""), h)
    r.hello()
    h, _ = r.run(np.zeros(3, np.float32))
    check("run before load", h.get("status") == "error" and "load" in h.get("message", ""), h)
    h = r.ask({"op": "load", "format": "pt"}, [b"model"])[0]
    check("load of a format the runner does not read", h.get("status") == "unsupported", h)
    h = r.ask({"op": "load", "format": "onnx"}, [b"model"])[0]
    check("load", h.get("ok") and isinstance(h.get("prepare_ms"), float), h)
    ins = [np.arange(-3, 3, dtype=np.float32).reshape(2, 3), np.array([1.5, -2], np.float16),
           np.array([0, 255], np.uint8), np.array([-128, 127], np.int8), np.array([[-7]], np.int32),
           np.array([2 ** 40, -1], np.int64), np.array([True, False, True]), np.array(3.25, np.float32),
           np.zeros((0, 4), np.float32)]
    h, outs = r.run(*ins)
    check("echo of every dtype, rank 0 and an empty tensor", h.get("ok") and len(outs) == len(ins) and
          all(same(a, b) for a, b in zip(ins, outs)) and isinstance(h.get("run_ms"), float), h)
    r.send_raw(b"{this is not json\n")
    check("a line that is not JSON", r.reply()[0].get("status") == "error")
    r.send_raw(b"[1, 2]\n")
    check("a JSON line that is not an object", r.reply()[0].get("status") == "error")
    h = r.ask({"op": "run", "inputs": [{"dtype": "float32", "shape": [2, 2]}]}, [b"\0" * 12])[0]
    check("a blob that does not match dtype x shape", h.get("status") == "error" and "12 bytes" in h["message"], h)
    h = r.ask({"op": "run", "inputs": [{"dtype": "float64", "shape": [1]}]}, [b"\0" * 8])[0]
    check("an unknown dtype", h.get("status") == "error" and "dtype" in h["message"], h)
    h = r.ask({"op": "run", "inputs": [{"dtype": "float32", "shape": [1]}]}, [b"\0" * 4, b"\0" * 4])[0]
    check("inputs and blobs that do not pair", h.get("status") == "error", h)
    h = r.ask({"op": "run", "inputs": [], "blobs": "x"})[0]
    check("blobs that are not a list of sizes", h.get("status") == "error", h)
    h = r.ask({"op": "fly"})[0]
    check("an unknown op", h.get("status") == "error" and "fly" in h["message"], h)
    r.send_raw(b"x" * ((1 << 20) + 10) + b"\n")
    check("a line over 1 MiB", r.reply()[0].get("status") == "error")
    h, outs = r.run(ins[0])
    check("still in step after the malformed requests", h.get("ok") and same(outs[0], ins[0]), h)
    check("bye: exit 0", r.bye() == 0 and r.p.stdout.read() == b"", r.err[-300:])
    r = Runner(os.path.join(RUNNERS, "echo_runner.py"))
    r.hello()
    r.p.stdin.close()
    check("end of stdin: exit 0", r.wait() == 0)

    r = Runner(os.path.join(RUNNERS, "echo_runner.py"), env=fake_module("numpy"))
    h = r.hello()
    check("no numpy: hello unsupported", h.get("status") == "unsupported" and "numpy" in h.get("message", ""), h)
    check("no numpy: bye", r.bye() == 0)

    # a runtime that prints, and one that raises
    r = inline("from parity_runner import serve\nclass P:\n    def hello(self, o): print('chatty library'); "
               "return {'formats': ['onnx']}\n    def load(self, f, m): pass\n    def run(self, x): "
               "raise ValueError('boom\\nsecond line')\nserve(P())")
    h = r.hello()
    check("print goes to stderr, not the protocol", h.get("ok"), h)
    r.ask({"op": "load", "format": "onnx"}, [b""])
    h, _ = r.run(np.zeros(1, np.float32))
    check("an exception: ExcType: first line", h.get("status") == "error" and h.get("message") == "ValueError: boom",
          h)
    r.bye()
    check("its traceback on stderr", b"Traceback" in r.err and b"chatty library" in r.err, r.err[-300:])


# ---------------------------------------------------------------------------------------------------------------
def exported(case, fmt):
    """parity's own export of a case, or None."""
    if not os.access(PARITY, os.X_OK):
        return None
    path = os.path.join(TMP, f"{len(os.listdir(TMP))}.{fmt}")
    r = subprocess.run([PARITY, "export", case, "--format", fmt, "-o", path], capture_output=True)
    return open(path, "rb").read() if r.returncode == 0 else None


def fake_module(name):
    """A PYTHONPATH where importing name fails (a runtime not installed)."""
    d = os.path.join(TMP, "fake_" + name)
    os.makedirs(os.path.join(d, name), exist_ok=True)
    with open(os.path.join(d, name, "__init__.py"), "w") as f:
        f.write(f"raise ImportError(\"No module named '{name}'\")\n")
    return {**os.environ, "PYTHONPATH": d}


def test_ort():
    script = os.path.join(RUNNERS, "ort_runner.py")
    r = Runner(script, env=fake_module("onnxruntime"))
    h = r.hello()
    check("ort without onnxruntime", h.get("status") == "unsupported" and "onnxruntime" in h.get("message", "")
          and "make deps" in h["message"], h)
    r.bye()
    try:
        import onnxruntime  # noqa: F401
    except ImportError as e:
        return skip("ort_runner.py", e)
    r = Runner(script)
    h = r.hello()
    check("ort hello", h.get("ok") and h.get("runtime") == "onnxruntime" and h.get("formats") == ["onnx"] and
          h.get("providers") == ["CPUExecutionProvider"], h)
    for opts, word in [({"provider": "NoSuchExecutionProvider"}, "CPUExecutionProvider"), ({"fast": "1"}, "fast"),
                       ({"opt": "2"}, "opt"), ({"threads": "two"}, "threads")]:
        h = r.hello(**opts)
        check(f"ort refuses {opts}", h.get("status") == "unsupported" and word in h.get("message", ""), h)
    relu = ob.model("Relu", [("x", ob.FLOAT, [2, 3, 4, 5])], [("y", ob.FLOAT, [2, 3, 4, 5])])
    x = relu_input([2, 3, 4, 5])
    for opts in [{}, {"opt": "0"}, {"opt": "1", "threads": "2", "provider": "CPU"}]:
        check(f"ort hello {opts}", r.hello(**opts).get("ok"))
        h = r.ask({"op": "load", "format": "onnx"}, [relu])[0]
        check(f"ort load {opts}", h.get("ok") and h.get("prepare_ms", -1) >= 0, h)
        h, outs = r.run(x)
        check(f"ort relu {opts}", h.get("ok") and np.array_equal(outs[0], np.maximum(x, 0), equal_nan=True), h)
    sub = ob.model("Sub", [("x", ob.FLOAT, [3]), ("y", ob.FLOAT, [2, 3])], [("z", ob.FLOAT, [2, 3])],
                   node_inputs=["y", "x"])
    r.ask({"op": "load", "format": "onnx"}, [sub])
    a, b = np.array([1, 2, 3], np.float32), np.arange(6, dtype=np.float32).reshape(2, 3) * 10
    h, outs = r.run(a, b)
    check("ort inputs positional, in the graph's order", h.get("ok") and np.array_equal(outs[0], b - a), h)
    h = r.ask({"op": "load", "format": "onnx"}, [ob.model("Relu", [("x", ob.INT64, [3])], [("y", ob.INT64, [3])])])[0]
    check("ort: an op without a kernel is unsupported", h.get("status") == "unsupported" and
          "Could not find an implementation" in h.get("message", ""), h)
    h = r.ask({"op": "load", "format": "onnx"}, [b"not a model"])[0]
    check("ort: a broken model is an error", h.get("status") == "error", h)
    case = exported("relu(x=[2,3,6,7],in=hazard:nan_inf)#seed=1", "onnx")
    if case is None:
        skip("ort on parity's export", "build/parity is not built (or cannot export)")
    else:
        r.hello()
        r.ask({"op": "load", "format": "onnx"}, [case])
        x = relu_input([2, 3, 6, 7], 2)
        h, outs = r.run(x)
        check("ort on parity's relu export", h.get("ok") and np.array_equal(outs[0], np.maximum(x, 0), equal_nan=True),
              h)
    check("ort bye", r.bye() == 0)


def tflite_patched(model, edit):
    """model with edit(bytearray, Model table) applied in place (the flatbuffer's layout kept)."""
    from ai_edge_litert import schema_py_generated as S
    m = bytearray(model)
    edit(m, S.Model.GetRootAs(m, 0))
    return bytes(m)


def set_opcode(code):
    def edit(m, model):
        oc = model.OperatorCodes(0)._tab
        struct.pack_into("<b", m, oc.Pos + oc.Offset(4), min(code, 127))  # deprecated_builtin_code
        struct.pack_into("<i", m, oc.Pos + oc.Offset(10), code)            # builtin_code
    return edit


def swap_inputs(m, model):
    t = model.Subgraphs(0)._tab
    at = t.Vector(t.Offset(6))  # SubGraph.inputs
    a, b = struct.unpack_from("<ii", m, at)
    struct.pack_into("<ii", m, at, b, a)


def test_litert():
    script = os.path.join(RUNNERS, "litert_runner.py")
    r = Runner(script, env=fake_module("ai_edge_litert"))
    h = r.hello()
    check("litert without ai_edge_litert", h.get("status") == "unsupported" and "ai_edge_litert" in
          h.get("message", "") and "make deps" in h["message"], h)
    r.bye()
    try:
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError as e:
        return skip("litert_runner.py", e)
    relu = exported("relu(x=[2,3,6,7],in=hazard:nan_inf)#seed=1", "tflite")
    sub = exported("sub(a=[7],b=[1])#seed=1", "tflite")
    if relu is None or sub is None:
        return skip("litert_runner.py", "no TFLite model: build/parity is not built (or cannot export)")
    r = Runner(script)
    h = r.hello()
    check("litert hello", h.get("ok") and h.get("runtime") == "litert" and h.get("formats") == ["tflite"], h)
    for opts, word in [({"delegate": "gpu"}, "delegate"), ({"opt": "0"}, "opt"), ({"threads": "-2"}, "threads")]:
        h = r.hello(**opts)
        check(f"litert refuses {opts}", h.get("status") == "unsupported" and word in h.get("message", ""), h)
    x = relu_input([2, 6, 7, 3], 3)  # NHWC
    for opts in [{}, {"delegate": "none"}, {"delegate": "xnnpack", "threads": "2"}]:
        check(f"litert hello {opts}", r.hello(**opts).get("ok"))
        h = r.ask({"op": "load", "format": "tflite"}, [relu])[0]
        check(f"litert load {opts}", h.get("ok"), h)
        h, outs = r.run(x)
        check(f"litert relu {opts}", h.get("ok") and np.array_equal(outs[0], np.maximum(x, 0), equal_nan=True), h)
    a, b = np.arange(7, dtype=np.float32), np.array([0.5], np.float32)
    r.ask({"op": "load", "format": "tflite"}, [sub])
    h, outs = r.run(a, b)
    check("litert sub(a, b)", h.get("ok") and np.array_equal(outs[0], a - b), h)
    r.ask({"op": "load", "format": "tflite"}, [tflite_patched(sub, swap_inputs)])
    h, outs = r.run(b, a)  # the file now lists b first: positional in the subgraph's order
    check("litert inputs in the subgraph's order, not the tensors'", h.get("ok") and np.array_equal(outs[0], a - b), h)
    for code, what in [(5000, "an opcode it lacks"), (87, "a kernel without the dtype (LOGICAL_NOT on float32)")]:
        h = r.ask({"op": "load", "format": "tflite"}, [tflite_patched(relu, set_opcode(code))])[0]
        check(f"litert: {what} is unsupported", h.get("status") == "unsupported", h)
    h = r.ask({"op": "load", "format": "tflite"}, [b"not a model"])[0]
    check("litert: a broken model is an error", h.get("status") == "error", h)
    check("litert bye", r.bye() == 0)


# ---------------------------------------------------------------------------------------------------------------
def test_hostile():
    x = relu_input([1, 3, 8, 8], 4)

    def started(name, load=True):
        r = Runner(os.path.join(HERE, name))
        if load:
            r.hello()
            r.ask({"op": "load", "format": "onnx"}, [b""])
        return r

    r = started("relu.py")
    h, outs = r.run(x)
    check("relu.py: correct", h.get("ok") and np.array_equal(outs[0], np.maximum(x, 0), equal_nan=True), h)
    r.bye()
    r = started("crash.py")
    r.send({"op": "run", "inputs": [{"dtype": "float32", "shape": [1, 3, 8, 8]}]}, [x.tobytes()])
    try:
        r.reply(10)
        check("crash.py: no reply", False)
    except EOFError:
        check("crash.py: killed by SIGSEGV", r.wait() == -signal.SIGSEGV, r.p.returncode)
    r = started("hang.py")
    try:
        r.run(x, timeout=2)
        check("hang.py: no reply", False)
    except TimeoutError:
        check("hang.py: no reply within 2 s, still running", r.p.poll() is None)
    r.kill()
    r = started("flood_stdout.py")
    try:
        r.run(x, timeout=30)
        check("flood_stdout.py: no header line", False)
    except ValueError as e:
        check("flood_stdout.py: more than 1 MiB without a newline", "no newline" in str(e), e)
    r.kill()
    r = started("flood_stderr.py")
    h, outs = r.run(x, timeout=60)
    check("flood_stderr.py: 100 MB on stderr, then a correct reply", h.get("ok") and r.err_bytes >= 100 << 20 and
          np.array_equal(outs[0], np.maximum(x, 0), equal_nan=True), (h, r.err_bytes))
    r.bye()
    r = started("wrong_shape.py")
    h, outs = r.run(x)
    check("wrong_shape.py: another shape, the same bytes", h.get("ok") and list(outs[0].shape) != list(x.shape) and
          outs[0].size == x.size, h)
    r.bye()
    r = started("nan.py")
    h, outs = r.run(x)
    check("nan.py: NaN everywhere", h.get("ok") and outs[0].shape == x.shape and np.isnan(outs[0]).all(), h)
    r.bye()
    r = started("liar.py")
    h, outs = r.run(x)
    check("liar.py: correct, run_ms 1e9", h.get("run_ms") == 1e9 and np.array_equal(outs[0], np.maximum(x, 0),
                                                                                    equal_nan=True), h)
    r.bye()
    r = started("missing.py", load=False)
    h = r.hello()
    check("missing.py: unsupported, naming the module", h.get("status") == "unsupported" and
          "parity_no_such_runtime" in h.get("message", ""), h)
    r.bye()
    r = started("garbage.py")
    try:
        r.run(x)
        check("garbage.py: not JSON", False)
    except ValueError:
        check("garbage.py: a line that is not JSON", True)
    r.kill()
    r = started("exit_hello.py", load=False)
    try:
        r.hello()
        check("exit_hello.py: no reply", False)
    except EOFError:
        check("exit_hello.py: exit 3 before the reply", r.wait() == 3, r.p.returncode)
    r = Runner(os.path.join(HERE, "slowstart.py"), env={**os.environ, "PARITY_SLOWSTART_S": "2.5"})
    t = time.monotonic()
    h = r.hello()
    check("slowstart.py: hello after its sleep", h.get("ok") and time.monotonic() - t >= 2.4, h)
    r.bye()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="parity-runners-") as TMP:
        for t in (test_framing, test_ort, test_litert, test_hostile):
            try:
                t()
            except Exception as e:  # a test that breaks counts once and the others still run
                import traceback
                traceback.print_exc()
                check(t.__name__, False, f"{type(e).__name__}: {e}")
    print(f"test_protocol: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
