/*
 * case_mem.h - how much memory a worker needs for one case, estimated from the graph alone, and the limit a runner
 * compares it with, so that a case too large for the machine is refused with a clear reason instead of being
 * killed by the kernel (or taking the machine down with it).
 *
 * The estimate follows what the code allocates (case_mem.c names each term's source): the case's data, the
 * reference interpreter's arrays and temporaries, and the buffers of one backend run. It is an upper bound of the
 * resident memory of the worker and its backend child together (the child is a fork: it shares the worker's pages),
 * except for a backend's own working set, which no harness can know: it is guessed as one repacked copy of the
 * constants plus every intermediate activation in its dtype.
 *
 * It must not allocate per element or run anything: it is called for every case before the case is built.
 */
#ifndef PAR_CASE_MEM_H
#define PAR_CASE_MEM_H

#include <stddef.h>

#include "core/graph.h"

/* The estimate's parts, in bytes. */
typedef struct par_case_mem {
    int64_t data;        /* inputs (materialized) and constants (in the graph), in their dtypes */
    int64_t ref_values;  /* one reference result: v, e, s of every value, ql, qh of quantized nodes' outputs */
    int64_t ref_temp;    /* the interpreter's largest per-node temporaries (on top of ref_values) */
    int64_t ref_kept;    /* the further references kept at once, one per distinct precision profile */
    int64_t buffers;     /* exec: input copies, the shared output region with guards, run-1 copies, the worker's
                          * copies of the outputs */
    int64_t backend;     /* the guessed working set of the backend: constants repacked, intermediate activations */
    int64_t total;       /* data + ref_values + ref_kept + max(ref_temp, buffers + backend) */
} par_case_mem;

/* How the runner keeps references (the two ways it can be wired). */
typedef struct par_case_mem_opts {
    int32_t n_profiles;  /* references alive at once (distinct precision profiles among the backends); 0: the worst
                          * case for n_backends: min(n_backends, 3) for a float graph (arith is the only variable),
                          * n_backends for a graph with quantized values (the requantization scheme varies too) */
    int outputs_only;    /* 1: a kept reference holds the graph outputs only (par_refcache_run); 0: every value
                          * (par_ref_run) */
    int flush;           /* 1: some backend declares flushed subnormals: its reference carries the flush part f of
                          * every f32/f16 value (8 bytes per element), and the flush is one more variable of the
                          * profile (min(n_backends, 6) float profiles) */
} par_case_mem_opts;

/* The parts for g run on n_backends backends (o may be NULL: the defaults above, outputs_only 0). */
void par_case_mem_parts(const par_graph_desc *g, int32_t n_backends, const par_case_mem_opts *o, par_case_mem *m);

/* The total bytes a worker needs for a case (par_case_mem_parts with the defaults). */
int64_t par_case_mem_estimate(const par_graph_desc *g, int32_t n_backends);

/* The bytes one case may need: $PARITY_MEM_LIMIT when set (bytes, or a number with a K, M, G or T suffix, powers of
 * 1024, e.g. "6G"), else a quarter of the physical memory (two workers and the machine's other users keep room),
 * else 4 GiB when the physical memory cannot be read. Divide by the number of workers when they run at once. */
int64_t par_case_mem_limit(void);

/* A rough count of g's work (elements read and written, multiply-adds of its weights): the runner starts the
 * costliest cases first. Reads shapes only. */
double par_case_cost(const par_graph_desc *g);

/* Parse "6G", "512M", "1.5G", "1073741824": bytes, or -1 when malformed. */
int64_t par_case_mem_parse(const char *s);

/* The refusal reason, e.g. "needs ~10.7 GB (reference 8.6 GB, buffers 2.1 GB), limit 6.0 GB"; returns buf. */
const char *par_case_mem_reason(const par_case_mem *m, int64_t limit, char *buf, size_t len);

#endif
