/*
 * quantize.c - par_case_quantize: the quantized twin of a float case (docs/quantization.md, "Quantized twins").
 *
 * Three passes over the float graph: (1) plan: fold each inference batch_norm into the conv2d that feeds only it,
 * and quantize every conv2d / linear weight tensor (per tensor or per output channel, symmetric qs8); (2) calibrate:
 * run the float reference on a float copy of the graph that carries the weights the twin will have (dequantized)
 * and take the range of every value; (3) emit: quantize the graph inputs, run every op that has a quantized form on
 * integers with per-tensor scale = range / 255 (the range always includes 0; qs16: max |range| / 32767, zero point 0,
 * and only conv2d / linear on integers), and dequantize the outputs. With
 * `dynamic` only the weights of linear layers are quantized (linear_dynamic), nothing is calibrated and every other
 * op stays float. It never changes the source case and never writes files.
 */
#include "quantize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference/reference.h"
#include "core/prng.h"
#include "core/tensor.h"

#define SIGMA_Q 31.75 /* std of seeded qs8 weights: 127 / 4, so the +-127 clamp only cuts 4-sigma tails */

/* An op whose integer form accumulates products with a weight tensor (input 1) and an i32 bias (input 2): conv2d,
 * linear (the ACC families of core/ops.def). Its weights are quantized per tensor or per output channel. */
static int weighted(const char *op)
{
    const par_op_info *info = par_op_find(op);
    return info && (info->qform == PAR_QFORM_ACC_AXIS1 || info->qform == PAR_QFORM_ACC_LAST);
}

typedef struct wplan {
    int active;          /* conv2d / linear with constant f32 weights (and bias): quantized */
    int32_t bn;          /* the batch_norm node folded into it, or -1 */
    int64_t oc, per;     /* output channels, weights per channel */
    int64_t taps, og;    /* conv_transpose2d ([C, O/g, kh, kw]): kh kw, and O/g (the channel is (j / taps) % og) */
    int pc;              /* per-channel scales (on axis 0; axis 1 of conv_transpose2d, with one group only) */
    float *wf, *bf;      /* folded float weights and bias (bias zeros when absent) */
    int8_t *wq;          /* quantized weights */
    float *ws;           /* scales: oc of them (per-channel) or 1 */
    float *wd;           /* dequantized weights (calibration) */
    par_gen gen;         /* seeded: the generator of wq */
    int64_t blk;         /* linear_16a4w (par_quant_opts.int4_block): its block; 0 for qs8 weights */
    int8_t *m4;          /* linear_16a4w: the block multipliers [oc, K / blk] (ws: the channel scales) */
} wplan;

typedef struct qctx {
    const par_case *src;
    const par_graph_desc *g;
    const par_quant_opts *o;
    int seeded;
    int32_t *uses;       /* per value: consumers (nodes and graph outputs) */
    int32_t *folded;     /* per node: 1 for a batch_norm folded away */
    int32_t *alias;      /* per value: the value that stands for it (a folded batch_norm's output -> the conv's) */
    wplan *wp;           /* per node */
    double *lo, *hi;     /* per value: calibrated range */
    /* emit */
    par_case *c;
    int32_t *fval, *qval; /* per value: its float / quantized version in the new case, or -1 */
    float *qs;
    int32_t *qz;
    par_msg *msg;
} qctx;

static const par_tensor_src *src_of(const par_case *c, int32_t v)
{
    for (int32_t k = 0; k < c->n_srcs; k++)
        if (c->srcs[k].value == v) return &c->srcs[k];
    return NULL;
}

static const float *const_f32(const par_graph_desc *g, int32_t v)
{
    if (v < 0 || g->values[v].kind != PAR_VALUE_CONST || g->values[v].dtype != PAR_DTYPE_F32) return NULL;
    return g->values[v].data;
}

static int input_of(const par_node *n, int32_t i) { return i < n->n_inputs ? n->inputs[i] : -1; }

/* ---- pass 1: plan ------------------------------------------------------------------------------------------- */

/* The scale index of weight element j: 0 per tensor; per channel its output channel (axis 0, or axis 1 of
 * conv_transpose2d's [C, O, kh, kw] with one group). */
static int64_t chan_of(const wplan *p, int64_t j)
{
    if (!p->pc) return 0;
    return p->taps ? (j / p->taps) % p->og : j / p->per;
}

/* linear_16a4w's weights (docs/quantization.md, "16a4w"), Qualcomm's LPBQ: per output channel o and block b the
 * int4 scale a = max |w| / 7; the channel scale s[o] = max_b a / 15 (or a itself with one block per channel) and
 * the multiplier m = ceil(a / s[o]) in [1, 15], so the block's scale s[o] m >= a and no weight of the block clips
 * past 7.5 steps; w_q = clamp(rne(w / (s[o] m)), -8, 7). wq holds the nibbles, wd their real values. */
