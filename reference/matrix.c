/*
 * matrix.c - float64 reference kernels of linear and matmul (docs/ops.md), with the error
 * budget of every output element (docs/budgets/conv-pool.md).
 *
 * Plain loops over the definition; no blocking, no reordering: dot.h's fast path computes DOT_LANES output columns at
 * a time where it applies, each with the definition's terms in its order and its bits. The kernels see float tensors
 * only (quantized operands are dequantized around them by the interpreter) and must not allocate memory that
 * outlives the call.
 *
 * Budget of one output y = [b +] sum_{i<K} a_i w_i, the same rule as the convolutions:
 *   rounding   par_gamma(K + [bias], u) * (sum (|a_i| + e(a_i)) (|w_i| + e(w_i)) + |b| + e(b))
 *   propagated par_prop_bound over t_i = |w_i| e(a_i) + |a_i| e(w_i) + e(a_i) e(w_i) (+ e(b)) and the same terms
 *              from the scales (reference/dot.h)
 *   storage    u_store * (|y| + rounding + propagated)
 */
#include "reference.h"
#include "dot.h"
#include "kernel_util.h"

#include <math.h>
#include <string.h>

/* ---- linear: x [..., K], w [O, K], b [O] -> [..., O] ---------------------------------------------------------- */

par_status par_ref_linear(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_status st;
    /* in[] is only valid below n_inputs: a node may list the absent bias as -1 (NULL) or not at all. */
    const par_rt *x = in[0], *w = in[1], *b = c->n->n_inputs > 2 ? in[2] : NULL;
    par_rt *y = out[0];
    if (!x || !w || !y) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    if ((st = check_float(x, "input 0 (x)", msg)) != PAR_OK) return st;
    if ((st = check_float(w, "input 1 (weight)", msg)) != PAR_OK) return st;
    if ((st = check_float(b, "input 2 (bias)", msg)) != PAR_OK) return st;
    if ((st = check_float(y, "output 0", msg)) != PAR_OK) return st;
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    st = par_linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, &yr, yd, msg);
    if (st != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    int64_t kk = w->dims[1], oo = w->dims[0], rows = x->numel / kk;
    if (dot_fast(&c->prec, w, x)) {
        /* The fast path (dot.h): lanes across the output columns o, whose terms k are w's rows at stride kk and the
         * same x. */
        const double *sw = par_rt_scales(w), *sx = par_rt_scales(x);
        double buf[6 * DOT_LANES];
        for (int64_t r = 0; r < rows; r++)
            for (int64_t o = 0; o < oo; o += DOT_LANES) {
                int64_t o0 = dot_block(o, 0, oo);
                int nl = oo - o0 < DOT_LANES ? (int)(oo - o0) : DOT_LANES;
                dot_lanes a;
                memset(&a, 0, sizeof a);
                for (int64_t k = 0; k < kk; k++) {
                    dot_terms t = dot_terms_at(w, sw, o0 * kk + k, kk, x, sx, r * kk + k, 0);
                    dot_lanes_add(&a, nl < DOT_LANES ? dot_terms_pad(t, nl, buf) : t);
                }
                for (int j = 0; j < nl; j++) {
                    int64_t yi = r * oo + o0 + j;
                    if (dot_lanes_finish(&a, j, b, o0 + j, &c->prec, y, yi)) par_mark_any(c, yi);
                }
            }
        return PAR_OK;
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < oo; o++) {
            dot_acc a = {0};
            for (int64_t k = 0; k < kk; k++)
                dot_add(&a, &c->prec, w, o * kk + k, x, r * kk + k);
            if (dot_finish(&a, b, o, &c->prec, y, r * oo + o)) par_mark_any(c, r * oo + o);
        }
    return PAR_OK;
}

/* ---- matmul: a [..., M, K], b [..., K, N] -> [broadcast(...), M, N] ------------------------------------------- */

/* Offset of the matrix of batch index `bi` (row-major over the output's batch dims yd[0..r-2)) in an operand of
 * rank tr whose batch dims are broadcast (a dim of 1 repeats). */
static int64_t batch_offset(int64_t bi, int32_t r, const int64_t *yd, int32_t tr, const int64_t *td)
{
    int64_t off = 0, stride = td[tr - 2] * td[tr - 1];
    for (int32_t i = r - 3; i >= 0; i--) {
        int64_t idx = bi % yd[i];
        bi /= yd[i];
        int32_t ti = i - (r - tr);
        if (ti < 0) continue;
        if (td[ti] != 1) off += idx * stride;
        stride *= td[ti];
    }
    return off;
}

par_status par_ref_matmul(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_status st;
    const par_rt *a = in[0], *b = in[1];
    par_rt *y = out[0];
    if (!a || !b || !y) return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b) are required");
    if ((st = check_float(a, "input 0 (a)", msg)) != PAR_OK) return st;
    if ((st = check_float(b, "input 1 (b)", msg)) != PAR_OK) return st;
    if ((st = check_float(y, "output 0", msg)) != PAR_OK) return st;
    int32_t r;
    int64_t yd[PAR_MAX_RANK];
    if ((st = par_matmul_shape(a->rank, a->dims, b->rank, b->dims, &r, yd, msg)) != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, r, yd))
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    int64_t m = yd[r - 2], nn = yd[r - 1], kk = a->dims[a->rank - 1];
    int64_t batches = 1;
    for (int32_t i = 0; i < r - 2; i++) batches *= yd[i];
    if (dot_fast(&c->prec, a, b)) {
        /* The fast path (dot.h): lanes across the output columns j, whose terms k are the same a and b's row k at
         * unit stride. */
        const double *sa = par_rt_scales(a), *sb = par_rt_scales(b);
        double buf[6 * DOT_LANES];
        for (int64_t bi = 0; bi < batches; bi++) {
            int64_t ao = batch_offset(bi, r, yd, a->rank, a->dims), bo = batch_offset(bi, r, yd, b->rank, b->dims);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < nn; j += DOT_LANES) {
                    int64_t j0 = dot_block(j, 0, nn);
                    int nl = nn - j0 < DOT_LANES ? (int)(nn - j0) : DOT_LANES;
                    dot_lanes acc;
                    memset(&acc, 0, sizeof acc);
                    for (int64_t k = 0; k < kk; k++) {
                        dot_terms t = dot_terms_at(a, sa, ao + i * kk + k, 0, b, sb, bo + k * nn + j0, 1);
                        dot_lanes_add(&acc, nl < DOT_LANES ? dot_terms_pad(t, nl, buf) : t);
                    }
                    for (int l = 0; l < nl; l++) {
                        int64_t yi = (bi * m + i) * nn + j0 + l;
                        if (dot_lanes_finish(&acc, l, NULL, 0, &c->prec, y, yi)) par_mark_any(c, yi);
                    }
                }
        }
        return PAR_OK;
    }
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t ao = batch_offset(bi, r, yd, a->rank, a->dims), bo = batch_offset(bi, r, yd, b->rank, b->dims);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                dot_acc acc = {0};
                for (int64_t k = 0; k < kk; k++) {
                    int64_t ai = ao + i * kk + k, bj = bo + k * nn + j;
                    dot_add(&acc, &c->prec, a, ai, b, bj);
                }
                int64_t yi = (bi * m + i) * nn + j;
                if (dot_finish(&acc, NULL, 0, &c->prec, y, yi)) par_mark_any(c, yi);
            }
    }
    return PAR_OK;
}
