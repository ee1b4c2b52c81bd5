/*
 * quant_ops.c - the exact integer result of every quantized op under a requantization scheme (docs/quantization.md,
 * "Per-op integer semantics"), for the interpreter's quantized path.
 *
 * The integer arithmetic of each op is computed by running the op's own float64 kernel on integers: the inputs
 * enter as f64 tensors holding q - zero_point (or m * (q - zero_point) for add), every budget zero. Sums of products
 * of integers below 2^53 are exact in float64 whatever the summation order, so the kernel's output is the exact
 * integer accumulator, and the index logic (padding, groups, broadcasting, windows) is the kernel's, never a second
 * copy that could drift from it. The accumulator then goes through requant.c. Ops whose integer formula is not
 * pinned across backends (bilinear resize, softmax) round the ideal real value to nearest even, with a wide tie
 * window. This file must not allocate beyond the call and must not read anything but the node's values.
 */
#include <math.h>
#include <stdlib.h>

#include "reference.h"
#include "core/requant.h"
#include "core/shape.h"

/* Window around a tie of the ideal value, in output steps, inside which a correct backend may round either way:
 * the relative accuracy of a multiplier carrying at least 17 significant bits (fp32 scales carry 24, Q31 31, the add
 * multipliers 21), plus an absolute part for lookup tables built in float. */
#define WIN_REL 0x1p-16
#define WIN_ABS 0x1p-16
/* qs16 outputs (|x| up to 2^15 steps) only come from the accumulating ops, whose ratio is a float (24 significant
 * bits) or a Q31 multiplier: (float)acc, the ratio and the product each within 2^-24 relative, so 2^-22 of |x|. */
#define WIN_REL16 0x1p-22
/* bilinear: XNNPACK-style 11-bit interpolation weights are off by up to 2^-12 each; four taps of up to 255 steps
 * from the zero point move the result by up to 0.25 step. */
#define WIN_BILINEAR 0.25
/* softmax: implementations differ in the exp table and the division; any value may round either way. */
#define WIN_SOFTMAX 0.5

/* The scheme whose ties are recorded: the declared one. */
static int declared(const par_ref_ctx *c)
{
    return (unsigned)c->prec.requant < PAR_REQUANT_N_SCHEMES ? (int)c->prec.requant : 0;
}

static int is_q(par_dtype t) { return par_dtype_is_quant(t); }

static void qrange(par_dtype t, int32_t *lo, int32_t *hi) { par_dtype_qrange(t, lo, hi); }

static const par_value *val_in(const par_ref_ctx *c, int32_t i)
{
    return (i < c->n->n_inputs && c->n->inputs[i] >= 0) ? &c->g->values[c->n->inputs[i]] : NULL;
}

/* An f64 tensor holding mult * (q - zp) of a reference tensor (zp and mult per tensor). */
static par_status int_tensor(const par_rt *q, double zp, double mult, par_rt *t, par_msg *msg)
{
    if (par_rt_alloc(t, PAR_DTYPE_F64, q->rank, q->dims, msg) != PAR_OK) return PAR_ERROR;
    for (int64_t i = 0; i < q->numel; i++) {
        t->v[i] = mult * (q->v[i] - zp);
        t->s[i] = 0;
    }
    return PAR_OK;
}

/* Run the node's own kernel on integer tensors, with no rounding budgeted (its budgets are discarded). */
static par_status run_kernel(const par_ref_ctx *c, const par_rt *const *tin, const par_rt *shape, par_rt *acc,
                             par_msg *msg)
{
    const par_op_info *info = par_op_of(c->n);
    par_ref_ctx k = *c;
    k.prec.u = k.prec.u_store = k.prec.fn_ulps = 0;
    if (par_rt_alloc(acc, PAR_DTYPE_F64, shape->rank, shape->dims, msg) != PAR_OK) return PAR_ERROR;
    par_rt *outs[4] = {acc, NULL, NULL, NULL};
    par_status st = par_ref_kernel(info->id)(&k, tin, outs, msg);
    if (st != PAR_OK) par_rt_free(acc);
    return st;
}

