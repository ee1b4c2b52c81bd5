/*
 * conv_winograd.c - the error budget of a conv2d computed with a declared Winograd algorithm (core/parity_backend.h,
 * par_algo; derivation in docs/budgets/winograd.md), and the table of the algorithms a backend may declare.
 *
 * Winograd F(m x m, 3 x 3) computes each m x m output tile as Y = A^T [sum_c (G g_c G^T) (.) (B^T d_c B)] A, where
 * d_c is the t x t input tile (t = m + 2) of channel c and (.) the elementwise product. The result is the same
 * linear function of x and w as direct convolution, so the value and the propagated input budgets are exactly the
 * direct kernel's (dot.h); only the op's own rounding differs. It is bounded stage by stage (Higham's bounds for a
 * sum of products, eq. 3.4-3.5, applied to each stage's computed operands):
 *   transforms   |U~ - U| <= gamma(kG_i + kG_j) (|G| |g| |G^T|),  |V~ - V| <= gamma(kB_i + kB_j) (|B^T| |d| |B|)
 *   products and channel sum, M~ = fl(sum_c U~ V~):
 *                |M~ - M| <= dm = sum_c gamma(cg) |U~| |V~| + du |V| + |U| dv + du dv,  |U~| <= |U| + du
 *   output       |Y~ - Y| <= |A^T| dm |A| + gamma(kA_a + kA_b [+ 1 bias]) (|A^T| (|M| + dm) |A| [+ |b|])
 * where k is a transform row's roundings (row_roundings: its additions, one rounded multiplication unless every
 * entry is a power of two, one rounding of a constant that float cannot hold). Each stage's error is charged on
 * the magnitude of that stage's own operands (|U|, |V|, |M|, after their cancellations), not on the elementary
 * products: about 3x tighter than the elementary-product form (the measured ratios are in the doc). The
 * magnitudes of the operands a backend holds (value plus budget) are used throughout, in float64.
 *
 * It must not change the value of any element nor the propagated part of a budget: a declared algorithm changes
 * only the bound on the backend's own rounding.
 */
#include "conv_winograd.h"
#include "dot.h"
#include "kernel_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A transform entry num/den, exact as a rational. */
typedef struct q16 {
    int16_t num, den;
} q16;

#define MAX_T 8
#define MAX_M 6

typedef struct wg_alg {
    const char *name;
    int32_t m, t;
    q16 bt[MAX_T][MAX_T]; /* B^T, t x t */
    q16 g[MAX_T][3];      /* G, t x 3 */
    q16 at[MAX_M][MAX_T]; /* A^T, m x t */
} wg_alg;

#define Z {0, 1}
#define I(v) {v, 1}
#define R(n, d) {n, d}

/* The matrices of core/parity_backend.h (Lavin and Gray 2016; wincnn, NNPACK, ncnn). tests/test_winograd.c checks in
 * float64 that each reproduces direct correlation. */
