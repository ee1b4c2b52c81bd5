"""onnx_bytes.py - tiny ONNX models written by hand (protobuf's wire format), for tests that must not need the
onnx package: one node over rank-1 inputs."""

FLOAT, UINT8, INT8, INT32, INT64, BOOL, FLOAT16 = 1, 2, 3, 6, 7, 9, 10


def _varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _f(field, value):
    """One field: an int (varint), or str/bytes (length-delimited: strings and sub-messages)."""
    if isinstance(value, int):
        return _varint(field << 3) + _varint(value)
    value = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(value)) + value


def _value_info(name, elem, dims):
    shape = b"".join(_f(1, _f(1, d)) for d in dims)               # TensorShapeProto.dim: Dimension.dim_value
    return _f(1, name) + _f(2, _f(1, _f(1, elem) + _f(2, shape)))  # name, TypeProto.tensor_type{elem_type, shape}


def model(op, inputs, outputs, node_inputs=None, opset=14):
    """inputs/outputs: [(name, elem_type, dims)], in the graph's order; the node reads node_inputs (default: the
    inputs' names in order) and writes the outputs."""
    node = b"".join(_f(1, n) for n in (node_inputs or [i[0] for i in inputs]))
    node += b"".join(_f(2, o[0]) for o in outputs) + _f(3, "n0") + _f(4, op)
    graph = _f(1, node) + _f(2, "g") + b"".join(_f(11, _value_info(*i)) for i in inputs)
    graph += b"".join(_f(12, _value_info(*o)) for o in outputs)
    return _f(1, 8) + _f(2, "parity-test") + _f(7, graph) + _f(8, _f(1, "") + _f(2, opset))
