# backends/expected/builtin.mk - the `expected` built-in: the outputs a case's own source gives (an ONNX node test's
# output_K.pb), judged by the oracle as a backend's would be. No library; built everywhere.
BUILTIN_SRC += backends/expected/expected.c