static par_status plan_int4(wplan *p, int64_t k, int64_t blk, int bf16, par_msg *msg)
{
    const int64_t nb = k / blk;
    p->blk = blk;
    p->pc = 1;
    p->m4 = malloc((size_t)(p->oc * nb));
    double *a = malloc(sizeof *a * (size_t)nb);
    if (!p->m4 || !a) {
        free(a);
        return par_msgf(msg, PAR_ERROR, "out of memory");
    }
    for (int64_t o = 0; o < p->oc; o++) {
        double amax = 0;
        for (int64_t b = 0; b < nb; b++) {
            a[b] = 0;
            for (int64_t i = b * blk; i < (b + 1) * blk; i++) a[b] = fmax(a[b], fabs((double)p->wf[o * k + i]));
            a[b] /= 7.0;
            amax = fmax(amax, a[b]);
        }
        double sc = nb == 1 ? amax : amax / 15.0;
        if (!(sc > 0) || !isfinite(sc)) sc = 1e-6;
        p->ws[o] = bf16 ? par_f32_round_bf16((float)sc) : (float)sc;
        for (int64_t b = 0; b < nb; b++) {
            double mm = ceil(a[b] / (double)p->ws[o]);
            const int m = nb == 1 ? 1 : (int)(mm < 1 ? 1 : mm > 15 ? 15 : mm);
            p->m4[o * nb + b] = (int8_t)m;
            const double bs = (double)p->ws[o] * m;
            for (int64_t i = b * blk; i < (b + 1) * blk; i++) {
                double t = nearbyint(p->wf[o * k + i] / bs);
                p->wq[o * k + i] = (int8_t)(t > 7 ? 7 : t < -8 ? -8 : t);
                p->wd[o * k + i] = (float)(bs * p->wq[o * k + i]);
            }
        }
    }
    free(a);
    return PAR_OK;
}

static par_status plan_weights(qctx *q, int32_t ni)
{
    const par_graph_desc *g = q->g;
    const par_node *n = &g->nodes[ni];
    wplan *p = &q->wp[ni];
    int32_t wv = input_of(n, 1), bv = input_of(n, 2);
    const float *w = const_f32(g, wv), *b = bv >= 0 ? const_f32(g, bv) : NULL;
    if (!w || (bv >= 0 && !b)) return PAR_OK; /* dynamic weights or bias: the node stays float */
    p->active = 1;
    const par_value *wval = &g->values[wv];
    const int transposed = par_op_of(n)->id == PAR_OP_CONV_TRANSPOSE2D;
    const int64_t groups_attr = transposed ? par_attr_int(n, "groups", 1) : 1;
    p->taps = transposed ? wval->dims[2] * wval->dims[3] : 0;
    p->og = transposed ? wval->dims[1] : 0;
    p->oc = transposed ? wval->dims[1] * groups_attr : wval->dims[0];
    p->per = wval->numel / p->oc;
    p->pc = q->o->per_channel && groups_attr == 1;
    p->wf = malloc(sizeof *p->wf * (size_t)g->values[wv].numel);
    p->bf = calloc((size_t)p->oc, sizeof *p->bf);
    p->wq = malloc((size_t)g->values[wv].numel);
    p->wd = malloc(sizeof *p->wd * (size_t)g->values[wv].numel);
    p->ws = malloc(sizeof *p->ws * (size_t)p->oc);
    if (!p->wf || !p->bf || !p->wq || !p->wd || !p->ws) return par_msgf(q->msg, PAR_ERROR, "out of memory");
    memcpy(p->wf, w, sizeof *p->wf * (size_t)g->values[wv].numel);
    if (b) memcpy(p->bf, b, sizeof *p->bf * (size_t)p->oc);
    if (p->bn >= 0) {
        /* y = (conv - mean) / sqrt(var + eps) * gamma + beta = conv * k + (beta - mean k), k = gamma / sqrt(var+eps) */
        const par_node *bn = &g->nodes[p->bn];
        const float *ga = const_f32(g, bn->inputs[1]), *be = const_f32(g, bn->inputs[2]);
        const float *mu = const_f32(g, bn->inputs[3]), *va = const_f32(g, bn->inputs[4]);
        double eps = par_attr_float(bn, "eps", 1e-5);
        for (int64_t c = 0; c < p->oc; c++) {
            double k = ga[c] / sqrt((double)va[c] + eps);
            for (int64_t i = 0; i < p->per; i++) p->wf[c * p->per + i] = (float)(p->wf[c * p->per + i] * k);
            p->bf[c] = (float)(((double)p->bf[c] - mu[c]) * k + be[c]);
        }
    }
    const int64_t k4 = par_op_of(n)->id == PAR_OP_LINEAR ? wval->dims[1] : 0;
    const int64_t blk = q->o->per_channel ? k4 : q->o->int4_block;
    if (q->o->int4_block && k4 > 0 && k4 % 2 == 0 && blk % 2 == 0 && k4 % blk == 0) return plan_int4(p, k4, blk, q->o->w4_bf16, q->msg);
    /* scales: per channel, or one for the tensor; chan_of gives element j's scale index */
    int64_t groups = p->pc ? p->oc : 1, gsize = p->oc * p->per / groups, numel = wval->numel;
    if (q->seeded) {
        p->gen = (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = SIGMA_Q, .fan_in = 0,
                           .seed = par_hash_str(wval->name, q->src->seed) | 1};
        par_gen_fill(&p->gen, PAR_DTYPE_QS8, wval->rank, wval->dims, p->wq);
    }
    double *m = calloc((size_t)groups, sizeof *m), *ss = calloc((size_t)groups, sizeof *ss);
    if (!m || !ss) {
        free(m), free(ss);
        return par_msgf(q->msg, PAR_ERROR, "out of memory");
    }
    for (int64_t j = 0; j < numel; j++) {
        int64_t k = chan_of(p, j);
        m[k] = fmax(m[k], fabs((double)p->wf[j]));
        ss[k] += (double)p->wf[j] * p->wf[j];
    }
    for (int64_t k = 0; k < groups; k++) {
        /* seeded: match the float weights' spread (root mean square); data: the largest magnitude maps to 127 */
        double sc = q->seeded ? sqrt(ss[k] / (double)gsize) / SIGMA_Q : m[k] / 127.0;
        if (!(sc > 0) || !isfinite(sc)) sc = 1e-6;
        p->ws[k] = (float)sc;
    }
    for (int64_t j = 0; j < numel; j++) {
        int64_t k = chan_of(p, j);
        if (!q->seeded) {
            double t = nearbyint(p->wf[j] / (double)p->ws[k]);
            p->wq[j] = (int8_t)(t > 127 ? 127 : t < -127 ? -127 : t);
        }
        p->wd[j] = p->ws[k] * (float)p->wq[j];
    }
    free(m);
    free(ss);
    return PAR_OK;
}

