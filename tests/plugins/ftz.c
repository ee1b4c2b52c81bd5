/*
 * ftz.c - a test plugin that flushes subnormals (tests/test_ftz.c): a correct f32 backend for one-node graphs of
 * relu, max_pool2d, add (equal shapes) and linear whose arithmetic reads every subnormal input as a zero (DAZ) and
 * writes every subnormal result, of the op and of each product and partial sum inside it, as a zero (FTZ), the way
 * XNNPACK runs under MXCSR's FTZ and DAZ bits. It flushes in C (flush() below), so it behaves the same on every CPU.
 *
 * Knobs (the tests' levers, one thing each):
 *   declare=0|1  declare PAR_ARITH_FLUSH_SUBNORMALS through PAR_PROC_ARITH_FLAGS (default 1)
 *   flags=N      declare exactly the flag bits N instead (an unknown bit must be an ERROR naming the backend)
 *   bug=0|1      a real bug: linear reads the weight row of the next output (an off-by-one), add adds b's next
 *                element, max_pool2d drops the window's last column, relu passes negatives through; the oracle must
 *                fail these on the same cases even with the flushing declared
 * Like any plugin it sees only the public header.
 */
#include "parity_backend.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version);

typedef struct ftz_ctx {
    int declare;
    int bug;
    long flags; /* -1: from declare */
} ftz_ctx;

static ftz_ctx the_ctx;

typedef enum ftz_op { OP_RELU, OP_MAXPOOL, OP_ADD, OP_LINEAR } ftz_op;

typedef struct ftz_prep {
    ftz_op op;
    int64_t n_out;
    int64_t dims_x[4], dims_y[4];
    int32_t rank_x;
    int64_t k[2], s[2], p[4], d[2]; /* max_pool2d */
    int64_t K, N, rows;              /* linear */
    const float *w, *b;              /* linear constants */
    int has_b;
    const float *in[2];
    float *out;
} ftz_prep;

/* Flush-to-zero of one f32 value: a subnormal becomes a zero of its sign. */
static float flush(float x)
{
    return (x != 0.0f && fabsf(x) < FLT_MIN) ? copysignf(0.0f, x) : x;
}

static par_status ftz_init(void **ctx, par_msg *msg)
{
    (void)msg;
    the_ctx.declare = 1;
    the_ctx.bug = 0;
    the_ctx.flags = -1;
    *ctx = &the_ctx;
    return PAR_OK;
}

static void ftz_destroy(void *ctx)
{
    (void)ctx;
}

static int parse_01(const char *v, int *out)
{
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        *out = v[0] - '0';
        return 1;
    }
    return 0;
}

static par_status ftz_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    ftz_ctx *c = ctx;
    if (strcmp(key, "declare") == 0 && parse_01(value, &c->declare)) return PAR_OK;
    if (strcmp(key, "bug") == 0 && parse_01(value, &c->bug)) return PAR_OK;
    if (strcmp(key, "flags") == 0) {
        char *end = NULL;
        long f = strtol(value, &end, 0);
        if (end && *end == '\0' && f >= 0 && f <= 0xffffffffL) {
            c->flags = f;
            return PAR_OK;
        }
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob or value '%s=%s' (declare=0|1, flags=N, bug=0|1)", key, value);
}

static size_t ftz_describe(void *ctx, char *buf, size_t len)
{
    ftz_ctx *c = ctx;
    return (size_t)snprintf(buf, len, "declare=%d;bug=%d", c->declare, c->bug);
}

static uint32_t ftz_arith_flags(void *ctx)
{
    ftz_ctx *c = ctx;
    if (c->flags >= 0) return (uint32_t)c->flags;
    return c->declare ? PAR_ARITH_FLUSH_SUBNORMALS : 0u;
}

static void *ftz_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)ftz_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)ftz_describe;
    if (strcmp(name, PAR_PROC_ARITH_FLAGS) == 0) return (void *)(par_arith_flags_fn)ftz_arith_flags;
    return NULL;
}

static par_status ftz_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    (void)ctx;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (v && v->dtype != PAR_DTYPE_F32) return par_msgf(msg, PAR_UNSUPPORTED, "only f32");
    }
    if (strcmp(n->op, "relu") == 0) return PAR_OK;
    if (strcmp(n->op, "max_pool2d") == 0)
        return par_node_input(g, n, 0)->rank == 4 ? PAR_OK : par_msgf(msg, PAR_UNSUPPORTED, "rank 4 only");
    if (strcmp(n->op, "add") == 0) {
        const par_value *a = par_node_input(g, n, 0), *b = par_node_input(g, n, 1);
        if (a->numel != b->numel || a->rank != b->rank) return par_msgf(msg, PAR_UNSUPPORTED, "equal shapes only");
        return PAR_OK;
    }
    if (strcmp(n->op, "linear") == 0) {
        const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
        if (w->kind != PAR_VALUE_CONST || (b && b->kind != PAR_VALUE_CONST))
            return par_msgf(msg, PAR_UNSUPPORTED, "constant weights and bias only");
        return PAR_OK;
    }
    return par_msgf(msg, PAR_UNSUPPORTED, "only relu, max_pool2d, add, linear");
}

