#!/usr/bin/python3
"""onnx_check.py - ONNX's own checker and ONNX Runtime on the model files parity writes.

    onnx_check.py DIR [DIR...]           every *.onnx under DIR must load with onnx.load and pass
                                         onnx.checker.check_model (full_check: shape inference too); exit 1 naming
                                         each file that does not, 0 when all do, 2 when the onnx package is missing
                                         (Debian's python3-onnx, for /usr/bin/python3)
    onnx_check.py --compare MODEL CASE   run MODEL in ONNX Runtime on the inputs of CASE (`parity export CASE`'s
                                         JSON: inputs, reference outputs and error budgets inline) and compare each
                                         output with parity's reference; exit 1 if one differs, 0 when all agree,
                                         2 when onnxruntime or numpy is missing (build/venv/bin/python has both:
                                         `make deps`, tools/deps_py.sh)

The comparison is the oracle's rule (docs/oracle.md): an element passes when |ort - ref| <= budget, with parity's
own budget (a budget of 0 is exact; none given: not judged), never widened. Quantized outputs (uint8 / int8: parity's
reference gives their integers) and float outputs of a `dequantize` of a quantized value may also be one integer
step away (docs/quantization.md: rounding schemes and ties); two steps fail. A non-finite reference (JSON null:
parity does not say whether inf or NaN) wants a non-finite value.

ONNX Runtime runs with the CPUExecutionProvider and its graph optimizations disabled (ORT_DISABLE_ALL), so that
its fusions (a QDQ chain into a QLinearConv, Mul + Add into FMA-like kernels, an Erf pattern into Gelu) do not
change the arithmetic of the graph as written; what is compared is its kernels, node by node. Layouts: NCHW in
parity and in ONNX, nothing is transposed.

One line per failing output: model, output, worst element (flat index), got, want, budget, count over. A passing
model prints one `ok` line.

Must not: modify the files it checks.
"""
import json
import os
import sys

NP_DTYPES = {"f32": "float32", "f16": "float16", "qu8": "uint8", "qs8": "int8", "i32": "int32", "bool": "bool"}


def check_dirs(dirs):
    try:
        import onnx
    except ImportError:
        print("skip: the onnx package is not installed for %s (Debian: python3-onnx)" % sys.executable)
        return 2
    files = []
    for d in dirs:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in names if n.endswith(".onnx")]
    bad = 0
    for path in sorted(files):
        try:
            m = onnx.load(path)
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # noqa: BLE001 - any failure is the file's
            bad += 1
            print("FAIL %s: %s" % (path, str(e).strip().splitlines()[0][:300]))
    print("onnx_check: %d passed, %d failed" % (len(files) - bad, bad))
    return 1 if bad or not files else 0


def dequantized_step(case, name):
    """The scale of the quantized value whose `dequantize` gives output name (one integer step in float), or 0."""
    quant = {}
    for v in case.get("inputs", []) + case.get("constants", []):
        if isinstance(v, dict) and v.get("dtype") in ("qu8", "qs8") and "quant" in v:
            quant[v["name"]] = v["quant"].get("scale", 0)
    for n in case.get("nodes", []):
        for o in n.get("outputs", []):
            if isinstance(o, dict) and o.get("dtype") in ("qu8", "qs8"):
                quant[o["name"]] = o.get("scale", 0)
    for n in case.get("nodes", []):
        outs = [o["name"] if isinstance(o, dict) else o for o in n.get("outputs", [])]
        if n.get("op") == "dequantize" and name in outs and n.get("inputs"):
            s = quant.get(n["inputs"][0], 0)
            return float(s) if isinstance(s, (int, float)) else 0.0
    return 0.0


def compare(model, case_path):
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        print("skip: %s is not installed for %s (make deps: build/venv)" % (e.name, sys.executable))
        return 2
    case = json.load(open(case_path))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - ORT's refusal of the file is the finding
        print("FAIL %s: onnxruntime does not load it: %s" % (model, str(e).strip().splitlines()[0][:300]))
        return 1
    byname = {x["name"]: x for x in case["inputs"]}
    feeds = {}
    for i in sess.get_inputs():
        x = byname.get(i.name)
        if x is None:
            print("FAIL %s: input '%s' not in %s" % (model, i.name, case_path))
            return 1
        if "data" not in x:
            print("skip %s: input '%s' has no inline data in %s" % (model, i.name, case_path))
            return 0
        dt = NP_DTYPES.get(x["dtype"])
        if dt is None:
            print("skip %s: input '%s' is %s" % (model, i.name, x["dtype"]))
            return 0
        feeds[i.name] = np.array(x["data"], dtype=dt).reshape(x["shape"])
    names = [o.name for o in sess.get_outputs()]
    try:
        got = sess.run(names, feeds)
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: onnxruntime fails to run it: %s" % (model, str(e).strip().splitlines()[0][:300]))
        return 1
    refs = {r["name"]: r for r in case["reference"]["outputs"]}
    bad = 0
    worst = 0.0
    stepped = 0
    for name, y in zip(names, got):
        r = refs.get(name)
        if r is None:
            print("FAIL %s: output '%s' not in %s" % (model, name, case_path))
            bad += 1
            continue
        nonfinite = np.array([v is None for v in r["values"]], dtype=bool)  # parity writes inf and NaN as null
        ref = np.array([np.nan if v is None else v for v in r["values"]], dtype=np.float64)
        bud = np.array([np.inf if v is None else v for v in r.get("budgets", [0] * ref.size)], dtype=np.float64)
        y = np.asarray(y)
        quantized = y.dtype in (np.uint8, np.int8)
        y = y.astype(np.float64).reshape(-1)
        if y.size != ref.size or list(np.shape(got[names.index(name)])) != list(r.get("shape", np.shape(y))):
            print("FAIL %s: output '%s': shape %s, reference %s" % (model, name, list(np.shape(got[names.index(name)])),
                                                                     r.get("shape")))
            bad += 1
            continue
        step = 1.0 if quantized else dequantized_step(case, name)
        err = np.abs(y - ref)
        err[nonfinite] = np.where(np.isfinite(y[nonfinite]), np.inf, 0)
        err[np.isnan(err)] = np.inf  # a NaN (or an inf) where the reference is finite
        over = err > bud
        if step > 0:
            stepped += int(np.sum(over & (err <= step * (1 + 1e-6))))
            over &= err > step * (1 + 1e-6)
        n_over = int(np.sum(over))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(err == 0, 0.0, err / bud)
        if ratio.size:
            worst = max(worst, float(np.max(np.where(over | ~(err > bud), ratio, 0))))
        if n_over:
            bad += 1
            k = int(np.argmax(np.where(over, err, -1)))
            print("FAIL %s: output '%s': element %d got %.9g want %.9g budget %.3g%s (%d of %d over)" %
                  (model, name, k, y[k], ref[k], bud[k], ", 1 step %.3g" % step if step else "", n_over, ref.size))
    if not bad:
        print("ok %s: %d outputs, worst error/budget %.3g%s" %
              (model, len(names), worst, ", %d elements one step off" % stepped if stepped else ""))
    return 1 if bad else 0


def main(argv):
    if len(argv) == 3 and argv[0] == "--compare":
        return compare(argv[1], argv[2])
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    return check_dirs(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
