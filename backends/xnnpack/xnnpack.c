/*
 * xnnpack.c - the `xnnpack` built-in backend: the system XNNPACK library (Debian's libxnnpack, the 2022-02
 * snapshot) behind parity's backend ABI, through XNNPACK's operator API (create at prepare, setup once, run).
 *
 * This file holds the backend table: context (xnn_initialize once per process, the pthreadpool of the `threads`
 * knob), supports, prepare (fusion planning, then one or more XNNPACK operators per node, xnnpack_lower*.c), bind,
 * run (graph inputs NCHW -> NHWC into padded buffers, the steps, graph outputs back to NCHW), release, a
 * micro-benchmark of XNNPACK's own GEMM for `parity bench --micro gemm`, and with the knob profile=1 each step of a
 * run timed and reported per node as the device time (PAR_PROC_DEVICE_TIME), as the cpu backend's profile=1.
 *
 * It must not judge results (the oracle does) nor work around XNNPACK: whatever the library lacks is UNSUPPORTED
 * with the reason, and whatever it computes differently is reported as it is (docs/findings.md).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "xnnpack_internal.h"
#include "core/requant.h"

#ifndef PAR_XNN_VERSION
#define PAR_XNN_VERSION "unknown"
#endif

#define PAR_MAX_THREADS 64

typedef struct xa_ctx {
    int threads;
    int profile;        /* knob profile=1: every step of a run timed, reported per node (PAR_PROC_DEVICE_TIME) */
    int strict;         /* knob strict=1: PAR_PROC_REQUANT_EXACT (a measurement tool, docs/backends/xnnpack.md) */
    char decl_op[32];   /* knob declare=OP:SCHEME: the scheme declared for OP's quantized nodes instead of the measured */
    par_requant decl;   /* one (what-if measurements: docs/findings.md, finding 5); decl_op "" when not set */
    int prepared;
    pthreadpool_t pool; /* created at the first prepare when threads > 1 */
} xa_ctx;

static par_status xa_init(void **ctx, par_msg *msg)
{
    enum xnn_status st = xnn_initialize(NULL); /* idempotent: XNNPACK initializes once per process */
    if (st == xnn_status_unsupported_hardware)
        return par_msgf(msg, PAR_UNSUPPORTED, "XNNPACK does not support this CPU (xnn_initialize: %s)",
                        par_xnn_status_name(st));
    if (st != xnn_status_success) return par_msgf(msg, PAR_ERROR, "xnn_initialize: %s", par_xnn_status_name(st));
    xa_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->threads = 1;
    *ctx = c;
    return PAR_OK;
}

static void xa_destroy(void *ctx)
{
    xa_ctx *c = ctx;
    if (!c) return;
    if (c->pool) pthreadpool_destroy(c->pool);
    free(c);
}

static par_status xa_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    xa_ctx *c = ctx;
    if (c->prepared) return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "strict") == 0) return par_knob_bool(key, value, &c->strict, msg);
    if (strcmp(key, "profile") == 0) return par_knob_bool(key, value, &c->profile, msg);
    if (strcmp(key, "declare") == 0) {
        const char *colon = strchr(value, ':');
        par_requant r;
        if (!colon || colon == value || (size_t)(colon - value) >= sizeof c->decl_op || par_requant_parse(colon + 1, &r) != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'declare': '%s' is not OP:SCHEME (a scheme: fp32, rndnu, gemmlowp, "
                            "rndna, pytorch_qnnp)", value);
        memcpy(c->decl_op, value, (size_t)(colon - value));
        c->decl_op[colon - value] = 0;
        c->decl = r;
        return PAR_OK;
    }
    if (strcmp(key, "threads") != 0)
        return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (the xnnpack backend has threads=1..%d, strict=0|1, "
                        "declare=OP:SCHEME, profile=0|1)", key, PAR_MAX_THREADS);
    return par_knob_threads(value, &c->threads, msg);
}

