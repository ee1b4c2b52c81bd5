"""OpenVINO 2026.4 finding 3: AvgPool with ceil_mode (rounding_type CEIL) and padding counted (exclude_pad false)
divides the extra windows, those that start in the input but run past its padded end, by the whole kernel instead of
the elements they cover inside the padded input, as ONNX AveragePool and PyTorch's avg_pool2d define them
(docs/findings.md, OpenVINO 3). A 1x1x8x8 input of ones, kernel 3x3, stride 2, padding 1, ceil: 5x5 outputs; the
last row and column of windows start at 7 and cover the input's 7, the padding's 8 and nothing beyond: (1 + 0) / 2
per row in PyTorch's count (padding counted, the part beyond it not), so 0.5 at the edge; a divisor of 3 gives 1/3."""
import sys
import numpy as np
from findings_common import openvino_run


def build(ops, ov):
    p = ops.parameter([1, 1, 8, 8], ov.Type.f32)
    return [ops.avg_pool(p, [2, 2], [1, 1], [1, 1], [3, 3], False, "ceil")], [p]


got = openvino_run(build, [np.ones((1, 1, 8, 8), np.float32)])[0, 0]
print(f"AvgPool 3x3/2 pad 1 ceil of an 8x8 of ones, last row: {got[4].tolist()}")
print("  want [0.33, 0.5, 0.5, 0.5, 0.25] (PyTorch's avg_pool2d, ceil_mode=True, count_include_pad=True)")
print(f"  its first row: {got[0].tolist()} (want [0.44, 0.67, 0.67, 0.67, 0.33])")
bad = not np.isclose(got[4, 2], 0.5)
print("REPRODUCED" if bad else "not reproduced")
sys.exit(0 if bad else 1)
