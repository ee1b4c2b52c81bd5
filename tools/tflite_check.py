#!/usr/bin/env python3
"""tflite_check.py - LiteRT's view of TFLite files that parity reads or writes.

    tflite_check.py DIR [DIR...]            every *.tflite under DIR must load and allocate in LiteRT's interpreter;
                                            exit 1 naming each file that does not, 0 when all do (2: no LiteRT)
    tflite_check.py --compare MODEL CASE    run MODEL in LiteRT on the inputs of CASE (parity export's JSON of the
                                            model's case: inputs, reference outputs and error budgets inline) and
                                            compare each output with parity's reference: |litert - ref| must be
                                            within max(budget, 1e-4 * (1 + |ref|)) (f32 tolerance; quantized
                                            outputs: within max(budget, 1) integer step); exit 1 if not

Layout: parity's rank-4 tensors are NCHW, TFLite's NHWC (docs/formats.md): rank-4 inputs are transposed to NHWC
before they are set, rank-4 outputs back to NCHW before they are compared.

Must not: modify the files it checks.
"""
import json
import os
import sys


def interpreter(path, delegates=True):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kw = {} if delegates else {"experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    it = Interpreter(model_path=path, **kw)
    it.allocate_tensors()
    return it


def load(path):
    """LiteRT's interpreter for path; when only the default (XNNPACK) delegate refuses the model, the builtin
    kernels' interpreter, and a note saying so (the file is valid; the delegate lacks a case)."""
    try:
        return interpreter(path)
    except Exception as e:  # noqa: BLE001
        if "Delegate" not in str(e):
            raise
        it = interpreter(path, delegates=False)
        print("note %s: the XNNPACK delegate refuses it (%s); loaded with the builtin kernels" %
              (path, str(e).strip().splitlines()[-1]))
        return it


def check_dirs(dirs):
    bad = 0
    n = 0
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith(".tflite"):
                    continue
                p = os.path.join(root, f)
                n += 1
                try:
                    load(p)
                except Exception as e:  # noqa: BLE001 - LiteRT raises ValueError / RuntimeError
                    bad += 1
                    print("FAIL %s: %s" % (p, str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__))
    print("tflite_check: %d files, %d failed to load" % (n, bad))
    return 1 if bad else 0


def compare(model, case):
    import numpy as np
    d = json.load(open(case))
    it = load(model)
    byname = {x["name"]: x for x in d["inputs"]}
    for det in it.get_input_details():
        x = byname.get(det["name"])
        if x is not None and "data" not in x:
            print("skip %s: input '%s' has no inline data in %s" % (model, det["name"], case))
            return 0
        if x is None:
            print("FAIL %s: input '%s' not in %s" % (model, det["name"], case))
            return 1
        a = np.array(x["data"], dtype=det["dtype"]).reshape(json.loads(x["shape"]) if isinstance(x["shape"], str)
                                                            else x["shape"])
        if a.ndim == 4:
            a = a.transpose(0, 2, 3, 1)
        it.set_tensor(det["index"], np.ascontiguousarray(a))
    it.invoke()
    refs = {r["name"]: r for r in d["reference"]["outputs"]}
    worst = 0.0
    bad = 0
    for det in it.get_output_details():
        r = refs.get(det["name"])
        if r is None:
            print("FAIL %s: output '%s' not in %s" % (model, det["name"], case))
            return 1
        y = it.get_tensor(det["index"]).astype(np.float64)
        # quantized outputs: the reference gives integers; one step apart is a rounding scheme's choice
        # (docs/quantization.md), more is an error
        quantized = bool(det["quantization"][0])
        if y.ndim == 4:
            y = y.transpose(0, 3, 1, 2)
        ref = np.array([np.nan if v is None else v for v in r["values"]], dtype=np.float64)
        bud = np.array([np.inf if v is None else v for v in r.get("budgets", [0] * ref.size)], dtype=np.float64)
        y = y.reshape(-1)
        if y.size != ref.size:
            print("FAIL %s: output '%s': %d elements, reference %d" % (model, det["name"], y.size, ref.size))
            return 1
        tol = np.maximum(bud, 1.0) if quantized else np.maximum(bud, 1e-4 * (1 + np.abs(ref)))
        err = np.abs(y - ref)
        over = int(np.sum(err > tol))
        worst = max(worst, float(np.max(err / tol)))
        print("%s: output '%s': max |litert - ref| %.3g, worst error/tolerance %.3g, %d over" %
              (model, det["name"], float(np.max(err)), float(np.max(err / tol)), over))
        bad += over > 0
    return 1 if bad else 0


def main(argv):
    try:
        import ai_edge_litert  # noqa: F401
    except ImportError:
        print("tflite_check: ai_edge_litert is not installed")
        return 2
    if len(argv) == 3 and argv[0] == "--compare":
        return compare(argv[1], argv[2])
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    return check_dirs(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
