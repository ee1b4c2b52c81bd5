# backends/nnapi/builtin.mk - the `nnapi` built-in backend: the converter from parity graphs to NNAPI models and the
# client that runs them through libneuralnetworks.so, opened with dlopen at run time (no link-time dependency: the
# backend builds, and reports itself unusable with the reason, where no library is found). The simulated library
# itself (nnsim/) is built by its own rules.
NN_CLIENT_SRC := backends/nnapi/nnapi.c backends/nnapi/nn_lib.c backends/nnapi/nn_convert.c backends/nnapi/nn_ops.c \
                 backends/nnapi/nn_ops_conv.c backends/nnapi/nn_ops_seq.c backends/nnapi/nn_walk.c
BUILTIN_SRC += $(NN_CLIENT_SRC)