static const wg_alg ALGS[PAR_ALGO_COUNT] = {
    [PAR_ALGO_DIRECT] = {.name = "direct"},
    [PAR_ALGO_WINOGRAD_2X2_3X3] =
        {.name = "winograd_2x2_3x3",
         .m = 2,
         .t = 4,
         .bt = {{I(1), Z, I(-1), Z}, {Z, I(1), I(1), Z}, {Z, I(-1), I(1), Z}, {Z, I(1), Z, I(-1)}},
         .g = {{I(1), Z, Z}, {R(1, 2), R(1, 2), R(1, 2)}, {R(1, 2), R(-1, 2), R(1, 2)}, {Z, Z, I(1)}},
         .at = {{I(1), I(1), I(1), Z}, {Z, I(1), I(-1), I(-1)}}},
    [PAR_ALGO_WINOGRAD_4X4_3X3] =
        {.name = "winograd_4x4_3x3",
         .m = 4,
         .t = 6,
         .bt = {{I(4), Z, I(-5), Z, I(1), Z},
                {Z, I(-4), I(-4), I(1), I(1), Z},
                {Z, I(4), I(-4), I(-1), I(1), Z},
                {Z, I(-2), I(-1), I(2), I(1), Z},
                {Z, I(2), I(-1), I(-2), I(1), Z},
                {Z, I(4), Z, I(-5), Z, I(1)}},
         .g = {{R(1, 4), Z, Z},
               {R(-1, 6), R(-1, 6), R(-1, 6)},
               {R(-1, 6), R(1, 6), R(-1, 6)},
               {R(1, 24), R(1, 12), R(1, 6)},
               {R(1, 24), R(-1, 12), R(1, 6)},
               {Z, Z, I(1)}},
         .at = {{I(1), I(1), I(1), I(1), I(1), Z},
                {Z, I(1), I(-1), I(2), I(-2), Z},
                {Z, I(1), I(1), I(4), I(4), Z},
                {Z, I(1), I(-1), I(8), I(-8), I(1)}}},
    [PAR_ALGO_WINOGRAD_6X6_3X3] =
        {.name = "winograd_6x6_3x3",
         .m = 6,
         .t = 8,
         .bt = {{I(1), Z, R(-21, 4), Z, R(21, 4), Z, I(-1), Z},
                {Z, I(1), I(1), R(-17, 4), R(-17, 4), I(1), I(1), Z},
                {Z, I(-1), I(1), R(17, 4), R(-17, 4), I(-1), I(1), Z},
                {Z, R(1, 2), R(1, 4), R(-5, 2), R(-5, 4), I(2), I(1), Z},
                {Z, R(-1, 2), R(1, 4), R(5, 2), R(-5, 4), I(-2), I(1), Z},
                {Z, I(2), I(4), R(-5, 2), I(-5), R(1, 2), I(1), Z},
                {Z, I(-2), I(4), R(5, 2), I(-5), R(-1, 2), I(1), Z},
                {Z, I(-1), Z, R(21, 4), Z, R(-21, 4), Z, I(1)}},
         .g = {{I(1), Z, Z},
               {R(-2, 9), R(-2, 9), R(-2, 9)},
               {R(-2, 9), R(2, 9), R(-2, 9)},
               {R(1, 90), R(1, 45), R(2, 45)},
               {R(1, 90), R(-1, 45), R(2, 45)},
               {R(32, 45), R(16, 45), R(8, 45)},
               {R(32, 45), R(-16, 45), R(8, 45)},
               {Z, Z, I(1)}},
         .at = {{I(1), I(1), I(1), I(1), I(1), I(1), I(1), Z},
                {Z, I(1), I(-1), I(2), I(-2), R(1, 2), R(-1, 2), Z},
                {Z, I(1), I(1), I(4), I(4), R(1, 4), R(1, 4), Z},
                {Z, I(1), I(-1), I(8), I(-8), R(1, 8), R(-1, 8), Z},
                {Z, I(1), I(1), I(16), I(16), R(1, 16), R(1, 16), Z},
                {Z, I(1), I(-1), I(32), I(-32), R(1, 32), R(-1, 32), I(1)}}},
};

#undef Z
#undef I
#undef R

const char *par_algo_name(int32_t algo)
{
    return (algo >= 0 && algo < PAR_ALGO_COUNT) ? ALGS[algo].name : NULL;
}

static int is_pow2(int v)
{
    v = v < 0 ? -v : v;
    return v > 0 && (v & (v - 1)) == 0;
}

static double qv(q16 e) { return (double)e.num / (double)e.den; }

/* The roundings of one output of a one-dimensional pass over a row of n entries (docs/budgets/winograd.md): the
 * nonzero terms' additions (k - 1), one rounded multiplication unless every nonzero entry is +-2^j (a product by a
 * power of two is exact), and one rounding of a constant that binary floating point cannot hold (1/6, 2/9: the
 * denominator is not a power of two; every numerator here is below 2^6, which f16 and f32 hold). A row with no
 * nonzero entry adds nothing (its output is an exact 0). */