/* The nodes whose weights are quantized: the weighted ops (static), only linear (dynamic). */
static int planned(const qctx *q, const par_node *n)
{
    return q->o->dynamic ? par_op_of(n)->id == PAR_OP_LINEAR : weighted(n->op);
}

static par_status plan(qctx *q)
{
    const par_graph_desc *g = q->g;
    for (int32_t v = 0; v < g->n_values; v++) q->alias[v] = v;
    for (int32_t ni = 0; ni < g->n_nodes; ni++) {
        q->wp[ni].bn = -1;
        for (int32_t i = 0; i < g->nodes[ni].n_inputs; i++)
            if (g->nodes[ni].inputs[i] >= 0) q->uses[g->nodes[ni].inputs[i]]++;
    }
    for (int32_t k = 0; k < g->n_outputs; k++) q->uses[g->outputs[k]]++;
    for (int32_t ni = 0; ni < g->n_nodes && !q->o->dynamic; ni++) {
        const par_node *n = &g->nodes[ni];
        if (strcmp(n->op, "batch_norm") != 0) continue;
        int32_t x = n->inputs[0], p = g->values[x].producer;
        int ok = p >= 0 && strcmp(g->nodes[p].op, "conv2d") == 0 && q->uses[x] == 1 && q->wp[p].bn < 0;
        for (int32_t i = 1; i < 5 && ok; i++) ok = const_f32(g, n->inputs[i]) != NULL;
        if (ok) ok = const_f32(g, g->nodes[p].inputs[1]) != NULL &&
                     (input_of(&g->nodes[p], 2) < 0 || const_f32(g, g->nodes[p].inputs[2]));
        if (!ok) continue;
        q->wp[p].bn = ni;
        q->folded[ni] = 1;
        q->alias[n->outputs[0]] = x;
    }
    int64_t total = 0, gen = 1;
    for (int32_t ni = 0; ni < g->n_nodes; ni++) {
        const par_node *n = &g->nodes[ni];
        if (!planned(q, n)) continue;
        int32_t wv = input_of(n, 1);
        if (!const_f32(g, wv)) continue;
        total += g->values[wv].numel;
        const par_tensor_src *s = src_of(q->src, wv);
        gen &= s && s->kind == PAR_SRC_GEN;
    }
    q->seeded = q->o->seeded >= 0 ? q->o->seeded : (gen && total > (INT64_C(1) << 20));
    for (int32_t ni = 0; ni < g->n_nodes; ni++) {
        const par_node *n = &g->nodes[ni];
        if (!planned(q, n)) continue;
        if (plan_weights(q, ni) != PAR_OK) return PAR_ERROR;
    }
    return PAR_OK;
}

/* ---- pass 2: calibrate -------------------------------------------------------------------------------------- */

/* A copy of a constant of the source case (its generator, or its data). */
static int32_t copy_const(qctx *q, par_case *c, int32_t v)
{
    const par_value *val = &q->g->values[v];
    const par_tensor_src *s = src_of(q->src, v);
    int32_t k = (s && s->kind == PAR_SRC_GEN) ? par_case_const(c, val->name, val->dtype, val->rank, val->dims, s->gen)
                                              : par_case_const_data(c, val->name, val->dtype, val->rank, val->dims,
                                                                    val->data);
    if (k >= 0 && val->quant_axis >= 0 && val->channel_scales) {
        par_msg m = {{0}};
        if (par_graph_set_channel_quant(c->graph, k, val->quant_axis, val->channel_scales,
                                        val->dims[val->quant_axis], &m) != PAR_OK && c->status == PAR_OK) {
            c->status = PAR_ERROR;
            c->err = m;
        }
    } else if (k >= 0 && (par_dtype_is_quant(val->dtype) || val->dtype == PAR_DTYPE_I32)) {
        par_case_quant(c, k, val->scale, val->zero_point);
    }
    return k;
}

static int32_t copy_input(qctx *q, par_case *c, int32_t v)
{
    const par_value *val = &q->g->values[v];
    const par_tensor_src *s = src_of(q->src, v);
    if (s && s->kind == PAR_SRC_GEN) return par_case_input(c, val->name, val->dtype, val->rank, val->dims, s->gen);
    if (s && s->kind == PAR_SRC_INLINE && s->data)
        return par_case_input_data(c, val->name, val->dtype, val->rank, val->dims, s->data);
    c->status = par_msgf(&c->err, PAR_ERROR, "input '%s': only generated or inline inputs can be quantized",
                         val->name);
    return -1;
}

