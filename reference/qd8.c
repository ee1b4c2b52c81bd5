/*
 * qd8.c - the float64 reference of linear layers on dynamic int8 activations (docs/quantization.md, "Dynamic int8
 * activations (qd8)"): linear_qd8 and matmul_qd8 (XNNPACK's qd8-f32-qc8w GEMM and batch matmul, ExecuTorch's 8da8w
 * dynamic linear), and the row loop linear_8da4w shares (linear_8da4w.c reads its int4 weights into this one's).
 *
 * x f32 [rows, K] is quantized at run time to int8 with XNNPACK's qd8 rule (par_requant_qd8_qparams), per row (a
 * token: per = token) or once over the whole tensor (per = tensor), all in f32:
 *   lo = min(0, min x), hi = max(0, max x); inv = lo == hi ? 1 : 255 / (hi - lo)
 *   zp = rint(clamp((-128 + lo inv) + (127 + hi inv) > 0 ? -128 - lo inv : 127 - hi inv, -128, 127))
 *   q_k = clamp(rint(x_k * inv) + zp, -128, 127) (the product rounded to f32, rint ties to even); s_x = 1 / inv in f32
 * Weights are integers w[o, k] (qs8 symmetric: the zero point is 0; int4 codes less their zero point) with float
 * scales s[o, b] per output channel and block of blk inputs (one block of K for qs8). Per output o and block b:
 *   acc_b = sum_{k in b} (q_k - zp) w_k, exact in int32; the value is the exact real y = s_x sum_b acc_b s[o, b] + bias[o].
 *
 * Budget. A correct backend differs by:
 *   (a) ties of the activation quantization: where x_k inv lies within 2^-20 (|x_k inv| + 1) of a half-integer,
 *       q_k may be the other neighbour (x / s_x in place of x * inv, an FMA, a reciprocal rounded differently);
 *       each such alternative moves y by s_x s[o, b] |w_k|, summed worst case. Not for a backend that promises
 *       the rule's integers (prec.requant_exact, qnnpack): it computes the rule's q_k exactly, so a tie rounded
 *       another way than half to even fails.
 *   (b) the f32 arithmetic: acc_b converted to f32, times s[o, b], times s_x (per block or once), and the zero
 *       point's part either inside acc_b or split off as zp sum_k w_k (XNNPACK precomputes it with the packed
 *       weights), each of the 2 nb + 1 terms (nb blocks, split, and the bias) summed in any order: par_gamma(2 nb +
 *       5, u) times the sum of magnitudes s_x |s[o, b]| M_b + |bias|, with M_b = |sum q_k w_k| + |zp sum w_k| >=
 *       |acc_b| (4 roundings per term before the sum of 2 nb + 1 terms), plus the store u_store |y|; a scale with a
 *       budget adds s_x |acc_b| e(s[o, b]).
 *   (c) inputs with budgets (x from a float op): per row (per tensor: once), a correct backend quantizes its own x'
 *       (within the budgets) with its own scale and zero point; dynq.h bounds the output's move (the integer
 *       offsets' reach and the scale's move; half a step of each dequantized value around its input, through rule 5
 *       with the inputs' scales; the two mixed per element) and takes the smallest; a row that may be all 0 may take
 *       the empty range's scale 1, and only the half-step bound holds there.
 * A row (per tensor: the tensor) with a NaN, an infinity, or a range whose scale is not finite has no quantization
 * parameters: its outputs are anything. The int32 accumulator holds K 255 128 only below 2^31: a larger K is refused.
 * It must not allocate memory that outlives the call.
 */
#include "qd8.h"
#include "dynq.h"
#include "core/requant.h"
#include "core/shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QD8_WIN 0x1p-20

