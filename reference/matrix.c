/*
 * matrix.c - shape inference and float64 reference kernels of linear and matmul (docs/ops.md), with the error
 * budget of every output element (docs/budgets/conv-pool.md).
 *
 * Plain loops over the definition; no blocking, no reordering. The kernels see float tensors only (quantized operands
 * are dequantized around them by the interpreter) and must not allocate memory that outlives the call.
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

static int same_shape(const par_rt *t, int32_t rank, const int64_t *dims)
{
    if (t->rank != rank) return 0;
    for (int32_t i = 0; i < rank; i++)
        if (t->dims[i] != dims[i]) return 0;
    return 1;
}

/* ---- linear: x [..., K], w [O, K], b [O] -> [..., O] ---------------------------------------------------------- */

static par_status linear_shape(int32_t xr, const int64_t *xd, int32_t wr, const int64_t *wd, const int64_t *bd,
                               int32_t br, int32_t *yr, int64_t *yd, par_msg *msg)
{
    if (xr < 1) return par_msgf(msg, PAR_ERROR, "input 0 (x): rank %d, expected at least 1", (int)xr);
    if (wr != 2) return par_msgf(msg, PAR_ERROR, "input 1 (weight): rank %d, expected 2 ([O, K])", (int)wr);
    if (wd[1] != xd[xr - 1])
        return par_msgf(msg, PAR_ERROR, "input 1 (weight): dims[1] is %lld, expected %lld (the last dim of x)",
                        (long long)wd[1], (long long)xd[xr - 1]);
    if (bd && (br != 1 || bd[0] != wd[0]))
        return par_msgf(msg, PAR_ERROR, "input 2 (bias): shape must be [%lld] (weight dims[0])", (long long)wd[0]);
    *yr = xr;
    for (int32_t i = 0; i < xr - 1; i++) yd[i] = xd[i];
    yd[xr - 1] = wd[0];
    return PAR_OK;
}

par_status par_infer_linear(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *x = par_node_input(g, n, 0), *w = par_node_input(g, n, 1), *b = par_node_input(g, n, 2);
    if (!x || !w) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    return linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, &outs[0].rank,
                        outs[0].dims, msg);
}

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
    st = linear_shape(x->rank, x->dims, w->rank, w->dims, b ? b->dims : NULL, b ? b->rank : 0, &yr, yd, msg);
    if (st != PAR_OK) return st;
    if (!same_shape(y, yr, yd)) return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    int64_t kk = w->dims[1], oo = w->dims[0], rows = x->numel / kk;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < oo; o++) {
            dot_acc a = {0};
            for (int64_t k = 0; k < kk; k++)
                dot_add(&a, w, o * kk + k, x, r * kk + k);
            dot_finish(&a, b, o, &c->prec, y, r * oo + o);
        }
    return PAR_OK;
}

/* ---- matmul: a [..., M, K], b [..., K, N] -> [broadcast(...), M, N] ------------------------------------------- */

static par_status matmul_shape(int32_t ar, const int64_t *ad, int32_t br, const int64_t *bd, int32_t *yr, int64_t *yd,
                               par_msg *msg)
{
    if (ar < 2) return par_msgf(msg, PAR_ERROR, "input 0 (a): rank %d, expected at least 2", (int)ar);
    if (br < 2) return par_msgf(msg, PAR_ERROR, "input 1 (b): rank %d, expected at least 2", (int)br);
    if (ad[ar - 1] != bd[br - 2])
        return par_msgf(msg, PAR_ERROR, "input 1 (b): dims[%d] is %lld, expected %lld (the last dim of a)",
                        (int)(br - 2), (long long)bd[br - 2], (long long)ad[ar - 1]);
    int32_t r = ar > br ? ar : br;
    /* Batch dims aligned from the right, numpy broadcasting: equal, or one of them 1. */
    for (int32_t i = 0; i < r - 2; i++) {
        int32_t ia = i - (r - ar), ib = i - (r - br);
        int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b): batch dims %lld and %lld do not broadcast "
                            "(output dim %d)", (long long)da, (long long)db, (int)i);
        yd[i] = da == 1 ? db : da;
    }
    yd[r - 2] = ad[ar - 2];
    yd[r - 1] = bd[br - 1];
    *yr = r;
    return PAR_OK;
}

par_status par_infer_matmul(const par_graph_desc *g, const par_node *n, par_value *outs, par_msg *msg)
{
    const par_value *a = par_node_input(g, n, 0), *b = par_node_input(g, n, 1);
    if (!a || !b) return par_msgf(msg, PAR_ERROR, "inputs 0 (a) and 1 (b) are required");
    return matmul_shape(a->rank, a->dims, b->rank, b->dims, &outs[0].rank, outs[0].dims, msg);
}

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
    if ((st = matmul_shape(a->rank, a->dims, b->rank, b->dims, &r, yd, msg)) != PAR_OK) return st;
    if (!same_shape(y, r, yd)) return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    int64_t m = yd[r - 2], nn = yd[r - 1], kk = a->dims[a->rank - 1];
    int64_t batches = 1;
    for (int32_t i = 0; i < r - 2; i++) batches *= yd[i];
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t ao = batch_offset(bi, r, yd, a->rank, a->dims), bo = batch_offset(bi, r, yd, b->rank, b->dims);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                dot_acc acc = {0};
                for (int64_t k = 0; k < kk; k++) {
                    int64_t ai = ao + i * kk + k, bj = bo + k * nn + j;
                    dot_add(&acc, a, ai, b, bj);
                }
                int64_t yi = (bi * m + i) * nn + j;
                dot_finish(&acc, NULL, 0, &c->prec, y, yi);
            }
    }
    return PAR_OK;
}