/* Ranges too narrow to quantize by. A value whose elements are all equal (a relu of negative values, a convolution
 * reading only padding, an all-equal input) would get a scale near 1e-6 / 255, and a requantization ratio
 * s_in s_w / s_out near 1e5 where it is produced, beyond what every integer scheme accepts (< 256): the twin could
 * not run at all. Such a range gets width 1 (its one value is still exact: the range holds it and 0); and the
 * emitter keeps every node's output scale at least 1/64 of its first input's (wider_out). Widening costs only
 * resolution, which the oracle's integer budgets follow from the scales. */
static void widen_ranges(qctx *q)
{
    for (int32_t v = 0; v < q->g->n_values; v++)
        if (!(q->hi[v] - q->lo[v] > 1e-6)) q->hi[v] = q->lo[v] + 1.0;
}

/* v's range widened around its middle (still holding 0) to at least width need. */
static void widen_to(qctx *q, int32_t v, double need)
{
    if (v < 0 || q->hi[v] - q->lo[v] >= need) return;
    const double mid = 0.5 * (q->lo[v] + q->hi[v]);
    q->lo[v] = fmin(0.0, fmin(q->lo[v], mid - 0.5 * need));
    q->hi[v] = fmax(0.0, fmax(q->hi[v], mid + 0.5 * need));
}

/* A quantized add takes each input to the output's scale by a multiplier every integer scheme keeps within
 * [2^-10, 2^8) of it (core/requant.h): an input far narrower than the output (a small constant added to a wide
 * tensor: 1/255 against 5.8 gave a ratio of 6.7e-4) would make the twin impossible to run. Each input of an add
 * gets at least 1/512 of the width its output will have (the calibrated one, or 1/64 of the first input's, as
 * wider_out makes it), a factor 2 from the bound; back to front, so that an input widened here is an output whose
 * own inputs are widened after it. Widening costs only resolution. */
static void widen_add_inputs(qctx *q)
{
    const par_graph_desc *g = q->g;
    for (int32_t k = g->n_nodes - 1; k >= 0; k--) {
        const par_node *n = &g->nodes[k];
        if (par_op_of(n)->qform != PAR_QFORM_ADD || n->n_inputs < 2 || n->n_outputs < 1) continue;
        const int32_t a = n->inputs[0], b = n->inputs[1], o = n->outputs[0];
        if (a < 0 || b < 0 || o < 0) continue;
        const double wo = fmax(q->hi[o] - q->lo[o], (q->hi[a] - q->lo[a]) / 64.0), need = wo / 512.0;
        widen_to(q, a, need);
        widen_to(q, b, need);
    }
}

/* The output range of a node whose quantized first input has scale s_in, widened around its middle (still holding
 * 0) to at least steps s_in / 64 (steps: 255, or 65535 for qs16): a ratio s_in s_w / s_out of at most 64 s_w for a
 * convolution, 64 for a move, a clamp or a table, whatever the calibration saw (a relu6 after a tanh whose fixed
 * output scale is 1/128 while its values span 0.004). */
static void wider_out(double s_in, double steps, double *lo, double *hi)
{
    const double need = steps * s_in / 64.0;
    if (!(s_in > 0) || *hi - *lo >= need) return;
    const double mid = 0.5 * (*lo + *hi);
    *lo = fmin(0.0, fmin(*lo, mid - 0.5 * need));
    *hi = fmax(0.0, fmax(*hi, mid + 0.5 * need));
}