static par_status ftz_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    (void)ctx;
    if (g->n_nodes != 1 || g->n_outputs != 1) return par_msgf(msg, PAR_UNSUPPORTED, "one node only");
    const par_node *n = &g->nodes[0];
    ftz_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    const par_value *x = par_node_input(g, n, 0), *y = par_node_output(g, n, 0);
    p->n_out = y->numel;
    p->rank_x = x->rank;
    for (int32_t i = 0; i < x->rank && i < 4; i++) p->dims_x[i] = x->dims[i];
    for (int32_t i = 0; i < y->rank && i < 4; i++) p->dims_y[i] = y->dims[i];
    if (strcmp(n->op, "relu") == 0) {
        p->op = OP_RELU;
    } else if (strcmp(n->op, "add") == 0) {
        p->op = OP_ADD;
    } else if (strcmp(n->op, "max_pool2d") == 0) {
        p->op = OP_MAXPOOL;
        for (int i = 0; i < 2; i++) {
            p->k[i] = par_attr_ints_at(n, "kernel", i, 1);
            p->s[i] = par_attr_ints_at(n, "stride", i, 1);
            p->d[i] = par_attr_ints_at(n, "dilation", i, 1);
        }
        for (int i = 0; i < 4; i++) p->p[i] = par_attr_ints_at(n, "padding", i, 0);
    } else {
        const par_value *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
        p->op = OP_LINEAR;
        p->K = w->dims[1];
        p->N = w->dims[0];
        p->rows = x->numel / p->K;
        p->w = w->data;
        p->b = b ? b->data : NULL;
        p->has_b = b != NULL;
    }
    *prepared = p;
    return PAR_OK;
}

static par_status ftz_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    ftz_prep *p = prepared;
    (void)ctx;
    (void)msg;
    p->in[0] = inputs[0];
    p->in[1] = p->op == OP_ADD ? inputs[1] : NULL;
    p->out = outputs[0];
    return PAR_OK;
}

static void run_maxpool(const ftz_prep *p, int bug)
{
    const int64_t C = p->dims_x[0] * p->dims_x[1], H = p->dims_x[2], W = p->dims_x[3];
    const int64_t OH = p->dims_y[2], OW = p->dims_y[3];
    for (int64_t c = 0; c < C; c++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float m = -INFINITY;
                for (int64_t i = 0; i < p->k[0]; i++)
                    for (int64_t j = 0; j < p->k[1] - (bug ? 1 : 0); j++) {
                        int64_t ih = oh * p->s[0] - p->p[0] + i * p->d[0], iw = ow * p->s[1] - p->p[1] + j * p->d[1];
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        float v = flush(p->in[0][(c * H + ih) * W + iw]); /* DAZ */
                        if (v > m) m = v;
                    }
                p->out[(c * OH + oh) * OW + ow] = flush(m);
            }
}

static void run_linear(const ftz_prep *p, int bug)
{
    for (int64_t r = 0; r < p->rows; r++)
        for (int64_t o = 0; o < p->N; o++) {
            const int64_t wo = bug ? (o + 1) % p->N : o; /* the off-by-one */
            float acc = p->has_b ? flush(p->b[o]) : 0.0f;
            for (int64_t k = 0; k < p->K; k++) {
                float prod = flush(flush(p->in[0][r * p->K + k]) * flush(p->w[wo * p->K + k]));
                acc = flush(acc + prod);
            }
            p->out[r * p->N + o] = acc;
        }
}

static par_status ftz_run(void *ctx, void *prepared, par_msg *msg)
{
    ftz_prep *p = prepared;
    ftz_ctx *c = ctx;
    (void)msg;
    switch (p->op) {
    case OP_RELU:
        for (int64_t i = 0; i < p->n_out; i++) {
            float x = flush(p->in[0][i]);
            p->out[i] = (x > 0.0f || (c->bug && x == x)) ? x : 0.0f;
        }
        break;
    case OP_ADD:
        for (int64_t i = 0; i < p->n_out; i++) {
            int64_t j = c->bug ? (i + 1) % p->n_out : i;
            p->out[i] = flush(flush(p->in[0][i]) + flush(p->in[1][j]));
        }
        break;
    case OP_MAXPOOL: run_maxpool(p, c->bug); break;
    case OP_LINEAR: run_linear(p, c->bug); break;
    }
    return PAR_OK;
}

static void ftz_release(void *ctx, void *prepared)
{
    (void)ctx;
    free(prepared);
}

static const par_backend ftz_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "tp_ftz",
    .description = "test plugin: f32 relu, max_pool2d, add, linear with subnormals flushed (FTZ and DAZ)",
    .version = "1.0",
    .arith = PAR_ARITH_F32,
    .init = ftz_init,
    .destroy = ftz_destroy,
    .supports = ftz_supports,
    .prepare = ftz_prepare,
    .bind = ftz_bind,
    .run = ftz_run,
    .release = ftz_release,
    .get_proc = ftz_get_proc,
};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &ftz_backend;
}