/* The node's own float kernel at n real points x (a rank-1 f64 tensor, no rounding budgeted): y[i] = f(x[i]). How
 * the LUT family gets its function and the CLAMP family its bounds (f(-inf), f(+inf)), so that neither keeps a
 * second copy of an op's formula. x and y may be the same array. */
static par_status eval_float(const par_ref_ctx *c, const double *x, int64_t n, double *y, par_msg *msg)
{
    par_rt tx, ty;
    par_rt shape = {.rank = 1, .dims = {n}};
    if (par_rt_alloc(&tx, PAR_DTYPE_F64, 1, &n, msg) != PAR_OK) return PAR_ERROR;
    for (int64_t i = 0; i < n; i++) {
        tx.v[i] = x[i];
        tx.s[i] = 0;
    }
    const par_rt *tin[1] = {&tx};
    par_status st = run_kernel(c, tin, &shape, &ty, msg);
    if (st == PAR_OK) {
        for (int64_t i = 0; i < n; i++) y[i] = ty.v[i];
        par_rt_free(&ty);
    }
    par_rt_free(&tx);
    return st;
}

/* Requantize q - zin of every element of a single-input op's input to the output's params (identity when the
 * params agree), into an f64 tensor holding q' - zout. */
static par_status to_out_params(const par_rt *q, const par_value *iv, const par_value *ov, par_requant s, par_rt *t,
                                par_msg *msg)
{
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    if (iv->quant_axis >= 0) return par_msgf(msg, PAR_UNSUPPORTED, "per-channel scales on a data-movement input");
    if (iv->scale == ov->scale && iv->zero_point == ov->zero_point && iv->dtype == ov->dtype)
        return int_tensor(q, ov->zero_point, 1.0, t, msg);
    par_requant_params p;
    if (par_requant_params_for(&p, s, iv->scale, 1.0f, ov->scale, ov->zero_point, lo, hi, msg) != PAR_OK)
        return PAR_ERROR;
    if (par_rt_alloc(t, PAR_DTYPE_F64, q->rank, q->dims, msg) != PAR_OK) return PAR_ERROR;
    for (int64_t i = 0; i < q->numel; i++) {
        t->v[i] = (double)par_requant_apply((int64_t)q->v[i] - iv->zero_point, &p) - ov->zero_point;
        t->s[i] = 0;
    }
    return PAR_OK;
}


static int acc_fits(double a) { return a >= -2147483648.0 && a <= 2147483647.0; }

/* conv2d, conv_transpose2d and linear: acc = sum (qx - zx)(qw - zw) + qb, requantized per output channel with the
 * ratio s_x * s_w[c] / s_out. Output channel: axis 1 (NCHW) for the convolutions, the last axis for linear. */