static par_status calibrate(qctx *q)
{
    const par_graph_desc *g = q->g;
    par_case *c = par_case_create("calibration", q->src->seed);
    int32_t *map = malloc(sizeof *map * (size_t)g->n_values);
    if (!c || !map) {
        par_case_destroy(c);
        free(map);
        return par_msgf(q->msg, PAR_ERROR, "out of memory");
    }
    for (int32_t v = 0; v < g->n_values; v++) map[v] = -1;
    for (int32_t i = 0; i < g->n_inputs; i++) map[g->inputs[i]] = copy_input(q, c, g->inputs[i]);
    for (int32_t ni = 0; ni < g->n_nodes && c->status == PAR_OK; ni++) {
        const par_node *n = &g->nodes[ni];
        if (q->folded[ni]) continue;
        int32_t ins[64];
        char nb[300];
        for (int32_t i = 0; i < n->n_inputs && i < 64; i++) {
            int32_t v = n->inputs[i];
            ins[i] = -1;
            if (v < 0) continue;
            if (q->wp[ni].active && (i == 1 || i == 2)) {
                const par_value *val = &g->values[v];
                snprintf(nb, sizeof nb, "%s_cal", val->name);
                ins[i] = par_case_const_data(c, nb, PAR_DTYPE_F32, val->rank, val->dims,
                                             i == 1 ? (const void *)q->wp[ni].wd : (const void *)q->wp[ni].bf);
                continue;
            }
            if (map[v] < 0 && g->values[v].kind == PAR_VALUE_CONST) map[v] = copy_const(q, c, v);
            ins[i] = map[v];
        }
        int32_t out_v = n->outputs[0];
        if (q->wp[ni].active && q->wp[ni].bn >= 0 && input_of(n, 2) < 0) {
            /* a folded bias where the conv had none: add it as a constant */
            snprintf(nb, sizeof nb, "%s_bias_cal", n->name);
            ins[2] = par_case_const_data(c, nb, PAR_DTYPE_F32, 1, (int64_t[]){q->wp[ni].oc}, q->wp[ni].bf);
        }
        int32_t n_in = q->wp[ni].active && q->wp[ni].bn >= 0 && n->n_inputs < 3 ? 3 : n->n_inputs;
        par_out_spec os = {g->values[out_v].name, 0, 0, 0};
        map[out_v] = par_case_node(c, n->op, n_in, ins, n->n_attrs, n->attrs, &os);
        if (q->wp[ni].bn >= 0) map[g->nodes[q->wp[ni].bn].outputs[0]] = map[out_v];
    }
    for (int32_t k = 0; k < g->n_outputs && c->status == PAR_OK; k++) par_case_output(c, map[q->alias[g->outputs[k]]]);
    par_status st = par_case_finish(c);
    if (st != PAR_OK) {
        par_msgf(q->msg, st, "calibration graph: %s", c->err.text);
    } else {
        void **bufs = NULL;
        par_ref_result *r = NULL;
        par_prec p = par_prec_for(PAR_ARITH_F32);
        st = par_case_make_inputs(c, &bufs, q->msg);
        if (st == PAR_OK) st = par_ref_run(par_graph_desc_of(c->graph), &p, (const void *const *)bufs, &r, q->msg);
        for (int32_t v = 0; v < g->n_values && st == PAR_OK; v++) {
            q->lo[v] = q->hi[v] = 0;
            if (map[v] < 0) continue;
            const par_rt *t = &r->values[map[v]];
            for (int64_t i = 0; i < t->numel; i++) {
                if (isfinite(t->v[i])) {
                    q->lo[v] = fmin(q->lo[v], t->v[i]);
                    q->hi[v] = fmax(q->hi[v], t->v[i]);
                }
            }
        }
        par_ref_result_destroy(r);
        if (bufs) par_case_free_inputs(c, bufs);
        if (st == PAR_OK) widen_ranges(q);
        if (st == PAR_OK) widen_add_inputs(q);
    }
    par_case_destroy(c);
    free(map);
    return st;
}

/* ---- pass 3: emit ------------------------------------------------------------------------------------------- */

/* The steps of the activation dtype's range: 255, or 65535 for qs16. */
static double act_steps(const qctx *q) { return q->o->act == PAR_DTYPE_QS16 ? 65535.0 : 255.0; }

static void act_params(const qctx *q, double lo, double hi, float *scale, int32_t *zp)
{
    if (q->o->act == PAR_DTYPE_QS16) {
        /* symmetric: the larger magnitude maps to 32767, zero point 0 */
        double m = fmax(fabs(lo), fabs(hi));
        *scale = (float)((m > 1e-6 ? m : 1e-6) / 32767.0);
        *zp = 0;
        return;
    }
    if (!(hi - lo > 1e-6)) hi = lo + 1e-6;
    double s = (hi - lo) / 255.0;
    double z = nearbyint(-lo / s);
    z = z < 0 ? 0 : z > 255 ? 255 : z;
    if (q->o->act == PAR_DTYPE_QS8) z -= 128;
    *scale = (float)s;
    *zp = (int32_t)z;
}

static int32_t get_f(qctx *q, int32_t v);

static int32_t get_q(qctx *q, int32_t v)
{
    if (q->qval[v] >= 0) return q->qval[v];
    int32_t f = get_f(q, v);
    if (f < 0) return -1;
    char nb[300];
    snprintf(nb, sizeof nb, "%s_q", q->g->values[v].name);
    act_params(q, q->lo[v], q->hi[v], &q->qs[v], &q->qz[v]);
    par_out_spec os = {nb, q->o->act, q->qs[v], q->qz[v]};
    q->qval[v] = par_case_node(q->c, "quantize", 1, &f, 0, NULL, &os);
    return q->qval[v];
}

static int32_t get_f(qctx *q, int32_t v)
{
    if (q->fval[v] >= 0) return q->fval[v];
    if (q->g->values[v].kind == PAR_VALUE_CONST) return q->fval[v] = copy_const(q, q->c, v);
    if (q->qval[v] < 0) return -1;
    char nb[300];
    snprintf(nb, sizeof nb, "%s_f", q->g->values[v].name);
    par_out_spec os = {nb, 0, 0, 0};
    return q->fval[v] = par_case_node(q->c, "dequantize", 1, &q->qval[v], 0, NULL, &os);
}

/* Ops computed on integers (every op with an integer form in the op table, but the conversions the twin inserts
 * itself), and how their output params are chosen (the qform column and the output-range flags of core/ops.def). */
static int quant_op(const qctx *q, const char *op)
{
    const par_op_info *info = par_op_find(op);
    if (q->o->act == PAR_DTYPE_QS16) return weighted(op); /* 16a8w: the accumulating ops only, the rest float */
    return info && info->qform != PAR_QFORM_NONE && info->qform != PAR_QFORM_CONVERT;
}

static int keeps_params(const char *op)
{
    const par_op_info *info = par_op_find(op);
    return info && info->qform == PAR_QFORM_SELECT;
}

