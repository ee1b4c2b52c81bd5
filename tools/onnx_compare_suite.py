#!/usr/bin/env python3
"""onnx_compare_suite.py - every case of a suite exported as ONNX and run in ONNX Runtime against parity's reference.

    build/venv/bin/python tools/onnx_compare_suite.py [--parity build/parity] [--suite quick] [--out DIR] [ID...]

For each case (the suite's, or the IDs given): `parity export ID --format onnx` and `parity export ID` (the JSON
with inputs, reference and budgets), then tools/onnx_check.py's comparison (--compare: ORT's CPU provider, graph
optimizations off, parity's budgets plus one integer step on quantized outputs). Writes DIR/results.tsv (ID,
status: noexport / ok / FAIL / skip, the detail) and prints the totals and every FAIL line. The files of failing
cases stay in DIR (case_N.onnx, case_N.json) for a repro; the others are removed.

Exit 0 when nothing fails, 1 otherwise, 2 when onnxruntime or numpy is missing.

Must not: modify the suite, the cases or parity's budgets.
"""
import contextlib
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_check  # noqa: E402


def main(argv):
    parity, suite, out, ids = "build/parity", "quick", None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--parity", "--suite", "--out") and i + 1 < len(argv):
            if a == "--parity":
                parity = argv[i + 1]
            elif a == "--suite":
                suite = argv[i + 1]
            else:
                out = argv[i + 1]
            i += 2
            continue
        if a.startswith("-"):
            print(__doc__)
            return 2
        ids.append(a)
        i += 1
    try:
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        print("skip: %s is not installed for %s" % (e.name, sys.executable))
        return 2
    out = out or "build/onnx_compare_%s" % suite
    os.makedirs(out, exist_ok=True)
    if not ids:
        lst = subprocess.run([parity, "list", "cases", "--suite", suite], capture_output=True, text=True, check=True)
        ids = [ln.split("\t")[0] for ln in lst.stdout.splitlines() if ln.strip()]
    counts = {"noexport": 0, "ok": 0, "FAIL": 0, "skip": 0}
    fails = []
    with open(os.path.join(out, "results.tsv"), "w") as res:
        for n, cid in enumerate(ids):
            mo, js = os.path.join(out, "case_%d.onnx" % n), os.path.join(out, "case_%d.json" % n)
            p = subprocess.run([parity, "export", cid, "--format", "onnx", "-o", mo], capture_output=True, text=True)
            if p.returncode != 0:
                why = (p.stderr.strip() or p.stdout.strip()).splitlines()
                counts["noexport"] += 1
                res.write("%s\tnoexport\t%s\n" % (cid, why[-1] if why else "exit %d" % p.returncode))
                continue
            p = subprocess.run([parity, "export", cid, "-o", js], capture_output=True, text=True)
            if p.returncode != 0:
                counts["skip"] += 1
                res.write("%s\tskip\tJSON export failed: %s\n" % (cid, p.stderr.strip()[:200]))
                continue
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = onnx_check.compare(mo, js)
            text = buf.getvalue().strip().replace("\n", " | ")
            status = "FAIL" if rc else ("skip" if text.startswith("skip") else "ok")
            counts[status] += 1
            res.write("%s\t%s\t%s\n" % (cid, status, text))
            res.flush()
            if status == "FAIL":
                fails.append("%s: %s" % (cid, text))
            else:
                os.remove(mo)
                os.remove(js)
                side = os.path.splitext(js)[0] + ".bin"
                if os.path.exists(side):
                    os.remove(side)
    for f in fails:
        print(f)
    print("onnx_compare_suite %s: %d cases, %d exported, %d compared, %d match, %d mismatch, %d skipped" %
          (suite, len(ids), len(ids) - counts["noexport"], counts["ok"] + counts["FAIL"], counts["ok"],
           counts["FAIL"], counts["skip"]))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