static par_status conv_linear(const par_ref_ctx *c, const par_rt *const *in, const par_value *ov, double *const *q,
                              double *tie, double *slack, par_msg *msg)
{
    /* linear_16a4w: input 1 holds packed nibbles (scale 1, zero point 0), input 2 the block multipliers with the
     * channel scales, input 3 the bias; its kernel forms sum_b m sum_k q_x w + q_b from their integers. */
    const int a4w = par_op_of(c->n)->id == PAR_OP_LINEAR_16A4W, ib = par_qacc_bias_input(c->n);
    const par_value *xv = val_in(c, 0), *wv = val_in(c, par_qacc_scale_input(c->n)), *bv = val_in(c, ib);
    if (!xv || !wv || !is_q(xv->dtype) || !is_q(wv->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s needs qu8/qs8 input and weights", c->n->op);
    if (bv && bv->dtype != PAR_DTYPE_I32)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s: bias dtype %s, expected i32", c->n->op,
                        par_dtype_name(bv->dtype));
    /* Per-channel weight scales are indexed by output channel: axis 0 of conv2d's [O, C/g, kh, kw] and linear's
     * [out, in]; axis 1 of conv_transpose2d's [C, O/g, kh, kw] (PyTorch's layout and ch_axis for transposed
     * convolutions), which is the output channel only with one group. */
    const int transposed = par_op_of(c->n)->id == PAR_OP_CONV_TRANSPOSE2D;
    if (wv->quant_axis >= 0 && (wv->quant_axis != (transposed ? 1 : 0) ||
                                (transposed && par_attr_int(c->n, "groups", 1) != 1)))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s: per-channel weights on axis %d (only %d%s)", c->n->op,
                        (int)wv->quant_axis, transposed ? 1 : 0, transposed ? ", with groups = 1" : "");
    par_rt tx, tw, tm, tb, acc;
    memset(&tm, 0, sizeof tm);
    memset(&tb, 0, sizeof tb);
    par_status st = int_tensor(in[0], xv->zero_point, 1.0, &tx, msg);
    if (st != PAR_OK) return st;
    if ((st = int_tensor(in[1], wv->quant_axis >= 0 || a4w ? 0 : wv->zero_point, 1.0, &tw, msg)) != PAR_OK) {
        par_rt_free(&tx);
        return st;
    }
    if (a4w && (st = int_tensor(in[2], 0, 1.0, &tm, msg)) != PAR_OK) goto out2;
    if (bv && (st = int_tensor(in[ib], 0, 1.0, &tb, msg)) != PAR_OK) goto out2;
    const par_rt *tin[4] = {&tx, &tw, bv ? &tb : NULL, NULL};
    if (a4w) tin[2] = &tm, tin[3] = bv ? &tb : NULL;
    par_rt shape = {.rank = ov->rank};
    memcpy(shape.dims, ov->dims, sizeof shape.dims);
    if ((st = run_kernel(c, tin, &shape, &acc, msg)) != PAR_OK) goto out3;
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    const int conv = par_op_of(c->n)->qform == PAR_QFORM_ACC_AXIS1;
    const int64_t oc = conv ? ov->dims[1] : ov->dims[ov->rank - 1];
    const int64_t inner = conv ? ov->dims[2] * ov->dims[3] : 1;
    par_requant_params *pc = malloc(sizeof *pc * (size_t)oc);
    if (!pc) {
        st = par_msgf(msg, PAR_ERROR, "out of memory");
        goto out4;
    }
    for (int64_t i = 0; i < acc.numel && st == PAR_OK; i++)
        if (!acc_fits(acc.v[i]))
            st = par_msgf(msg, PAR_ERROR, "quantized %s: accumulator %.17g at element %lld overflows int32",
                          c->n->op, acc.v[i], (long long)i);
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES && st == PAR_OK; s++) {
        if (!q[s]) continue;
        for (int64_t k = 0; k < oc && st == PAR_OK; k++) {
            float ws = wv->quant_axis >= 0 && wv->channel_scales ? wv->channel_scales[k] : wv->scale;
            st = par_requant_params_for(&pc[k], (par_requant)s, xv->scale, ws, ov->scale, ov->zero_point, lo, hi,
                                        msg);
        }
        for (int64_t i = 0; i < acc.numel && st == PAR_OK; i++)
            q[s][i] = par_requant_apply((int64_t)acc.v[i], &pc[(i / inner) % oc]);
        for (int64_t i = 0; tie && s == declared(c) && i < acc.numel && st == PAR_OK; i++)
            if (!par_requant_tie((int64_t)acc.v[i], &pc[(i / inner) % oc], &tie[i])) tie[i] = NAN;
        for (int64_t i = 0; slack && s == declared(c) && i < acc.numel; i++)
            slack[i] = par_requant_slack(&pc[(i / inner) % oc]);
    }
    free(pc);
out4:
    par_rt_free(&acc);
out3:
out2:
    par_rt_free(&tb);
    par_rt_free(&tm);
    par_rt_free(&tw);
    par_rt_free(&tx);
    return st;
}

/* add: the formula of requant.h (m_a (qa - za) + m_b (qb - zb), rounded by 2^shift); mul: (qa - za)(qb - zb)
 * requantized with s_a s_b / s_out; matmul (PAR_QFORM_MUL too): the kernel's exact sum over k of
 * (qa[.., i, k] - za)(qb[.., k, j] - zb), the same ratio. Broadcasting is the kernel's. */