static unsigned op_flags(const char *op)
{
    const par_op_info *info = par_op_find(op);
    return info ? info->flags : 0;
}

/* The qs8 weight constant of a planned node: seeded generator or data, per-channel scales (axis 0 or 1) or one. */
static int32_t emit_weights(qctx *q, const wplan *p, const par_value *wv)
{
    int32_t w = q->seeded ? par_case_const(q->c, wv->name, PAR_DTYPE_QS8, wv->rank, wv->dims, p->gen)
                          : par_case_const_data(q->c, wv->name, PAR_DTYPE_QS8, wv->rank, wv->dims, p->wq);
    if (w >= 0 && p->pc) {
        par_msg m = {{0}};
        if (par_graph_set_channel_quant(q->c->graph, w, p->taps ? 1 : 0, p->ws, p->oc, &m) != PAR_OK &&
            q->c->status == PAR_OK) {
            q->c->status = PAR_ERROR;
            q->c->err = m;
        }
    } else if (w >= 0) {
        par_case_quant(q->c, w, p->ws[0], 0);
    }
    return w;
}

/* A planned linear as linear_16a4w: packed nibbles in the form the options declare, the multipliers with the channel scales, an i32
 * bias rne(b / (s_x s[o])), the block attribute; the qs16 output at s_out. */
static void emit_int4_node(qctx *q, int32_t ni, float s_out)
{
    const par_node *n = &q->g->nodes[ni];
    const wplan *p = &q->wp[ni];
    const int32_t out = n->outputs[0], x0 = n->inputs[0];
    const int64_t k = p->per, nb = k / p->blk;
    uint8_t *wb = malloc((size_t)(p->oc * k / 2) + 1);
    int32_t *qb = malloc(sizeof *qb * (size_t)p->oc);
    if (!wb || !qb) {
        free(wb), free(qb);
        q->c->status = par_msgf(&q->c->err, PAR_ERROR, "out of memory");
        return;
    }
    /* the declared form (par_int4_form): code = w (s4) or w + 8 (u4, zero point 8), weight 2j low or high */
    const int add = q->o->w4_unsigned ? 8 : 0, lo = q->o->w4_hi_first ? 4 : 0;
    for (int64_t i = 0; i < p->oc * k / 2; i++)
        wb[i] = (uint8_t)(((p->wq[2 * i] + add) & 15) << lo | ((p->wq[2 * i + 1] + add) & 15) << (4 - lo));
    const float sx = q->qs[x0];
    for (int64_t c = 0; c < p->oc; c++) {
        double t = nearbyint((double)p->bf[c] / ((double)sx * p->ws[c]));
        qb[c] = (int32_t)(t > 2147483647.0 ? 2147483647.0 : t < -2147483647.0 ? -2147483647.0 : t);
    }
    char nm[300];
    const par_value *wv = &q->g->values[n->inputs[1]];
    int32_t ins[4] = {get_q(q, x0), -1, -1, -1};
    ins[1] = par_case_const_data(q->c, wv->name, PAR_DTYPE_QU8, 2, (int64_t[]){p->oc, k / 2}, wb);
    if (ins[1] >= 0) par_case_quant(q->c, ins[1], 1.0f, 0);
    snprintf(nm, sizeof nm, "%s_block_scales", n->name);
    ins[2] = par_case_const_data(q->c, nm, PAR_DTYPE_QS8, 2, (int64_t[]){p->oc, nb}, p->m4);
    par_msg m = {{0}};
    if (ins[2] >= 0 && par_graph_set_channel_quant(q->c->graph, ins[2], 0, p->ws, p->oc, &m) != PAR_OK &&
        q->c->status == PAR_OK) {
        q->c->status = PAR_ERROR;
        q->c->err = m;
    }
    snprintf(nm, sizeof nm, "%s_bias", n->name);
    ins[3] = par_case_const_data(q->c, nm, PAR_DTYPE_I32, 1, (int64_t[]){p->oc}, qb);
    if (ins[3] >= 0) par_case_quant(q->c, ins[3], sx * p->ws[0], 0);
    free(wb), free(qb);
    par_attr at[5] = {par_a_int("block", p->blk), par_a_str("w4", add ? "u4" : "s4"), par_a_int("w4_zp", add),
                      par_a_str("nibbles", lo ? "hi" : "lo"), par_a_str("scales", q->o->w4_bf16 ? "bf16" : "f32")};
    par_out_spec os = {q->g->values[out].name, PAR_DTYPE_QS16, s_out, 0};
    q->qval[out] = par_case_node(q->c, "linear_16a4w", 4, ins, 5, at, &os);
    q->qs[out] = s_out;
    q->qz[out] = 0;
}

