/*
 * slow.c - a correct test plugin with a deliberate latency regression, for the report diff (tests/report/
 * test_diff.sh, tools/diff_noise.sh): f32 relu (tp_common.h) and f32 matmul of two rank-2 graph inputs, computed
 * plainly. With PARITY_TP_SLOW_EXTRA=F set (a fraction, e.g. 0.2), every run busy-waits F times its own compute time
 * after computing, measured with CLOCK_MONOTONIC, so a run costs exactly (1 + F) times what it costs without it (plus
 * two clock reads); unset or 0, it does not wait.
 */
#define _POSIX_C_SOURCE 200809L
#include "tp_common.h"

#include <time.h>

static double extra; /* read once per process from PARITY_TP_SLOW_EXTRA */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct slow_prep {
    int matmul;
    int64_t m, k, n; /* matmul: [m, k] x [k, n]; relu: n elements */
    const float *a, *b;
    float *out;
} slow_prep;

static par_status slow_init(void **ctx, par_msg *msg)
{
    const char *e = getenv("PARITY_TP_SLOW_EXTRA");
    extra = e ? strtod(e, NULL) : 0;
    if (!(extra >= 0 && extra <= 100)) return par_msgf(msg, PAR_ERROR, "PARITY_TP_SLOW_EXTRA must be in [0, 100]");
    return tp_init(ctx, msg);
}

static par_status slow_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *nd = &g->nodes[node];
    (void)ctx;
    if (strcmp(nd->op, "relu") == 0) return tp_supports(ctx, g, node, msg);
    if (strcmp(nd->op, "matmul") != 0) return par_msgf(msg, PAR_UNSUPPORTED, "only relu and matmul");
    for (int i = 0; i < 2; i++) {
        const par_value *v = par_node_input(g, nd, i);
        if (v->dtype != PAR_DTYPE_F32 || v->rank != 2 || v->kind != PAR_VALUE_INPUT)
            return par_msgf(msg, PAR_UNSUPPORTED, "matmul of two rank-2 f32 graph inputs only");
    }
    return PAR_OK;
}

static par_status slow_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    (void)ctx;
    if (g->n_nodes != 1 || g->n_outputs != 1) return par_msgf(msg, PAR_UNSUPPORTED, "one node only");
    slow_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    const par_node *nd = &g->nodes[0];
    p->matmul = strcmp(nd->op, "matmul") == 0;
    if (p->matmul) {
        /* the graph inputs in order are the node's inputs in order (checked) */
        if (g->n_inputs != 2 || par_node_input(g, nd, 0) != &g->values[g->inputs[0]] ||
            par_node_input(g, nd, 1) != &g->values[g->inputs[1]]) {
            free(p);
            return par_msgf(msg, PAR_UNSUPPORTED, "matmul inputs must be the graph inputs in order");
        }
        const par_value *a = par_node_input(g, nd, 0), *b = par_node_input(g, nd, 1);
        p->m = a->dims[0];
        p->k = a->dims[1];
        p->n = b->dims[1];
    } else {
        if (g->n_inputs != 1) {
            free(p);
            return par_msgf(msg, PAR_UNSUPPORTED, "one relu node only");
        }
        p->n = g->values[g->outputs[0]].numel;
    }
    *prepared = p;
    return PAR_OK;
}

static par_status slow_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    slow_prep *p = prepared;
    (void)ctx;
    (void)msg;
    p->a = inputs[0];
    p->b = p->matmul ? inputs[1] : NULL;
    p->out = outputs[0];
    return PAR_OK;
}

static void compute(slow_prep *p)
{
    if (!p->matmul) {
        for (int64_t i = 0; i < p->n; i++) p->out[i] = p->a[i] < 0.0f ? 0.0f : (p->a[i] == 0.0f ? 0.0f : p->a[i]);
        return;
    }
    /* Row by row, streaming b's rows (the same additions in the same order, q ascending, as a dot product per
     * element): regular access whose speed does not depend on where the buffers lie (a column walk of b would alias
     * in the cache by the buffers' addresses, which differ from process to process). */
    for (int64_t i = 0; i < p->m; i++) {
        float *o = p->out + i * p->n;
        for (int64_t j = 0; j < p->n; j++) o[j] = 0;
        for (int64_t q = 0; q < p->k; q++) {
            const float x = p->a[i * p->k + q], *brow = p->b + q * p->n;
            for (int64_t j = 0; j < p->n; j++) o[j] += x * brow[j];
        }
    }
}

static par_status slow_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)msg;
    const double t0 = now_s();
    compute(prepared);
    if (extra > 0) {
        const double t1 = now_s(), until = t1 + extra * (t1 - t0);
        while (now_s() < until) {
        }
    }
    return PAR_OK;
}

static const par_backend tp_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_slow",
    .description = "test plugin: relu and matmul, PARITY_TP_SLOW_EXTRA slower", .version = "1.0",
    .arith = PAR_ARITH_F32, .init = slow_init, .destroy = tp_destroy, .supports = slow_supports,
    .prepare = slow_prepare, .bind = slow_bind, .run = slow_run, .release = tp_release, .get_proc = NULL};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &tp_backend;
}