static par_status add_mul(const par_ref_ctx *c, const par_rt *const *in, const par_value *ov, double *const *q,
                          double *win, double *tie, double *slack, par_msg *msg)
{
    const par_value *av = val_in(c, 0), *bv = val_in(c, 1);
    if (!av || !bv || !is_q(av->dtype) || !is_q(bv->dtype) || av->quant_axis >= 0 || bv->quant_axis >= 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s needs two per-tensor qu8/qs8 inputs", c->n->op);
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    const int add = par_op_of(c->n)->qform == PAR_QFORM_ADD;
    /* the add multipliers and shift are the same under every scheme but pytorch_qnnp (one bit more); only the
     * final rounding differs otherwise. The accumulator is computed once per distinct set of multipliers. */
    par_requant_add_params pa[PAR_REQUANT_N_SCHEMES];
    par_requant_params pm[PAR_REQUANT_N_SCHEMES];
    par_status st = PAR_OK;
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES && st == PAR_OK; s++)
        st = add ? par_requant_add_params_init(&pa[s], (par_requant)s, av->scale, av->zero_point, bv->scale,
                                               bv->zero_point, ov->scale, ov->zero_point, lo, hi, msg)
                 : par_requant_params_for(&pm[s], (par_requant)s, av->scale, bv->scale, ov->scale, ov->zero_point, lo,
                                          hi, msg);
    if (st != PAR_OK) return st;
    /* the product's ratio under the declared scheme (the add formula rounds once) */
    for (int64_t i = 0; slack && !add && i < ov->numel; i++) slack[i] = par_requant_slack(&pm[declared(c)]);
    par_rt shape = {.rank = ov->rank};
    memcpy(shape.dims, ov->dims, sizeof shape.dims);
    /* the add multipliers are rounded to integers: up to 1/2 unit of 2^-shift each, times |q - z| <= 255 (the
     * coarser of the sets, 2^-20 for the larger multiplier) */
    if (win && add)
        for (int64_t i = 0; i < ov->numel; i++) win[i] += 255.0 * ldexp(1.0, -pa[0].shift);
    int done[PAR_REQUANT_N_SCHEMES] = {0};
    for (int s0 = 0; s0 < PAR_REQUANT_N_SCHEMES && st == PAR_OK; s0++) {
        if (done[s0]) continue;
        par_rt ta, tb, acc;
        if ((st = int_tensor(in[0], av->zero_point, add ? pa[s0].a_multiplier : 1.0, &ta, msg)) != PAR_OK) break;
        if ((st = int_tensor(in[1], bv->zero_point, add ? pa[s0].b_multiplier : 1.0, &tb, msg)) != PAR_OK) {
            par_rt_free(&ta);
            break;
        }
        const par_rt *tin[2] = {&ta, &tb};
        if ((st = run_kernel(c, tin, &shape, &acc, msg)) == PAR_OK) {
            /* the schemes sharing these multipliers */
            int same[PAR_REQUANT_N_SCHEMES] = {0};
            for (int s = s0; s < PAR_REQUANT_N_SCHEMES; s++)
                same[s] = !done[s] && (!add || (pa[s].shift == pa[s0].shift && pa[s].a_multiplier == pa[s0].a_multiplier &&
                                                pa[s].b_multiplier == pa[s0].b_multiplier));
            for (int64_t i = 0; i < acc.numel && st == PAR_OK; i++) {
                if (!acc_fits(acc.v[i])) {
                    st = par_msgf(msg, PAR_ERROR, "quantized %s: accumulator overflows int32 at element %lld",
                                  c->n->op, (long long)i);
                    break;
                }
                for (int s = s0; s < PAR_REQUANT_N_SCHEMES; s++)
                    if (same[s] && q[s])
                        q[s][i] = add ? par_requant_add_acc((int64_t)acc.v[i], &pa[s])
                                      : par_requant_apply((int64_t)acc.v[i], &pm[s]);
                const int d = declared(c);
                if (tie && same[d] &&
                    !(add ? par_requant_add_tie((int64_t)acc.v[i], &pa[d], &tie[i])
                          : par_requant_tie((int64_t)acc.v[i], &pm[d], &tie[i])))
                    tie[i] = NAN;
            }
            for (int s = s0; s < PAR_REQUANT_N_SCHEMES; s++) done[s] |= same[s];
            par_rt_free(&acc);
        }
        par_rt_free(&ta);
        par_rt_free(&tb);
    }
    return st;
}