static void emit_quant_node(qctx *q, int32_t ni)
{
    const par_graph_desc *g = q->g;
    const par_node *n = &g->nodes[ni];
    const wplan *p = &q->wp[ni];
    int32_t out = n->outputs[0], ins[64];
    char nb[300];
    for (int32_t i = 0; i < n->n_inputs && i < 64; i++) {
        ins[i] = -1;
        if (n->inputs[i] < 0 || (p->active && i >= 1)) continue;
        ins[i] = get_q(q, n->inputs[i]);
    }
    int32_t n_in = n->n_inputs;
    float s_out;
    int32_t z_out;
    const int32_t x0 = n->inputs[0];
    double lo = q->lo[out], hi = q->hi[out];
    if (ins[0] >= 0) wider_out(q->qs[x0], act_steps(q), &lo, &hi);
    act_params(q, lo, hi, &s_out, &z_out);
    if (keeps_params(n->op)) {
        s_out = q->qs[x0];
        z_out = q->qz[x0];
    } else if (op_flags(n->op) & PAR_OPF_OUT_01) {
        s_out = 1.0f / 256;
        z_out = q->o->act == PAR_DTYPE_QS8 ? -128 : 0;
    } else if (op_flags(n->op) & PAR_OPF_OUT_PM1) {
        s_out = 1.0f / 128;
        z_out = q->o->act == PAR_DTYPE_QS8 ? 0 : 128;
    }
    if (p->active && p->blk) {
        emit_int4_node(q, ni, s_out);
        return;
    }
    if (p->active) {
        const par_value *wv = &g->values[n->inputs[1]];
        int32_t w = emit_weights(q, p, wv);
        int32_t *qb = malloc(sizeof *qb * (size_t)p->oc);
        if (!qb) {
            q->c->status = par_msgf(&q->c->err, PAR_ERROR, "out of memory");
            return;
        }
        const float sx = q->qs[x0];
        for (int64_t c = 0; c < p->oc; c++) {
            double t = nearbyint((double)p->bf[c] / ((double)sx * p->ws[p->pc ? c : 0]));
            qb[c] = (int32_t)(t > 2147483647.0 ? 2147483647.0 : t < -2147483647.0 ? -2147483647.0 : t);
        }
        snprintf(nb, sizeof nb, "%s_bias", n->name);
        int32_t b = par_case_const_data(q->c, nb, PAR_DTYPE_I32, 1, (int64_t[]){p->oc}, qb);
        free(qb);
        if (b >= 0) par_case_quant(q->c, b, sx * p->ws[0], 0);
        ins[1] = w;
        ins[2] = b;
        n_in = 3;
    }
    par_out_spec os = {g->values[out].name, q->o->act, s_out, z_out};
    q->qval[out] = par_case_node(q->c, n->op, n_in, ins, n->n_attrs, n->attrs, &os);
    q->qs[out] = s_out;
    q->qz[out] = z_out;
}

/* --dynamic: a linear with constant f32 weights becomes linear_dynamic (f32 in and out, qs8 weights, the f32 bias
 * kept), as torch.ao.quantization.quantize_dynamic does; reduce_range 0 (qnnpack's full range). */
static void emit_dynamic_node(qctx *q, int32_t ni)
{
    const par_node *n = &q->g->nodes[ni];
    int32_t ins[3] = {get_f(q, n->inputs[0]), emit_weights(q, &q->wp[ni], &q->g->values[n->inputs[1]]), -1};
    int32_t n_in = 2;
    if (input_of(n, 2) >= 0) ins[n_in++] = get_f(q, n->inputs[2]);
    char nb[300];
    snprintf(nb, sizeof nb, "%s", n->name);
    par_attr at[1] = {par_a_int("reduce_range", 0)};
    par_out_spec os = {q->g->values[n->outputs[0]].name, 0, 0, 0};
    q->fval[n->outputs[0]] = par_case_node(q->c, "linear_dynamic", n_in, ins, 1, at, &os);
}

static void emit(qctx *q)
{
    const par_graph_desc *g = q->g;
    for (int32_t i = 0; i < g->n_inputs; i++) q->fval[g->inputs[i]] = copy_input(q, q->c, g->inputs[i]);
    for (int32_t ni = 0; ni < g->n_nodes && q->c->status == PAR_OK; ni++) {
        const par_node *n = &g->nodes[ni];
        if (q->o->dynamic && q->wp[ni].active) {
            emit_dynamic_node(q, ni);
            continue;
        }
        if (q->folded[ni]) {
            int32_t x = n->inputs[0], y = n->outputs[0];
            q->qval[y] = q->qval[x];
            q->fval[y] = q->fval[x];
            q->qs[y] = q->qs[x];
            q->qz[y] = q->qz[x];
            continue;
        }
        int all_float = 1;
        for (int32_t i = 0; i < n->n_inputs; i++)
            if (n->inputs[i] >= 0 && g->values[n->inputs[i]].dtype != PAR_DTYPE_F32) all_float = 0;
        int quant = !q->o->dynamic && quant_op(q, n->op) && all_float && n->n_outputs == 1 &&
                    g->values[n->outputs[0]].dtype == PAR_DTYPE_F32 &&
                    (!weighted(n->op) || q->wp[ni].active);
        if (quant) {
            emit_quant_node(q, ni);
            continue;
        }
        int32_t ins[64];
        for (int32_t i = 0; i < n->n_inputs && i < 64; i++) ins[i] = n->inputs[i] >= 0 ? get_f(q, n->inputs[i]) : -1;
        par_out_spec os = {g->values[n->outputs[0]].name, 0, 0, 0};
        q->fval[n->outputs[0]] = par_case_node(q->c, n->op, n->n_inputs, ins, n->n_attrs, n->attrs, &os);
    }
    for (int32_t k = 0; k < g->n_outputs && q->c->status == PAR_OK; k++) par_case_output(q->c, get_f(q, g->outputs[k]));
}

