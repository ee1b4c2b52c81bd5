/*
 * tieaway.c - a test plugin with a quantized add (quantize -> add -> dequantize graphs, broadcasting as the case
 * asks) that computes docs/quantization.md's add formula exactly but rounds its ties by a rule of its own, and
 * declares whatever scheme it is told. Written from the documentation with the public header only, so that it is an
 * independent implementation (tests/test_ties.c):
 *   rule=away (default)  ties half away from zero (PyTorch QNNPACK's q8vadd, XNNPACK's rndna)
 *   rule=up              ties half up (rndnu; XNNPACK's vadd)
 *   rule=even            ties half to even (fp32)
 *   mult=parity (default) the larger multiplier in [2^20, 2^21); mult=qnnp: in [2^21, 2^22) (PyTorch's QNNPACK)
 *   declare=fp32 (default), rndnu, gemmlowp, rndna or pytorch_qnnp: the scheme PAR_PROC_REQUANT answers
 *   node=SCHEME or node=N (any integer, in or out of par_requant): what PAR_PROC_NODE_REQUANT answers for its add
 *                        nodes (every other node: the declare scheme); absent, the entry is absent too
 * With the defaults it is a backend that follows PyTorch QNNPACK's tie rule while declaring fp32: the oracle must
 * fail it on the ties, with their rule named.
 */
#include "parity_backend.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const par_backend *parity_backend_entry(uint32_t harness_api_version);

typedef struct ta_ctx {
    int rule;     /* 0 even, 1 away, 2 up */
    int qnnp;     /* multipliers one bit wider */
    par_requant declared;
    int node_set; /* knob node given */
    int32_t node; /* its value: what node_requant answers for add nodes */
} ta_ctx;

typedef struct ta_val {
    par_dtype dtype;
    int32_t rank;
    int64_t dims[PAR_MAX_RANK], numel;
    float scale;
    int32_t zp;
    void *buf; /* graph inputs and outputs: the harness's; others: ours */
    int own;
} ta_val;

typedef struct ta_node {
    int op; /* 0 quantize, 1 add, 2 dequantize */
    int32_t in[2], out;
} ta_node;

typedef struct ta_prep {
    int32_t n_values, n_nodes, n_in, n_out;
    ta_val *v;
    ta_node *nodes;
    int32_t *inputs, *outputs;
} ta_prep;

static ta_ctx the_ctx;

static par_status init(void **ctx, par_msg *msg)
{
    (void)msg;
    the_ctx = (ta_ctx){.rule = 1, .qnnp = 0, .declared = PAR_REQUANT_FP32};
    *ctx = &the_ctx;
    return PAR_OK;
}

static void destroy(void *ctx) { (void)ctx; }

static int is_q(par_dtype t) { return t == PAR_DTYPE_QU8 || t == PAR_DTYPE_QS8; }

static par_status supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    const par_node *n = &g->nodes[node];
    (void)ctx;
    if (strcmp(n->op, "quantize") == 0 || strcmp(n->op, "dequantize") == 0) return PAR_OK;
    if (strcmp(n->op, "add") != 0) return par_msgf(msg, PAR_UNSUPPORTED, "only quantized add");
    for (int32_t i = 0; i < 2; i++) {
        const par_value *v = par_node_input(g, n, i);
        if (!v || !is_q(v->dtype) || v->quant_axis >= 0) return par_msgf(msg, PAR_UNSUPPORTED, "only quantized add");
    }
    if (!is_q(par_node_output(g, n, 0)->dtype)) return par_msgf(msg, PAR_UNSUPPORTED, "only quantized add");
    return PAR_OK;
}

static void release(void *ctx, void *prepared)
{
    ta_prep *p = prepared;
    (void)ctx;
    if (!p) return;
    for (int32_t i = 0; p->v && i < p->n_values; i++)
        if (p->v[i].own) free(p->v[i].buf);
    free(p->v);
    free(p->nodes);
    free(p->inputs);
    free(p->outputs);
    free(p);
}

static size_t esize(par_dtype t) { return is_q(t) ? 1 : 4; }