static int32_t row_roundings(const q16 *row, int32_t n)
{
    int32_t k = 0, mul = 0, inexact = 0;
    for (int32_t j = 0; j < n; j++) {
        if (row[j].num == 0) continue;
        k++;
        if (!is_pow2(row[j].num) || !is_pow2(row[j].den)) mul = 1;
        if (!is_pow2(row[j].den)) inexact = 1;
    }
    return k ? (k - 1) + mul + inexact : 0;
}

static int32_t ka_of(const wg_alg *a, int32_t r) { return row_roundings(a->at[r], a->t); }
static int32_t kb_of(const wg_alg *a, int32_t r) { return row_roundings(a->bt[r], a->t); }
static int32_t kg_of(const wg_alg *a, int32_t r) { return row_roundings(a->g[r], 3); }

int32_t par_winograd_matrices(int32_t algo, double *bt, double *g, double *at)
{
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT) return 0;
    const wg_alg *a = &ALGS[algo];
    for (int32_t i = 0; i < a->t; i++) {
        for (int32_t j = 0; j < a->t; j++) bt[i * a->t + j] = qv(a->bt[i][j]);
        for (int32_t j = 0; j < 3; j++) g[i * 3 + j] = qv(a->g[i][j]);
    }
    for (int32_t i = 0; i < a->m; i++)
        for (int32_t j = 0; j < a->t; j++) at[i * a->t + j] = qv(a->at[i][j]);
    return a->m;
}

/* ---- which nodes can be Winograd ------------------------------------------------------------------------------ */

static int float_dtype(par_dtype t) { return t == PAR_DTYPE_F32 || t == PAR_DTYPE_F16 || t == PAR_DTYPE_F64; }

par_status par_algo_check(const par_graph_desc *g, int32_t node, int32_t algo, par_msg *msg)
{
    if (!g || node < 0 || node >= g->n_nodes) return par_msgf(msg, PAR_ERROR, "algorithm declared for node %d, which "
                                                              "the graph does not have", (int)node);
    const par_node *n = &g->nodes[node];
    const char *nm = n->name ? n->name : "?", *op = n->op ? n->op : "?";
    if (algo < 0 || algo >= PAR_ALGO_COUNT)
        return par_msgf(msg, PAR_ERROR, "node %d '%s' (%s): declared algorithm %d, not a par_algo value (0..%d)",
                        (int)node, nm, op, (int)algo, (int)PAR_ALGO_COUNT - 1);
    if (algo == PAR_ALGO_DIRECT) return PAR_OK;
    const char *why = NULL;
    const par_value *w = par_node_input(g, n, 1), *y = par_node_output(g, n, 0);
    if (strcmp(op, "conv2d") != 0) why = "only conv2d can be Winograd";
    else if (!w || w->rank != 4 || w->dims[2] != 3 || w->dims[3] != 3) why = "its kernel is not 3x3";
    else if (par_attr_ints_at(n, "stride", 0, 1) != 1 || par_attr_ints_at(n, "stride", 1, 1) != 1)
        why = "its stride is not 1";
    else if (par_attr_ints_at(n, "dilation", 0, 1) != 1 || par_attr_ints_at(n, "dilation", 1, 1) != 1)
        why = "its dilation is not 1";
    else if (!y || !float_dtype(y->dtype) || !float_dtype(w->dtype)) why = "it is not a float convolution";
    if (why)
        return par_msgf(msg, PAR_ERROR, "node %d '%s' (%s): declared algorithm %d (%s), but %s", (int)node, nm, op,
                        (int)algo, ALGS[algo].name, why);
    return PAR_OK;
}

/* ---- the stage bounds ----------------------------------------------------------------------------------------- */