/* Data movement and selection (PAR_QFORM_MOVE, SELECT: relu, max pool, nearest upsampling, concat, reshape, flatten,
 * permute, slice) and the clamps (PAR_QFORM_CLAMP: relu6, hardtanh, clamp): every input is requantized to the
 * output's params (identity when they agree), then the kernel moves / selects the integers q' - zout; the clamps
 * clamp q' to the quantized bounds zout + round_half_away(bound / s_out), the bounds being what the op's own float
 * kernel returns at -inf and +inf. Requantization is monotone, so selecting after it is selecting before. */
static par_status movement1(const par_ref_ctx *c, const par_rt *const *in, par_requant s, const par_value *ov,
                            double *q, par_msg *msg)
{
    int32_t n_in = c->n->n_inputs;
    if (n_in > 64) return par_msgf(msg, PAR_ERROR, "too many inputs");
    par_rt t[64];
    const par_rt *tin[64] = {NULL};
    par_status st = PAR_OK;
    int32_t made = 0;
    for (; made < n_in && st == PAR_OK; made++) {
        const par_value *iv = val_in(c, made);
        memset(&t[made], 0, sizeof t[made]);
        if (!iv) continue;
        if (!is_q(iv->dtype)) {
            st = par_msgf(msg, PAR_UNSUPPORTED, "quantized %s: input %d is %s", c->n->op, (int)made,
                          par_dtype_name(iv->dtype));
            break;
        }
        st = to_out_params(in[made], iv, ov, s, &t[made], msg);
        tin[made] = &t[made];
    }
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    double bounds[2] = {-INFINITY, INFINITY};
    if (st == PAR_OK && par_op_of(c->n)->qform == PAR_QFORM_CLAMP &&
        (st = eval_float(c, bounds, 2, bounds, msg)) == PAR_OK) {
        par_requant_clamp_range(ov->dtype, ov->scale, ov->zero_point, bounds[0], bounds[1], &lo, &hi);
        for (int64_t i = 0; i < t[0].numel; i++) {
            double v = t[0].v[i] + ov->zero_point;
            q[i] = v < lo ? lo : v > hi ? hi : v;
        }
    } else if (st == PAR_OK) {
        par_rt acc;
        par_rt shape = {.rank = ov->rank};
        memcpy(shape.dims, ov->dims, sizeof shape.dims);
        if ((st = run_kernel(c, tin, &shape, &acc, msg)) == PAR_OK) {
            for (int64_t i = 0; i < acc.numel; i++) {
                double v = acc.v[i] + ov->zero_point;
                q[i] = v < lo ? lo : v > hi ? hi : v;
            }
            par_rt_free(&acc);
        }
    }
    for (int32_t i = 0; i < made; i++) par_rt_free(&t[i]);
    return st;
}

/* PAR_QFORM_LUT (sigmoid, tanh, hardswish): the 256-entry table of requant.h (the fp32-scheme quantization of f at
 * every input integer, f being the op's own float kernel), the same under every scheme. */