static par_status prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    (void)ctx;
    ta_prep *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "out of memory");
    p->n_values = g->n_values;
    p->n_nodes = g->n_nodes;
    p->n_in = g->n_inputs;
    p->n_out = g->n_outputs;
    p->v = calloc((size_t)g->n_values + 1, sizeof *p->v);
    p->nodes = calloc((size_t)g->n_nodes + 1, sizeof *p->nodes);
    p->inputs = calloc((size_t)g->n_inputs + 1, sizeof *p->inputs);
    p->outputs = calloc((size_t)g->n_outputs + 1, sizeof *p->outputs);
    if (!p->v || !p->nodes || !p->inputs || !p->outputs) {
        release(ctx, p);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    for (int32_t i = 0; i < g->n_values; i++) {
        const par_value *gv = &g->values[i];
        ta_val *v = &p->v[i];
        v->dtype = gv->dtype;
        v->rank = gv->rank;
        memcpy(v->dims, gv->dims, sizeof v->dims);
        v->numel = gv->numel;
        v->scale = gv->scale;
        v->zp = gv->zero_point;
        if (gv->kind == PAR_VALUE_CONST) {
            v->buf = (void *)gv->data;
        } else {
            v->buf = calloc((size_t)gv->numel + 1, esize(gv->dtype));
            v->own = 1;
            if (!v->buf) {
                release(ctx, p);
                return par_msgf(msg, PAR_ERROR, "out of memory");
            }
        }
    }
    for (int32_t i = 0; i < g->n_inputs; i++) p->inputs[i] = g->inputs[i];
    for (int32_t i = 0; i < g->n_outputs; i++) p->outputs[i] = g->outputs[i];
    for (int32_t k = 0; k < g->n_nodes; k++) {
        const par_node *n = &g->nodes[k];
        ta_node *t = &p->nodes[k];
        t->op = strcmp(n->op, "quantize") == 0 ? 0 : strcmp(n->op, "add") == 0 ? 1 : 2;
        t->in[0] = n->inputs[0];
        t->in[1] = n->n_inputs > 1 ? n->inputs[1] : -1;
        t->out = n->outputs[0];
    }
    *prepared = p;
    return PAR_OK;
}

static par_status bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    ta_prep *p = prepared;
    (void)ctx;
    (void)msg;
    /* the harness's buffers replace ours for graph inputs and outputs (read and written in place) */
    for (int32_t i = 0; i < p->n_in + p->n_out; i++) {
        ta_val *v = &p->v[i < p->n_in ? p->inputs[i] : p->outputs[i - p->n_in]];
        if (v->own) free(v->buf);
        v->own = 0;
        v->buf = i < p->n_in ? (void *)inputs[i] : outputs[i - p->n_in];
    }
    return PAR_OK;
}

static int32_t get_q(const ta_val *v, int64_t i)
{
    return v->dtype == PAR_DTYPE_QS8 ? (int32_t)((const int8_t *)v->buf)[i] : (int32_t)((const uint8_t *)v->buf)[i];
}

static void set_q(ta_val *v, int64_t i, int32_t q)
{
    int32_t lo = v->dtype == PAR_DTYPE_QS8 ? -128 : 0, hi = v->dtype == PAR_DTYPE_QS8 ? 127 : 255;
    q = q < lo ? lo : q > hi ? hi : q;
    if (v->dtype == PAR_DTYPE_QS8) ((int8_t *)v->buf)[i] = (int8_t)q;
    else ((uint8_t *)v->buf)[i] = (uint8_t)q;
}

/* The flat index into an input broadcast to the output's shape (dimensions aligned on the right). */
static int64_t bcast(const ta_val *in, const ta_val *out, int64_t i)
{
    int64_t idx = 0, stride = 1;
    for (int32_t d = out->rank - 1, e = in->rank - 1; d >= 0; d--, e--) {
        int64_t c = i % out->dims[d];
        i /= out->dims[d];
        if (e < 0) continue;
        if (in->dims[e] != 1) idx += c * stride;
        stride *= in->dims[e];
    }
    return idx;
}

