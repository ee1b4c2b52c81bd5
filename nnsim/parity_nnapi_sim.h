/*
 * parity_nnapi_sim.h - what the simulated libneuralnetworks.so offers beyond the NNAPI: questions a client of the
 * real API cannot ask (where each operation of a compilation runs, the last refusal's reason). Exported beside the
 * NNAPI symbols, outside its namespace; the parity nnapi backend and the tests use them through dlsym.
 */
#ifndef PARITY_NNAPI_SIM_H
#define PARITY_NNAPI_SIM_H

#include <stdint.h>

#include <android/NeuralNetworks.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The placement of a finished compilation's operations, in the order they were added: names[i] is the name of the
 * device that runs operation i ("parity-npu-int8", ..., "cpu-fallback" for the runtime's own CPU path). Writes at
 * most capacity names and sets *count to the model's operation count. ANEURALNETWORKS_UNEXPECTED_NULL,
 * ANEURALNETWORKS_BAD_STATE (not finished, or its finish failed), else ANEURALNETWORKS_NO_ERROR. */
int parity_nnapi_sim_partition(const ANeuralNetworksCompilation *compilation, const char **names, uint32_t capacity,
                               uint32_t *count);

/* The last refusal of this thread, "FUNCTION: reason" ("" when none since the last clear). */
const char *parity_nnapi_sim_last_error(void);
void parity_nnapi_sim_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif
