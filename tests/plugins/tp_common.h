/*
 * tp_common.h - the shared part of the test plugins of tests/test_exec.c: a correct f32 relu backend for one-node
 * graphs (relu only). Each plugin in this folder includes it and changes one thing (its run, its table, its entry)
 * to misbehave in one way. Like any plugin they see only the public header.
 */
#ifndef TP_COMMON_H
#define TP_COMMON_H

#include "parity_backend.h"

#include <stdlib.h>
#include <string.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version);

typedef struct tp_prep {
    int64_t n;
    const float *in;
    float *out;
    uint32_t runs;
} tp_prep;

static inline par_status tp_init(void **ctx, par_msg *msg)
{
    static int tp_ctx;
    (void)msg;
    *ctx = &tp_ctx;
    return PAR_OK;
}

static inline void tp_destroy(void *ctx)
{
    (void)ctx;
}

static inline par_status tp_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    (void)ctx;
    if (strcmp(n->op, "relu") != 0) return par_msgf(msg, PAR_UNSUPPORTED, "only relu");
    if (par_node_input(g, n, 0)->dtype != PAR_DTYPE_F32) return par_msgf(msg, PAR_UNSUPPORTED, "only f32");
    return PAR_OK;
}

static inline par_status tp_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    (void)ctx;
    if (g->n_nodes != 1 || g->n_inputs != 1 || g->n_outputs != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "one relu node only");
    tp_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->n = g->values[g->outputs[0]].numel;
    *prepared = p;
    return PAR_OK;
}

static inline par_status tp_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs,
                                 par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    p->in = inputs[0];
    p->out = outputs[0];
    return PAR_OK;
}

/* relu(x) = max(x, 0), with relu(-0) = 0 and NaN kept. */
static inline void tp_relu(tp_prep *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) p->out[i] = p->in[i] < 0.0f ? 0.0f : (p->in[i] == 0.0f ? 0.0f : p->in[i]);
}

static inline par_status tp_run_ok(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    (void)msg;
    tp_relu(prepared, ((tp_prep *)prepared)->n);
    return PAR_OK;
}

static inline void tp_release(void *ctx, void *prepared)
{
    (void)ctx;
    free(prepared);
}

/* The table and the entry point of a plugin named NAME built for API version APIV with run RUN. */
#define TP_BACKEND(NAME, APIV, RUN, GET_PROC)                                                                       \
    static const par_backend tp_backend = {                                                                        \
        .api_version = (APIV), .struct_size = sizeof(par_backend), .name = (NAME),                                 \
        .description = "test plugin", .version = "1.0", .arith = PAR_ARITH_F32,                                    \
        .init = tp_init, .destroy = tp_destroy, .supports = tp_supports, .prepare = tp_prepare,                     \
        .bind = tp_bind, .run = (RUN), .release = tp_release, .get_proc = (GET_PROC)};                             \
    const par_backend *parity_backend_entry(uint32_t harness_api_version)                                          \
    {                                                                                                               \
        (void)harness_api_version;                                                                                  \
        return &tp_backend;                                                                                         \
    }

#endif