static size_t xa_describe(void *ctx, char *buf, size_t len)
{
    const xa_ctx *c = ctx;
    const char *decl = c->decl_op[0] ? par_requant_name(c->decl) : NULL;
    int need = snprintf(buf, len, "threads=%d;library=libxnnpack %s;api=operator;requant=fp32%s%s%s%s%s%s", c->threads,
                        PAR_XNN_VERSION, c->strict ? ";strict=1" : "", decl ? ";declare=" : "", decl ? c->decl_op : "",
                        decl ? ":" : "", decl ? decl : "", c->profile ? ";profile=1" : "");
    return need < 0 ? 0 : (size_t)need;
}

static par_status ensure_pool(xa_ctx *c, par_msg *msg)
{
    c->prepared = 1;
    if (c->threads > 1 && !c->pool) {
        c->pool = pthreadpool_create((size_t)c->threads);
        if (!c->pool) return par_msgf(msg, PAR_ERROR, "pthreadpool_create(%d) failed", c->threads);
    }
    return PAR_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* XNNPACK's f32 GEMM through fully_connected_nc_f32 at M = N = K = 1024 (its best micro-kernel for this CPU),
 * or its 3x3 convolution on 1x56x56x64 -> 64 (pad 1): GFLOP/s of the fastest of 15 runs after 3 warm-ups. */
static par_status xa_microbench(void *ctx, const char *name, double *value, char *unit, size_t unit_len, par_msg *msg)
{
    xa_ctx *c = ctx;
    int gemm = strcmp(name, "gemm") == 0, conv = strcmp(name, "conv3x3") == 0;
    if (!gemm && !conv)
        return par_msgf(msg, PAR_UNSUPPORTED, "micro-benchmark '%s' unknown (xnnpack has gemm, conv3x3)", name);
    if (ensure_pool(c, msg) != PAR_OK) return PAR_ERROR;
    size_t M = gemm ? 1024 : 56 * 56, K = gemm ? 1024 : 64 * 9, N = gemm ? 1024 : 64;
    size_t in_n = gemm ? M * K : 56 * 56 * 64, w_n = K * N;
    float *a = calloc(in_n + XNN_EXTRA_BYTES, sizeof *a), *w = calloc(w_n, sizeof *w), *y = calloc(M * N, sizeof *y);
    xnn_operator_t op = NULL;
    par_status rc = PAR_OK;
    if (!a || !w || !y) {
        rc = par_msgf(msg, PAR_ERROR, "microbench: out of memory");
        goto done;
    }
    for (size_t i = 0; i < in_n; i++) a[i] = (float)((i * 7919) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < w_n; i++) w[i] = (float)((i * 104729) % 1000) * 1e-3f - 0.5f;
    enum xnn_status st =
        gemm ? xnn_create_fully_connected_nc_f32(K, N, K, N, w, NULL, -INFINITY, INFINITY, 0, &op)
             : xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 64, 64, 64, 64, w, NULL, -INFINITY,
                                                 INFINITY, 0, &op);
    if (st == xnn_status_success)
        st = gemm ? xnn_setup_fully_connected_nc_f32(op, M, a, y, c->pool)
                  : xnn_setup_convolution2d_nhwc_f32(op, 1, 56, 56, a, y, c->pool);
    if (st != xnn_status_success) {
        rc = par_msgf(msg, PAR_ERROR, "microbench %s: XNNPACK create/setup: %s", name, par_xnn_status_name(st));
        goto done;
    }
    double best = INFINITY;
    for (int r = 0; r < 18; r++) {
        double t0 = now_s();
        st = xnn_run_operator(op, c->pool);
        double dt = now_s() - t0;
        if (st != xnn_status_success) {
            rc = par_msgf(msg, PAR_ERROR, "microbench %s: xnn_run_operator: %s", name, par_xnn_status_name(st));
            goto done;
        }
        if (r >= 3 && dt < best) best = dt;
    }
    *value = 2.0 * (double)M * (double)N * (double)K / best * 1e-9;
    snprintf(unit, unit_len, "GFLOP/s");
done:
    if (op) xnn_delete_operator(op);
    free(a);
    free(w);
    free(y);
    return rc;
}