static par_status lut(const par_ref_ctx *c, const par_rt *const *in, const par_value *ov, double *const *q,
                      par_msg *msg)
{
    const par_value *xv = val_in(c, 0);
    if (!xv || !is_q(xv->dtype) || xv->quant_axis >= 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s needs a per-tensor qu8/qs8 input", c->n->op);
    int32_t lo, hi, ilo, ihi;
    qrange(ov->dtype, &lo, &hi);
    qrange(xv->dtype, &ilo, &ihi);
    double fx[256];
    for (int32_t i = 0; i < 256; i++) fx[i] = (double)xv->scale * (double)(ilo + i - xv->zero_point);
    par_status st = eval_float(c, fx, 256, fx, msg);
    if (st != PAR_OK) return st;
    uint8_t table[256];
    par_requant_lut_values(fx, ov->scale, ov->zero_point, lo, hi, table);
    for (int64_t i = 0; i < in[0]->numel; i++) {
        int32_t idx = (int32_t)in[0]->v[i] - ilo;
        if (idx < 0 || idx > 255) return par_msgf(msg, PAR_ERROR, "quantized %s: input %g out of range", c->n->op,
                                                  in[0]->v[i]);
        double v = ov->dtype == PAR_DTYPE_QS8 ? (double)(int8_t)table[idx] : (double)table[idx];
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++)
            if (q[s]) q[s][i] = v;
    }
    return PAR_OK;
}

/* The divisor of output element i of an AVG op, by the op's own geometry (the arithmetic of its kernel in pool.c):
 * mean: the count of reduced elements (numel in / numel out); adaptive_avg_pool2d: its window
 * [floor(o H / OH), ceil((o + 1) H / OH)) by rows and likewise columns, so windows of one output differ in size;
 * avg_pool2d: the window's real elements, or its area inside the padded extent with count_include_pad; the global
 * pool: H W. The op is told by its schema's attributes (mean has axes, the adaptive pool output_size, avg_pool2d
 * kernel). */
typedef struct avg_geom {
    int kind; /* 0 global, 1 windowed, 2 adaptive, 3 mean */
    int64_t H, W, OH, OW, kh, kw, sh, sw, pt, pl, pb, pr, ratio;
    int incl;
} avg_geom;

static int64_t avg_divisor(const avg_geom *g, int64_t i)
{
    if (g->kind == 3) return g->ratio;
    if (g->kind == 0) return g->H * g->W;
    int64_t ow = i % g->OW, oh = (i / g->OW) % g->OH;
    if (g->kind == 2)
        return (par_ceil_div((oh + 1) * g->H, g->OH) - par_floor_div(oh * g->H, g->OH)) *
               (par_ceil_div((ow + 1) * g->W, g->OW) - par_floor_div(ow * g->W, g->OW));
    /* the same window arithmetic as the kernel (pool.c): clipped to the padded extent (area), then to the image */
    int64_t h0 = oh * g->sh - g->pt, w0 = ow * g->sw - g->pl;
    int64_t h1 = h0 + g->kh < g->H + g->pb ? h0 + g->kh : g->H + g->pb;
    int64_t w1 = w0 + g->kw < g->W + g->pr ? w0 + g->kw : g->W + g->pr;
    int64_t area = (h1 - h0) * (w1 - w0);
    h0 = h0 < 0 ? 0 : h0;
    w0 = w0 < 0 ? 0 : w0;
    h1 = h1 > g->H ? g->H : h1;
    w1 = w1 > g->W ? g->W : w1;
    return g->incl ? area : (h1 - h0) * (w1 - w0);
}

/* avg_pool2d, adaptive_avg_pool2d, global_avg_pool2d, mean: acc = sum over the window's (or the reduced axes') real
 * elements of (q - zin), requantized with s_in / (s_out d), d the op's divisor (avg_divisor). The kernel's average
 * times d recovers acc exactly (it is an integer below 2^31 and the average carries 53 bits). */