/* One operand's two-pass transform T = L X L^T (L: rows x cols with row stride ls; X: cols x cols): val the signed
 * transform of the reference values, mag = |L| (|X| + e(X)) |L^T| (the terms' magnitudes a backend's operands can
 * have), err = |L| e(X) |L^T| (how far the transform of the operands it holds may be from val). */
typedef struct tview {
    double val[MAX_T * MAX_T], mag[MAX_T * MAX_T], err[MAX_T * MAX_T];
} tview;

static void transform2(const q16 *L, int32_t rows, int32_t cols, int32_t ls, const double *xv, const double *xe,
                       tview *o)
{
    double tv[MAX_T * MAX_T], tm[MAX_T * MAX_T], te[MAX_T * MAX_T];
    for (int32_t i = 0; i < rows; i++)
        for (int32_t s = 0; s < cols; s++) {
            double v = 0, m = 0, e = 0;
            for (int32_t r = 0; r < cols; r++) {
                q16 c = L[i * ls + r];
                if (!c.num) continue;
                double cv = qv(c), ca = fabs(cv), x = xv[r * cols + s], ex = xe[r * cols + s];
                v += cv * x;
                m += bmul(ca, fabs(x) + ex);
                e += bmul(ca, ex);
            }
            tv[i * cols + s] = v, tm[i * cols + s] = m, te[i * cols + s] = e;
        }
    for (int32_t i = 0; i < rows; i++)
        for (int32_t j = 0; j < rows; j++) {
            double v = 0, m = 0, e = 0;
            for (int32_t s = 0; s < cols; s++) {
                q16 c = L[j * ls + s];
                if (!c.num) continue;
                double cv = qv(c), ca = fabs(cv);
                v += tv[i * cols + s] * cv;
                m += bmul(tm[i * cols + s], ca);
                e += bmul(te[i * cols + s], ca);
            }
            o->val[i * rows + j] = v, o->mag[i * rows + j] = m, o->err[i * rows + j] = e;
        }
}

int32_t par_winograd_roundings(int32_t algo, char matrix, int32_t row)
{
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT || row < 0) return -1;
    const wg_alg *a = &ALGS[algo];
    if (matrix == 'A' && row < a->m) return ka_of(a, row);
    if (matrix == 'B' && row < a->t) return kb_of(a, row);
    if (matrix == 'G' && row < a->t) return kg_of(a, row);
    return -1;
}

