#!/usr/bin/python3
"""onnx_check.py - ONNX's own checker on the model files parity writes.

    onnx_check.py DIR [DIR...]   every *.onnx under DIR must load with onnx.load and pass onnx.checker.check_model
                                 (full_check: shape inference too); exit 1 naming each file that does not, 0 when
                                 all do, 2 when the onnx package is missing (Debian's python3-onnx, for
                                 /usr/bin/python3)

Must not: modify the files it checks.
"""
import os
import sys


def main(argv):
    try:
        import onnx
    except ImportError:
        print("skip: the onnx package is not installed for %s (Debian: python3-onnx)" % sys.executable)
        return 2
    files = []
    for d in argv[1:]:
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