/* The requantization scheme of XNNPACK's quantized convolution and fully connected operators in this snapshot
 * (docs/backends/xnnpack.md, "Quantized operators"). */
static par_requant xa_requant(void *ctx)
{
    (void)ctx;
    return PAR_REQUANT_FP32;
}

/* The scheme of each quantized node: its operator's, as measured (par_xnn_requant_q8), or the knob declare's. */
static par_requant xa_node_requant(void *ctx, void *prepared, int32_t node)
{
    const xa_ctx *c = ctx;
    const xa_plan *p = prepared;
    const par_node *n = &p->g->nodes[node];
    if (c->decl_op[0] && strcmp(n->op, c->decl_op) == 0) return c->decl;
    return par_xnn_requant_q8(p->g, n);
}

/* Knob strict=1: the promise that every integer is the declared scheme's, so that the oracle labels no
 * alternative (docs/quantization.md, "Strict mode"): how the schemes per operator were measured. */
static int xa_requant_exact(void *ctx)
{
    return ((const xa_ctx *)ctx)->strict;
}

/* Subnormals are flushed: xnn_run_operator hands every operator to pthreadpool with
 * PTHREADPOOL_FLAG_DISABLE_DENORMALS, which sets MXCSR's FTZ and DAZ bits around the work, on the caller's thread too
 * when the pool is NULL (docs/findings.md, finding 1). The oracle then budgets the flushes (docs/oracle.md). */
static uint32_t xa_arith_flags(void *ctx)
{
    (void)ctx;
    return PAR_ARITH_FLUSH_SUBNORMALS;
}

/* profile=1: the last run's time per node, the sum of the steps its lowering made (the operators of a fused
 * batch_norm or clamp count on the conv2d or producer that absorbed them; a conversion step made for a consumer counts
 * on that consumer); the graph inputs' and outputs' conversions count in the total only. */
static int xa_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    (void)ctx;
    const xa_plan *p = prepared;
    if (!p || !p->step_ms) return 0;
    double total = p->in_ms + p->out_ms;
    for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = -1;
    for (int32_t si = 0; si < p->n_steps; si++) {
        int32_t k = p->steps[si].node;
        total += p->step_ms[si];
        if (k >= 0 && k < n_nodes) node_ms[k] = (node_ms[k] < 0 ? 0 : node_ms[k]) + p->step_ms[si];
    }
    *total_ms = total;
    return 1;
}

static void *xa_get_proc(void *ctx, const char *name)
{
    const xa_ctx *c = ctx;
    if (strcmp(name, PAR_PROC_ARITH_FLAGS) == 0) return (void *)(par_arith_flags_fn)xa_arith_flags;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)xa_requant;
    if (strcmp(name, PAR_PROC_NODE_REQUANT) == 0) return (void *)(par_node_requant_fn)xa_node_requant;
    if (strcmp(name, PAR_PROC_REQUANT_EXACT) == 0) return (void *)(par_requant_exact_fn)xa_requant_exact;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)xa_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)xa_describe;
    if (strcmp(name, PAR_PROC_MICROBENCH) == 0) return (void *)(par_microbench_fn)xa_microbench;
    if (strcmp(name, PAR_PROC_DEVICE_TIME) == 0 && c && c->profile) return (void *)(par_device_time_fn)xa_device_time;
    return NULL;
}

static par_status xa_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    if (node < 0 || node >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "supports: node index %d out of range [0, %d)", node, g->n_nodes);
    return par_xnn_check(g, &g->nodes[node], msg);
}