void par_winograd_tile(int32_t algo, const par_conv_geom *q, const par_rt *x, const par_rt *w, double u, int64_t n,
                       int64_t o, int64_t th, int64_t tw, par_wg_tile *tile)
{
    memset(tile, 0, sizeof *tile);
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT) return;
    const wg_alg *a = &ALGS[algo];
    const int32_t t = a->t, tt = t * t;
    const int64_t cg = q->c / q->groups, og = q->o / q->groups, g0 = (o / og) * cg;
    const double gc = par_gamma(cg, u), sc = sqrt((double)cg) * u;
    double gu[MAX_T * MAX_T], gv[MAX_T * MAX_T], su[MAX_T * MAX_T], sv[MAX_T * MAX_T];
    for (int32_t i = 0; i < t; i++)
        for (int32_t j = 0; j < t; j++) {
            int32_t kg = kg_of(a, i) + kg_of(a, j), kb = kb_of(a, i) + kb_of(a, j);
            gu[i * t + j] = par_gamma(kg, u), su[i * t + j] = sqrt((double)kg) * u;
            gv[i * t + j] = par_gamma(kb, u), sv[i * t + j] = sqrt((double)kb) * u;
        }
    tile->t = t;
    for (int64_t ci = 0; ci < cg; ci++) {
        double gvv[9], gve[9], dv[MAX_T * MAX_T], de[MAX_T * MAX_T];
        for (int32_t k = 0; k < 9; k++) {
            int64_t wi = (o * cg + ci) * 9 + k;
            gvv[k] = w->v[wi], gve[k] = w->e[wi];
        }
        for (int32_t r = 0; r < t; r++)
            for (int32_t s = 0; s < t; s++) {
                int64_t ih = th - q->pt + r, iw = tw - q->pl + s;
                int in = ih >= 0 && ih < q->h && iw >= 0 && iw < q->w;
                int64_t xi = ((n * q->c + g0 + ci) * q->h + ih) * q->w + iw;
                dv[r * t + s] = in ? x->v[xi] : 0.0; /* outside the image: an exact zero */
                de[r * t + s] = in ? x->e[xi] : 0.0;
            }
        tview U, V;
        transform2(&a->g[0][0], t, 3, 3, gvv, gve, &U);
        transform2(&a->bt[0][0], t, t, MAX_T, dv, de, &V);
        for (int32_t k = 0; k < tt; k++) {
            /* |U~| <= um + du: the held operands' transform, then its rounding (the same for V) */
            double um = fabs(U.val[k]) + U.err[k], vm = fabs(V.val[k]) + V.err[k];
            double du = bmul(gu[k], U.mag[k]), dvv = bmul(gv[k], V.mag[k]);
            tile->val[k] += U.val[k] * V.val[k];
            tile->m[k] += bmul(U.err[k], fabs(V.val[k])) + bmul(fabs(U.val[k]), V.err[k]) + bmul(U.err[k], V.err[k]);
            tile->dm[k] += bmul(gc, bmul(um + du, vm + dvv)) + bmul(du, vm) + bmul(um, dvv) + bmul(du, dvv);
            tile->sm[k] += bmul(sc, bmul(um, vm)) + bmul(bmul(su[k], U.mag[k]), vm) + bmul(um, bmul(sv[k], V.mag[k]));
        }
    }
    for (int32_t k = 0; k < tt; k++) tile->m[k] += fabs(tile->val[k]);
}

double par_winograd_own(int32_t algo, const par_wg_tile *tile, int32_t ra, int32_t rb, double bias_mag, int with_bias,
                        double u, double *scale)
{
    if (scale) *scale = 0;
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT) return 0;
    const wg_alg *a = &ALGS[algo];
    if (ra < 0 || rb < 0 || ra >= a->m || rb >= a->m) return 0;
    const int32_t t = a->t;
    const int32_t k = ka_of(a, ra) + ka_of(a, rb) + (with_bias ? 1 : 0);
    double prop = 0, held = with_bias ? bias_mag : 0, sprop = 0;
    for (int32_t i = 0; i < t; i++) {
        double ai = fabs(qv(a->at[ra][i]));
        if (ai == 0) continue;
        for (int32_t j = 0; j < t; j++) {
            double c = ai * fabs(qv(a->at[rb][j]));
            if (c == 0) continue;
            prop += bmul(c, tile->dm[i * t + j]);
            sprop += bmul(c, tile->sm[i * t + j]);
            held += bmul(c, tile->m[i * t + j] + tile->dm[i * t + j]);
        }
    }
    if (scale) *scale = sprop + bmul(sqrt((double)k) * u, held);
    return prop + bmul(par_gamma(k, u), held);
}

/* ---- the kernel ----------------------------------------------------------------------------------------------- */