static par_status avg(const par_ref_ctx *c, const par_rt *const *in, const par_value *ov, double *const *q,
                      double *tie, double *slack, par_msg *msg)
{
    const par_value *xv = val_in(c, 0);
    avg_geom g;
    memset(&g, 0, sizeof g);
    g.kind = par_node_attr(c->n, "axes") ? 3 : par_node_attr(c->n, "output_size") ? 2
             : par_node_attr(c->n, "kernel") ? 1 : 0;
    if (!xv || !is_q(xv->dtype) || xv->quant_axis >= 0 || (g.kind != 3 && in[0]->rank != 4))
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s needs a per-tensor %squ8/qs8 input", c->n->op,
                        g.kind == 3 ? "" : "NCHW ");
    par_rt tx, acc;
    par_status st = int_tensor(in[0], xv->zero_point, 1.0, &tx, msg);
    if (st != PAR_OK) return st;
    const par_rt *tin[1] = {&tx};
    par_rt shape = {.rank = ov->rank};
    memcpy(shape.dims, ov->dims, sizeof shape.dims);
    if ((st = run_kernel(c, tin, &shape, &acc, msg)) != PAR_OK) {
        par_rt_free(&tx);
        return st;
    }
    if (g.kind == 3) {
        g.ratio = acc.numel > 0 ? in[0]->numel / acc.numel : 1;
    } else {
        g.H = in[0]->dims[2], g.W = in[0]->dims[3], g.OH = ov->dims[2], g.OW = ov->dims[3];
    }
    if (g.kind == 1) {
        g.kh = par_attr_ints_at(c->n, "kernel", 0, 1);
        g.kw = par_attr_ints_at(c->n, "kernel", 1, 1);
        g.sh = par_attr_ints_at(c->n, "stride", 0, g.kh);
        g.sw = par_attr_ints_at(c->n, "stride", 1, g.kw);
        g.pt = par_attr_ints_at(c->n, "padding", 0, 0);
        g.pl = par_attr_ints_at(c->n, "padding", 1, 0);
        g.pb = par_attr_ints_at(c->n, "padding", 2, 0);
        g.pr = par_attr_ints_at(c->n, "padding", 3, 0);
        g.incl = par_attr_int(c->n, "count_include_pad", 1) != 0;
    }
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    for (int64_t i = 0; i < acc.numel && st == PAR_OK; i++) {
        int64_t d = avg_divisor(&g, i);
        if (d < 1) {
            st = par_msgf(msg, PAR_ERROR, "quantized %s: empty window", c->n->op);
            break;
        }
        double a = nearbyint(acc.v[i] * (double)d);
        par_requant_params p;
        if (!acc_fits(a)) st = par_msgf(msg, PAR_ERROR, "quantized %s: accumulator overflows int32", c->n->op);
        for (int s = 0; s < PAR_REQUANT_N_SCHEMES && st == PAR_OK; s++)
            if ((q[s] || ((tie || slack) && s == declared(c))) &&
                (st = par_requant_params_init(&p, (par_requant)s, (double)xv->scale / ((double)ov->scale * (double)d),
                                              ov->zero_point, lo, hi, msg)) == PAR_OK) {
                if (q[s]) q[s][i] = par_requant_apply((int64_t)a, &p);
                if (tie && s == declared(c) && !par_requant_tie((int64_t)a, &p, &tie[i])) tie[i] = NAN;
                if (slack && s == declared(c)) slack[i] = par_requant_slack(&p);
            }
    }
    par_rt_free(&acc);
    par_rt_free(&tx);
    return st;
}

/* movement per scheme: the requantization to the output's params (when they differ) is the scheme's; the slack is
 * the largest of the declared scheme's over the inputs whose params differ */
static par_status movement(const par_ref_ctx *c, const par_rt *const *in, const par_value *ov, double *const *q,
                           double *slack, par_msg *msg)
{
    par_status st = PAR_OK;
    double sl = 0;
    int32_t lo, hi;
    qrange(ov->dtype, &lo, &hi);
    for (int32_t k = 0; slack && k < c->n->n_inputs; k++) {
        const par_value *iv = val_in(c, k);
        par_requant_params p;
        par_msg m;
        if (iv && is_q(iv->dtype) && iv->quant_axis < 0 && (iv->scale != ov->scale || iv->zero_point != ov->zero_point) &&
            par_requant_params_for(&p, (par_requant)declared(c), iv->scale, 1.0f, ov->scale, ov->zero_point, lo, hi,
                                   &m) == PAR_OK)
            sl = fmax(sl, par_requant_slack(&p));
    }
    for (int64_t i = 0; slack && i < ov->numel; i++) slack[i] = sl;
    for (int s = 0; s < PAR_REQUANT_N_SCHEMES && st == PAR_OK; s++)
        if (q[s]) st = movement1(c, in, (par_requant)s, ov, q[s], msg);
    return st;
}