/* floor(acc / 2^n) plus the rule's choice at an exact half. */
static int64_t round_shift(const ta_ctx *c, int64_t acc, int n)
{
    const int64_t q = acc >= 0 ? acc >> n : -((-acc + (INT64_C(1) << n) - 1) >> n); /* floor */
    const int64_t rem = acc - q * (INT64_C(1) << n), half = INT64_C(1) << (n - 1);
    if (rem > half) return q + 1;
    if (rem < half) return q;
    if (c->rule == 2) return q + 1;                       /* up */
    if (c->rule == 1) return acc > 0 ? q + 1 : q;         /* away */
    return (q & 1) ? q + 1 : q;                           /* even */
}

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    const ta_ctx *c = ctx;
    ta_prep *p = prepared;
    (void)msg;
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const ta_node *t = &p->nodes[k];
        ta_val *y = &p->v[t->out];
        const ta_val *a = &p->v[t->in[0]];
        if (t->op == 0) { /* quantize: clamp(round_half_even(x / s) + zp) */
            for (int64_t i = 0; i < y->numel; i++)
                set_q(y, i, (int32_t)nearbyint((double)((const float *)a->buf)[i] / (double)y->scale) + y->zp);
        } else if (t->op == 2) { /* dequantize: s (q - zp) in float */
            for (int64_t i = 0; i < y->numel; i++) ((float *)y->buf)[i] = a->scale * (float)(get_q(a, i) - a->zp);
        } else {
            const ta_val *b = &p->v[t->in[1]];
            const float ra = a->scale / y->scale, rb = b->scale / y->scale, rmax = ra > rb ? ra : rb;
            int e;
            frexpf(rmax, &e); /* rmax = f 2^e, f in [0.5, 1): the larger multiplier lands in [2^20, 2^21) */
            const int shift = 21 - e + (c->qnnp ? 1 : 0);
            const int64_t ma = lrintf(ldexpf(ra, shift)), mb = lrintf(ldexpf(rb, shift));
            for (int64_t i = 0; i < y->numel; i++) {
                int64_t acc = ma * (get_q(a, bcast(a, y, i)) - a->zp) + mb * (get_q(b, bcast(b, y, i)) - b->zp);
                set_q(y, i, (int32_t)round_shift(c, acc, shift) + y->zp);
            }
        }
    }
    return PAR_OK;
}

static const char *const scheme_names[] = {"fp32", "rndnu", "gemmlowp", "rndna", "pytorch_qnnp"};

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    ta_ctx *c = ctx;
    if (strcmp(key, "rule") == 0) {
        if (strcmp(value, "even") == 0) c->rule = 0;
        else if (strcmp(value, "away") == 0) c->rule = 1;
        else if (strcmp(value, "up") == 0) c->rule = 2;
        else return par_msgf(msg, PAR_ERROR, "rule: even, away or up");
        return PAR_OK;
    }
    if (strcmp(key, "mult") == 0) {
        if (strcmp(value, "parity") != 0 && strcmp(value, "qnnp") != 0)
            return par_msgf(msg, PAR_ERROR, "mult: parity or qnnp");
        c->qnnp = strcmp(value, "qnnp") == 0;
        return PAR_OK;
    }
    if (strcmp(key, "declare") == 0) {
        for (int s = 0; s < (int)(sizeof scheme_names / sizeof *scheme_names); s++)
            if (strcmp(value, scheme_names[s]) == 0) {
                c->declared = (par_requant)s;
                return PAR_OK;
            }
        return par_msgf(msg, PAR_ERROR, "declare: unknown scheme '%s'", value);
    }
    if (strcmp(key, "node") == 0) {
        c->node_set = 1;
        for (int s = 0; s < (int)(sizeof scheme_names / sizeof *scheme_names); s++)
            if (strcmp(value, scheme_names[s]) == 0) {
                c->node = s;
                return PAR_OK;
            }
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (!*value || *end) return par_msgf(msg, PAR_ERROR, "node: a scheme or an integer");
        c->node = (int32_t)v;
        return PAR_OK;
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s'", key);
}

static par_requant requant(void *ctx) { return ((const ta_ctx *)ctx)->declared; }

/* add nodes: the knob node's value; every other (quantize) node: the backend-wide scheme */
static par_requant node_requant(void *ctx, void *prepared, int32_t node)
{
    const ta_ctx *c = ctx;
    const ta_prep *p = prepared;
    return p->nodes[node].op == 1 ? (par_requant)c->node : c->declared;
}

static void *get_proc(void *ctx, const char *name)
{
    const ta_ctx *c = ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)set_knob;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)requant;
    if (strcmp(name, PAR_PROC_NODE_REQUANT) == 0 && c && c->node_set) return (void *)node_requant;
    return NULL;
}

static const par_backend tieaway = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_tieaway",
    .description = "test plugin: quantized add rounding ties by its own rule", .version = "1.0",
    .arith = PAR_ARITH_F32, .init = init, .destroy = destroy, .supports = supports, .prepare = prepare,
    .bind = bind, .run = run, .release = release, .get_proc = get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &tieaway;
}