/* One group of rows quantized with one set of parameters (a row, or the whole tensor). */
static void qd8_group(const par_ref_ctx *c, const par_rt *x, const par_qd8_gemm *m, int64_t r0, int64_t nr,
                      float *xf, double *q, unsigned char *alt, par_dynq_elem *el, par_rt *y)
{
    const int64_t kk = m->k, oo = m->o, nb = m->nb, blk = m->blk, n = nr * kk;
    const double u = c->prec.u, us = c->prec.u_store, g = par_gamma(2 * nb + 5, u);
    const double *xv = x->v + r0 * kk, *xe = x->e + r0 * kk, *xsc = par_rt_scales(x) + r0 * kk;
    double lo = 0;
    for (int64_t i = 0; i < n; i++) {
        xf[i] = (float)xv[i];
        lo = fmin(lo, (double)xf[i]);
    }
    float inv, sx;
    int32_t zp;
    if (!par_requant_qd8_qparams(xf, n, &inv, &sx, &zp)) {
        for (int64_t i = r0 * oo; i < (r0 + nr) * oo; i++) {
            y->v[i] = NAN;
            y->e[i] = INFINITY;
            par_mark_any(c, i);
        }
        return;
    }
    /* (c): the group's quantization as a correct backend may hold it (dynq.h); the zero point's ideal value is
     * -128 - lo inv (the rule's other form, 127 - hi inv, is the same up to roundings the window covers); an
     * empty range's scale is 1 */
    par_dynq dq;
    par_dynq_row(&dq, xv, xe, n, (double)sx, zp, -128.0 - lo * (double)inv, -128, 127, 0, 1.0);
    for (int64_t i = 0; i < n; i++) {
        const double t = (double)(float)((double)xf[i] * (double)inv), f = t - floor(t);
        q[i] = fmin(fmax(nearbyint(t) + zp, -128), 127);
        alt[i] = !c->prec.requant_exact && fabs(f - 0.5) <= QD8_WIN * (fabs(t) + 1);
        el[i] = par_dynq_elem_of(&dq, xv[i], xe[i], xsc[i], t, q[i]);
    }
    for (int64_t r = 0; r < nr; r++) {
        const double *qr = q + r * kk;
        const unsigned char *ar = alt + r * kk;
        const par_dynq_elem *er = el + r * kk;
        for (int64_t o = 0; o < oo; o++) {
            const int8_t *wrow = m->w + o * kk;
            double sum = 0, mag = 0, ties = 0, serr = 0;
            par_dynq_acc pa = {0};
            for (int64_t bi = 0; bi < nb; bi++) {
                const double s = m->s[o * nb + bi];
                double acc = 0, qw = 0, wsum = 0;
                for (int64_t k = bi * blk; k < (bi + 1) * blk; k++) {
                    const int wk = wrow[k];
                    acc += (qr[k] - zp) * wk; /* integers below 2^53: exact */
                    qw += qr[k] * wk;
                    wsum += wk;
                    if (ar[k]) ties += fabs(s * wk);
                    par_dynq_add(&dq, &pa, s * wk, &er[k]);
                }
                sum += acc * s;
                if (m->se) serr += fabs(acc) * m->se[o * nb + bi]; /* a scale with a budget */
                mag += (fabs(qw) + fabs(zp * wsum)) * fabs(s);
            }
            const double bias = m->bias ? m->bias->v[o] : 0, yv = (double)sx * sum + bias;
            double e = g * ((double)sx * mag + fabs(bias)) + us * fabs(yv) + (double)sx * (ties + serr), pe, ps;
            if (m->bias) e += m->bias->e[o];
            par_dynq_finish(&dq, &pa, &pe, &ps);
            const int64_t i = (r0 + r) * oo + o;
            y->v[i] = yv;
            y->e[i] = e + pe;
            if (y->s) y->s[i] = e + ps;
        }
    }
}

par_status par_ref_qd8_gemm(const par_ref_ctx *c, const par_rt *x, const par_qd8_gemm *m, par_rt *y, par_msg *msg)
{
    const int64_t kk = m->k, rows = kk > 0 ? x->numel / kk : 0, gr = m->per_tensor ? rows : 1;
    const int64_t n = gr * kk + 1;
    float *xf = malloc(sizeof *xf * (size_t)n);
    double *q = malloc(sizeof *q * (size_t)n);
    unsigned char *alt = malloc((size_t)n);
    par_dynq_elem *el = malloc(sizeof *el * (size_t)n);
    if (!xf || !q || !alt || !el) {
        free(xf), free(q), free(alt), free(el);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory", c->n->op);
    }
    for (int64_t r = 0; r < rows; r += gr) qd8_group(c, x, m, r, gr, xf, q, alt, el, y);
    free(xf), free(q), free(alt), free(el);
    return PAR_OK;
}

/* linear_qd8 (x [..., K], w qs8 [O, K], b f32 [O]?) and matmul_qd8 (a [..., M, K], b qs8 [K, N]): the weights as
 * [O, K] integers with one scale per output channel (per tensor: the same O times). */
static par_status qd8_node(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, int matmul,
                           par_msg *msg)
{
    const par_rt *x = in[0], *w = in[1], *b = !matmul && c->n->n_inputs > 2 ? in[2] : NULL;
    par_rt *y = out[0];
    const char *op = c->n->op;
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "%s: inputs 0 and 1 are required", op);
    if (x->dtype != PAR_DTYPE_F32 || (b && b->dtype != PAR_DTYPE_F32))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: input 0%s must be f32", op, b ? " and the bias" : "");
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    par_status st = par_qd8_shape(c->g, c->n, matmul, &yr, yd, msg);
    if (st != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "%s: output 0: allocated shape does not match the inferred", op);
    const par_value *wv = &c->g->values[c->n->inputs[1]];
    const int64_t kk = x->dims[x->rank - 1], oo = matmul ? w->dims[1] : w->dims[0];
    int8_t *wi = malloc((size_t)(oo * kk + 1));
    double *s = malloc(sizeof *s * (size_t)(oo + 1));
    if (!wi || !s) {
        free(wi), free(s);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory", op);
    }
    for (int64_t o = 0; o < oo; o++) {
        s[o] = wv->quant_axis >= 0 ? (double)wv->channel_scales[o] : (double)wv->scale;
        for (int64_t k = 0; k < kk; k++) wi[o * kk + k] = (int8_t)(matmul ? w->v[k * oo + o] : w->v[o * kk + k]);
    }
    par_qd8_gemm m = {oo, kk, kk, 1, wi, s, NULL, b, strcmp(par_attr_str(c->n, "per", "token"), "tensor") == 0};
    st = par_ref_qd8_gemm(c, x, &m, y, msg);
    free(wi), free(s);
    return st;
}

par_status par_ref_linear_qd8(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return qd8_node(c, in, out, 0, msg);
}

par_status par_ref_matmul_qd8(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return qd8_node(c, in, out, 1, msg);
}