par_status par_qref_node(const par_ref_ctx *c, const par_rt *const *in, const par_rt *ideal, double *const *q,
                         double *win, double *tie, double *slack, par_msg *msg)
{
    const par_value *ov = &c->g->values[c->n->outputs[0]];
    if (!is_q(ov->dtype) || ov->quant_axis >= 0 || !(ov->scale > 0))
        return par_msgf(msg, PAR_UNSUPPORTED, "output 0 is not a per-tensor qu8/qs8/qs16 tensor");
    const par_qform form = par_op_of(c->n)->qform;
    /* qs16 (16a8w) has the integer forms of the accumulating ops (conv2d, linear: an int32 accumulator of int16 x
     * int8 products) and of data movement; the add formula (multipliers sized for 8-bit inputs), products and
     * 256-entry tables are not defined for it. */
    int s16 = ov->dtype == PAR_DTYPE_QS16;
    for (int32_t k = 0; k < c->n->n_inputs; k++) s16 |= val_in(c, k) && val_in(c, k)->dtype == PAR_DTYPE_QS16;
    if (s16 && form != PAR_QFORM_ACC_AXIS1 && form != PAR_QFORM_ACC_LAST && form != PAR_QFORM_MOVE &&
        form != PAR_QFORM_SELECT && form != PAR_QFORM_CLAMP)
        return par_msgf(msg, PAR_UNSUPPORTED, "quantized %s has no qs16 form (docs/quantization.md, \"16a8w\")",
                        c->n->op);
    double wfix = form == PAR_QFORM_ROUND_INTERP ? WIN_BILINEAR : form == PAR_QFORM_ROUND_FREE ? WIN_SOFTMAX : 0;
    const double wrel = ov->dtype == PAR_DTYPE_QS16 ? WIN_REL16 : WIN_REL;
    if (win)
        for (int64_t i = 0; i < ideal->numel; i++) {
            double x = ideal->v[i] / ov->scale;
            win[i] = wfix + wrel * fabs(x) + WIN_ABS;
        }
    /* ties are recorded only where an op's integer formula pins them (below); none elsewhere; likewise a slack */
    for (int64_t i = 0; tie && i < ideal->numel; i++) tie[i] = NAN;
    for (int64_t i = 0; slack && i < ideal->numel; i++) slack[i] = 0;
    switch (form) {
    case PAR_QFORM_ACC_AXIS1:
    case PAR_QFORM_ACC_LAST: return conv_linear(c, in, ov, q, tie, slack, msg);
    case PAR_QFORM_ADD:
    case PAR_QFORM_MUL: return add_mul(c, in, ov, q, win, tie, slack, msg);
    case PAR_QFORM_MOVE:
    case PAR_QFORM_SELECT:
    case PAR_QFORM_CLAMP: return movement(c, in, ov, q, slack, msg);
    case PAR_QFORM_LUT: return lut(c, in, ov, q, msg);
    case PAR_QFORM_AVG: return avg(c, in, ov, q, tie, slack, msg);
    case PAR_QFORM_ROUND_INTERP:
    case PAR_QFORM_ROUND_FREE: {
        int32_t lo, hi;
        qrange(ov->dtype, &lo, &hi);
        for (int64_t i = 0; i < ideal->numel; i++) {
            double x = ideal->v[i] / ov->scale;
            double v = x - remainder(x, 1.0) + ov->zero_point;
            for (int s = 0; s < PAR_REQUANT_N_SCHEMES; s++)
                if (q[s]) q[s][i] = v < lo ? lo : v > hi ? hi : v;
        }
        return PAR_OK;
    }
    case PAR_QFORM_NONE:
    case PAR_QFORM_CONVERT:
    default: return par_msgf(msg, PAR_UNSUPPORTED, "op %s has no integer form in the reference", c->n->op);
    }
}
