/*
 * nn_lib.h - the NNAPI library as the nnapi backend sees it: libneuralnetworks.so opened with dlopen and every
 * function it uses looked up with dlsym into one table, as PyTorch's NNAPI runtime (nnapi_wrapper) does, so the
 * backend links against nothing and runs against whichever library it finds. The simulator's extras
 * (parity_nnapi_sim.h) are looked up too, and may be absent.
 *
 * It must not know about parity graphs (nn_convert.c) or the backend's knobs (nnapi.c).
 */
#ifndef PAR_NN_LIB_H
#define PAR_NN_LIB_H

#include "core/parity_backend.h"

#include "backends/nnapi/include/android/NeuralNetworks.h"

/* The functions, one field each, named after the API without its prefix. NULL where the library lacks one of the
 * optional entries (the level-29 device API, relaxed computation, timing, the simulator's extras). */
#define NN_LIB_FUNCS(X, O)                                                                                           \
    X(int, Model_create, (ANeuralNetworksModel **))                                                                  \
    X(void, Model_free, (ANeuralNetworksModel *))                                                                    \
    X(int, Model_finish, (ANeuralNetworksModel *))                                                                   \
    X(int, Model_addOperand, (ANeuralNetworksModel *, const ANeuralNetworksOperandType *))                          \
    X(int, Model_setOperandValue, (ANeuralNetworksModel *, int32_t, const void *, size_t))                          \
    X(int, Model_addOperation, (ANeuralNetworksModel *, ANeuralNetworksOperationType, uint32_t, const uint32_t *,   \
                                uint32_t, const uint32_t *))                                                         \
    X(int, Model_identifyInputsAndOutputs, (ANeuralNetworksModel *, uint32_t, const uint32_t *, uint32_t,           \
                                            const uint32_t *))                                                       \
    X(int, Compilation_create, (ANeuralNetworksModel *, ANeuralNetworksCompilation **))                             \
    X(void, Compilation_free, (ANeuralNetworksCompilation *))                                                        \
    X(int, Compilation_setPreference, (ANeuralNetworksCompilation *, int32_t))                                      \
    X(int, Compilation_finish, (ANeuralNetworksCompilation *))                                                       \
    X(int, Execution_create, (ANeuralNetworksCompilation *, ANeuralNetworksExecution **))                           \
    X(void, Execution_free, (ANeuralNetworksExecution *))                                                            \
    X(int, Execution_setInput, (ANeuralNetworksExecution *, int32_t, const ANeuralNetworksOperandType *,            \
                                const void *, size_t))                                                               \
    X(int, Execution_setOutput, (ANeuralNetworksExecution *, int32_t, const ANeuralNetworksOperandType *, void *,   \
                                 size_t))                                                                            \
    X(int, Execution_startCompute, (ANeuralNetworksExecution *, ANeuralNetworksEvent **))                           \
    X(int, Event_wait, (ANeuralNetworksEvent *))                                                                     \
    X(void, Event_free, (ANeuralNetworksEvent *))                                                                    \
    O(int, Model_setOperandSymmPerChannelQuantParams, (ANeuralNetworksModel *, int32_t,                             \
                                                       const ANeuralNetworksSymmPerChannelQuantParams *))            \
    O(int, Model_relaxComputationFloat32toFloat16, (ANeuralNetworksModel *, bool))                                  \
    O(int, _getDeviceCount, (uint32_t *))                                                                            \
    O(int, _getDevice, (uint32_t, ANeuralNetworksDevice **))                                                         \
    O(int, Device_getName, (const ANeuralNetworksDevice *, const char **))                                          \
    O(int, Device_getType, (const ANeuralNetworksDevice *, int32_t *))                                              \
    O(int, Compilation_createForDevices, (ANeuralNetworksModel *, const ANeuralNetworksDevice *const *, uint32_t,   \
                                          ANeuralNetworksCompilation **))                                            \
    O(int, Execution_compute, (ANeuralNetworksExecution *))                                                          \
    O(int, Execution_setMeasureTiming, (ANeuralNetworksExecution *, bool))                                          \
    O(int, Execution_getDuration, (const ANeuralNetworksExecution *, int32_t, uint64_t *))

typedef struct nn_lib {
    void *handle;
    char path[256]; /* where it was found */
#define NN_FIELD(ret, name, args) ret(*name) args;
    NN_LIB_FUNCS(NN_FIELD, NN_FIELD)
#undef NN_FIELD
    /* parity_nnapi_sim.h, optional */
    int (*sim_partition)(const ANeuralNetworksCompilation *, const char **, uint32_t, uint32_t *);
    const char *(*sim_last_error)(void);
} nn_lib;

/* Open the library: `path` when not NULL (the knob lib=), else $PARITY_NNAPI_LIB, else lib/libneuralnetworks.so
 * beside the folder of the running executable (build/lib/ next to build/parity), else the plain soname through
 * the loader's search path. PAR_UNSUPPORTED with one line naming every place it looked; PAR_ERROR when a library
 * was found but lacks a required function. */
par_status par_nn_lib_open(nn_lib *lib, const char *path, par_msg *msg);
void par_nn_lib_close(nn_lib *lib);

/* The name of an NNAPI result code ("BAD_DATA"). */
const char *par_nn_result_name(int code);

#endif /* PAR_NN_LIB_H */