par_status par_ref_conv2d_winograd(const par_ref_ctx *c, int32_t algo, const par_conv_geom *q, const par_rt *x,
                                   const par_rt *w, const par_rt *b, par_rt *y, par_msg *msg)
{
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT)
        return par_msgf(msg, PAR_ERROR, "declared algorithm %d is not a Winograd algorithm", (int)algo);
    if (q->kh != 3 || q->kw != 3 || q->sh != 1 || q->sw != 1 || q->dh != 1 || q->dw != 1)
        return par_msgf(msg, PAR_ERROR, "declared algorithm %s needs a 3x3 kernel, stride 1 and dilation 1",
                        ALGS[algo].name);
    /* The transforms' budget is derived for operands used as stored; bfloat16 operands (PAR_ARITH_BF16) would need
     * their rounding inside the transforms too, which this derivation does not have. */
    if (c->prec.u_in > 0)
        return par_msgf(msg, PAR_ERROR, "declared algorithm %s has no budget for bfloat16 operands (arith bf16)",
                        ALGS[algo].name);
    const int32_t m = ALGS[algo].m;
    const int64_t cg = q->c / q->groups, og = q->o / q->groups;
    const double u = c->prec.u;
    par_wg_tile tile;
    for (int64_t n = 0; n < q->n; n++)
        for (int64_t o = 0; o < q->o; o++) {
            const int64_t g0 = (o / og) * cg;
            for (int64_t th = 0; th < q->oh; th += m)
                for (int64_t tw = 0; tw < q->ow; tw += m) {
                    par_winograd_tile(algo, q, x, w, u, n, o, th, tw, &tile);
                    /* a non-finite entry anywhere in the tile may reach every output of it: a backend computing
                     * the output transform as a matrix product multiplies its zero coefficients by Inf too */
                    int tile_nonfinite = 0;
                    for (int32_t k = 0; k < tile.t * tile.t; k++)
                        tile_nonfinite |= !(tile.m[k] + tile.dm[k] < INFINITY);
                    for (int32_t ra = 0; ra < m && th + ra < q->oh; ra++)
                        for (int32_t rb = 0; rb < m && tw + rb < q->ow; rb++) {
                            const int64_t oh = th + ra, ow = tw + rb;
                            /* the value and the propagated budgets: the direct definition (dot.h) */
                            dot_acc acc = {0};
                            for (int64_t ci = 0; ci < cg; ci++)
                                for (int64_t kh = 0; kh < 3; kh++) {
                                    int64_t ih = oh - q->pt + kh;
                                    if (ih < 0 || ih >= q->h) continue;
                                    for (int64_t kw = 0; kw < 3; kw++) {
                                        int64_t iw = ow - q->pl + kw;
                                        if (iw < 0 || iw >= q->w) continue;
                                        dot_add(&acc, &c->prec, w, ((o * cg + ci) * 3 + kh) * 3 + kw, x,
                                                ((n * q->c + g0 + ci) * q->h + ih) * q->w + iw);
                                    }
                                }
                            double val = acc.v, prop = acc.prop, prop2 = acc.prop2, bm = 0;
                            if (b) {
                                double sb = par_rt_scales(b)[o];
                                bm = fabs(b->v[o]) + b->e[o];
                                val += b->v[o];
                                prop += b->e[o];
                                prop2 += bmul(sb, sb);
                            }
                            double s_own;
                            double own = par_winograd_own(algo, &tile, ra, rb, bm, b != NULL, u, &s_own);
                            const int64_t yi = ((n * q->o + o) * q->oh + oh) * q->ow + ow;
                            if (y->s) {
                                double ps = s_own + sqrt(prop2);
                                y->s[yi] = ps + bmul(c->prec.u_store, fabs(val) + ps);
                            }
                            double pre = own + par_prop_bound(prop, prop2);
                            y->v[yi] = val;
                            y->e[yi] = pre + bmul(c->prec.u_store, fabs(val) + pre);
                            /* Non-finite or huge data in the tile: the transforms mix every input of the tile into
                             * every output (an Inf becomes Inf - Inf = NaN), and own >= u * held bounds the
                             * magnitudes the transforms and products hold within the sum of |coefficients| of a
                             * transform row (< 64 for F(2,3) and F(4,3)): beyond u * OVF / 64 an intermediate may
                             * overflow, so the element is "anything" (docs/budgets/winograd.md). */
                            const double ovf = par_ovf_arith(&c->prec); /* unlimited: exact arithmetic */
                            if (tile_nonfinite || (ovf < INFINITY && !(own < u * ovf / 64))) par_mark_any(c, yi);
                        }
                }
        }
    return PAR_OK;
}