par_case *par_case_quantize(const par_case *src, const par_quant_opts *o, par_msg *msg)
{
    if (!src || !src->graph) {
        par_msgf(msg, PAR_ERROR, "no case");
        return NULL;
    }
    if (!o->dynamic && o->act != PAR_DTYPE_QU8 && o->act != PAR_DTYPE_QS8 && o->act != PAR_DTYPE_QS16) {
        par_msgf(msg, PAR_ERROR, "--dtype: %s, expected qu8, qs8 or qs16", par_dtype_name(o->act));
        return NULL;
    }
    if (o->int4_block && (o->dynamic || o->act != PAR_DTYPE_QS16 || o->seeded == 1 ||
                          (!o->per_channel && (o->int4_block < 2 || o->int4_block % 2)))) {
        par_msgf(msg, PAR_ERROR, "--int4: %s", o->act != PAR_DTYPE_QS16 || o->dynamic ? "only with --dtype qs16 (16a4w)"
                                               : o->seeded == 1 ? "int4 weights are written inline, not seeded"
                                                                : "--block must be even and at least 2");
        return NULL;
    }
    if (!o->int4_block && (o->w4_unsigned || o->w4_hi_first || o->w4_bf16)) {
        par_msgf(msg, PAR_ERROR, "%s: only with --int4 (the forms of 4-bit weights)",
                 o->w4_unsigned ? "--w4 u4" : o->w4_hi_first ? "--nibbles hi" : "--scale-dtype bf16");
        return NULL;
    }
    const par_graph_desc *g = par_graph_desc_of(src->graph);
    for (int32_t v = 0; v < g->n_values; v++)
        if (g->values[v].kind == PAR_VALUE_INPUT && par_dtype_is_quant(g->values[v].dtype)) {
            par_msgf(msg, PAR_ERROR, "input '%s' is %s: only float cases have a quantized twin",
                     g->values[v].name, par_dtype_name(g->values[v].dtype));
            return NULL;
        }
    qctx q = {.src = src, .g = g, .o = o, .msg = msg};
    size_t nv = (size_t)g->n_values + 1, nn = (size_t)g->n_nodes + 1;
    q.uses = calloc(nv, sizeof *q.uses);
    q.alias = calloc(nv, sizeof *q.alias);
    q.folded = calloc(nn, sizeof *q.folded);
    q.wp = calloc(nn, sizeof *q.wp);
    q.lo = calloc(nv, sizeof *q.lo);
    q.hi = calloc(nv, sizeof *q.hi);
    q.fval = malloc(nv * sizeof *q.fval);
    q.qval = malloc(nv * sizeof *q.qval);
    q.qs = calloc(nv, sizeof *q.qs);
    q.qz = calloc(nv, sizeof *q.qz);
    par_case *out = NULL;
    par_status st = (q.uses && q.alias && q.folded && q.wp && q.lo && q.hi && q.fval && q.qval && q.qs && q.qz)
                        ? PAR_OK
                        : par_msgf(msg, PAR_ERROR, "out of memory");
    if (st == PAR_OK) st = plan(&q);
    if (st == PAR_OK && !o->dynamic) st = calibrate(&q); /* dynamic: activations stay float, nothing to calibrate */
    if (st == PAR_OK) {
        for (size_t v = 0; v < nv; v++) q.fval[v] = q.qval[v] = -1;
        char id[256];
        snprintf(id, sizeof id, "%s_%s", src->id ? src->id : "case", o->dynamic ? "dynamic" : par_dtype_name(o->act));
        q.c = par_case_create(o->id ? o->id : id, src->seed);
        if (!q.c) st = par_msgf(msg, PAR_ERROR, "out of memory");
    }
    if (st == PAR_OK) {
        char d[512];
        if (o->dynamic)
            snprintf(d, sizeof d, "Dynamically quantized twin (linear_dynamic with %s qs8 weights%s, everything else "
                     "float) of %s (parity quantize --dynamic)", o->per_channel ? "per-channel" : "per-tensor",
                     q.seeded ? ", seeded" : "", src->id ? src->id : "a float case");
        else
            snprintf(d, sizeof d, "Quantized twin (%s activations, %s qs8 weights%s%s) of %s, calibrated on the "
                     "reference's value ranges (parity quantize)", par_dtype_name(o->act),
                     o->per_channel ? "per-channel" : "per-tensor", q.seeded ? ", seeded" : "",
                     o->int4_block ? "; linear as linear_16a4w: int4 weights, integer block multipliers" : "",
                     src->id ? src->id : "a float case");
        q.c->description = strdup(d);
        q.c->repeat = src->repeat;
        q.c->timeout_s = src->timeout_s;
        emit(&q);
        st = par_case_finish(q.c);
        if (st != PAR_OK) par_msgf(msg, st, "quantized graph: %s", q.c->err.text);
        else out = q.c;
        if (!out) par_case_destroy(q.c);
    }
    for (int32_t ni = 0; q.wp && ni < g->n_nodes; ni++) {
        free(q.wp[ni].wf);
        free(q.wp[ni].bf);
        free(q.wp[ni].wq);
        free(q.wp[ni].ws);
        free(q.wp[ni].wd);
        free(q.wp[ni].m4);
    }
    free(q.uses);
    free(q.alias);
    free(q.folded);
    free(q.wp);
    free(q.lo);
    free(q.hi);
    free(q.fval);
    free(q.qval);
    free(q.qs);
    free(q.qz);
    return out;
}