static void xa_release(void *ctx, void *prepared)
{
    (void)ctx;
    xa_plan *p = prepared;
    if (!p) return;
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].op) xnn_delete_operator(p->steps[i].op);
    for (int32_t i = 0; i < p->n_mem; i++) free(p->mem[i]);
    free(p->mem);
    free(p->steps);
    free(p->buf);
    free(p->lay);
    free(p->alt);
    free(p->n_uses);
    free(p->is_output);
    free(p->skip);
    free(p->final_out);
    free(p->bn_of);
    free(p->out_min);
    free(p->out_max);
    free(p->cap);
    free(p->alt_cap);
    free(p->last_use);
    free(p->free_buf);
    free(p->free_cap);
    free(p->step_ms);
    free(p);
}

static par_status xa_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    xa_ctx *c = ctx;
    *prepared = NULL;
    if (ensure_pool(c, msg) != PAR_OK) return PAR_ERROR;
    xa_plan *p = calloc(1, sizeof *p);
    if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    p->g = g;
    p->pool = c->pool;
    p->cur_node = -1;
    size_t nv = (size_t)g->n_values + 1, nn = (size_t)g->n_nodes + 1;
    p->buf = calloc(nv, sizeof *p->buf);
    p->lay = calloc(nv, sizeof *p->lay);
    p->alt = calloc(nv, sizeof *p->alt);
    p->n_uses = calloc(nv, sizeof *p->n_uses);
    p->is_output = calloc(nv, 1);
    p->skip = calloc(nn, 1);
    p->final_out = calloc(nn, sizeof *p->final_out);
    p->bn_of = calloc(nn, sizeof *p->bn_of);
    p->out_min = calloc(nn, sizeof *p->out_min);
    p->out_max = calloc(nn, sizeof *p->out_max);
    p->cap = calloc(nv, sizeof *p->cap);
    p->alt_cap = calloc(nv, sizeof *p->alt_cap);
    p->last_use = calloc(nv, sizeof *p->last_use);
    p->free_buf = calloc(2 * nv, sizeof *p->free_buf); /* at most a buffer and a copy per value */
    p->free_cap = calloc(2 * nv, sizeof *p->free_cap);
    if (!p->cap || !p->alt_cap || !p->last_use || !p->free_buf || !p->free_cap || !p->buf || !p->lay || !p->alt ||
        !p->n_uses || !p->is_output || !p->skip || !p->final_out || !p->bn_of || !p->out_min || !p->out_max) {
        xa_release(ctx, p);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] >= 0) {
                p->n_uses[g->nodes[i].inputs[k]]++;
                p->last_use[g->nodes[i].inputs[k]] = i;
            }
    for (int32_t k = 0; k < g->n_outputs; k++) p->is_output[g->outputs[k]] = 1;
    for (int32_t k = 0; k < g->n_inputs; k++) {
        int32_t v = g->inputs[k];
        par_dtype dt = g->values[v].dtype;
        if (dt != PAR_DTYPE_F32 && dt != PAR_DTYPE_QU8 && dt != PAR_DTYPE_QS8) {
            xa_release(ctx, p);
            return par_msgf(msg, PAR_UNSUPPORTED, "graph input '%s' is %s; the adapter takes f32, qu8 and qs8 inputs",
                            g->values[v].name, par_dtype_name(dt));
        }
        if (!p->buf[v] && !par_xnn_output(p, v, XA_NHWC, msg)) {
            xa_release(ctx, p);
            return PAR_ERROR;
        }
    }
    par_xnn_plan_fusions(p);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (p->skip[i]) continue;
        par_msg m = {{0}};
        p->cur_node = i;
        par_status st = par_xnn_lower(p, i, &m);
        if (st != PAR_OK) {
            par_msgf(msg, st, "node '%s' (%s): %s", g->nodes[i].name, g->nodes[i].op, m.text);
            xa_release(ctx, p);
            return st;
        }
        par_xnn_release_inputs(p, i);
    }
    p->cur_node = -1;
    if (c->profile && !(p->step_ms = calloc((size_t)p->n_steps + 1, sizeof *p->step_ms))) {
        xa_release(ctx, p);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory for the profile of %d steps", (int)p->n_steps);
    }
    for (int32_t k = 0; k < g->n_outputs; k++) {
        const par_value *v = &g->values[g->outputs[k]];
        if (!p->buf[g->outputs[k]] && v->kind != PAR_VALUE_CONST) {
            xa_release(ctx, p);
            return par_msgf(msg, PAR_ERROR, "prepare: graph output '%s' is never computed", v->name);
        }
    }
    *prepared = p;
    return PAR_OK;
}

static par_status xa_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    xa_plan *p = prepared;
    if (!p) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    p->inputs = inputs;
    p->outputs = outputs;
    return PAR_OK;
}

static par_status xa_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    xa_plan *p = prepared;
    const par_graph_desc *g = p->g;
    if (!p->inputs || !p->outputs) return par_msgf(msg, PAR_ERROR, "run: bind was not called");
    double t = p->step_ms ? now_s() : 0, t1;
    for (int32_t k = 0; k < g->n_inputs; k++) {
        const par_value *v = &g->values[g->inputs[k]];
        void *dst = p->buf[g->inputs[k]];
        if (v->rank == 4 && p->lay[g->inputs[k]] == XA_NHWC)
            par_xnn_transpose(p->inputs[k], dst, v->dims[0], v->dims[1], v->dims[2] * v->dims[3],
                              par_dtype_size(v->dtype), 1);
        else memcpy(dst, p->inputs[k], (size_t)par_xnn_value_bytes(v));
    }
    if (p->step_ms) {
        t1 = now_s();
        p->in_ms = (t1 - t) * 1e3;
        t = t1;
    }
    for (int32_t i = 0; i < p->n_steps; i++) {
        const xa_step *s = &p->steps[i];
        if (s->kind == XA_STEP_OP) {
            enum xnn_status st = xnn_run_operator(s->op, p->pool);
            if (st != xnn_status_success)
                return par_msgf(msg, PAR_ERROR, "xnn_run_operator (step %d): %s", i, par_xnn_status_name(st));
        } else par_xnn_transpose(s->src, s->dst, s->n, s->c, s->hw, s->esize, s->kind == XA_STEP_TO_NHWC);
        if (p->step_ms) {
            t1 = now_s();
            p->step_ms[i] = (t1 - t) * 1e3;
            t = t1;
        }
    }
    for (int32_t k = 0; k < g->n_outputs; k++) {
        int32_t vi = g->outputs[k];
        const par_value *v = &g->values[vi];
        const void *src = p->buf[vi] ? p->buf[vi] : v->data;
        if (v->rank == 4 && p->buf[vi] && p->lay[vi] == XA_NHWC)
            par_xnn_transpose(src, p->outputs[k], v->dims[0], v->dims[1], v->dims[2] * v->dims[3],
                              par_dtype_size(v->dtype), 0);
        else memcpy(p->outputs[k], src, (size_t)par_xnn_value_bytes(v));
    }
    if (p->step_ms) p->out_ms = (now_s() - t) * 1e3;
    return PAR_OK;
}

static const par_backend xnnpack_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "xnnpack",
    .description = "the system XNNPACK library (operator API, f32 and qs8/qu8, NHWC) behind an adapter",
    .version = PAR_XNN_VERSION,
    .arith = PAR_ARITH_F32,
    .init = xa_init,
    .destroy = xa_destroy,
    .supports = xa_supports,
    .prepare = xa_prepare,
    .bind = xa_bind,
    .run = xa_run,
    .release = xa_release,
    .get_proc = xa_get_proc,
};

const par_backend *par_backend_xnnpack(void);
const par_backend *par_backend_xnnpack(void)
{
    return &xnnpack_backend;
}
