/*
 * conv_winograd.c - the error budget of a conv2d computed with a declared Winograd algorithm (core/parity_backend.h,
 * par_algo; derivation in docs/budgets/winograd.md), and the table of the algorithms a backend may declare.
 *
 * Winograd F(m x m, 3 x 3) computes each m x m output tile as Y = A^T [sum_c (G g_c G^T) (.) (B^T d_c B)] A, where
 * d_c is the t x t input tile (t = m + 2) of channel c and (.) the elementwise product. The result is the same
 * linear function of x and w as direct convolution, so the value and the propagated input budgets are exactly the
 * direct kernel's (dot.h); only the op's own rounding differs. Each elementary product
 *     A^T[a,i] A^T[b,j] G[i,p] G[j,q] g_c[p,q] B^T[i,r] B^T[j,s] d_c[r,s]
 * is carried through a fixed number n(a,b,i,j) of roundings, counted per stage from the nonzero entries of the
 * matrices' rows (the additions of each one-dimensional pass, one rounded multiplication unless every entry is a
 * power of two, one rounding of a constant that float cannot hold), plus cg for the channel sum with its product,
 * plus one for the bias. Higham's Lemma 3.1 bounds each path's relative error by gamma(n), so
 *     |fl(y) - y| <= sum_{i,j} gamma(n(a,b,i,j)) |A^T[a,i]| |A^T[b,j]| M[i,j] + gamma(kA + 1) |b|
 *     M = sum_c (|G| |g_c| |G^T|) (.) (|B^T| |d_c| |B|)
 * with the magnitudes of the operands a backend holds (value plus budget), computed here in float64.
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

int32_t par_winograd_path_roundings(int32_t algo, int32_t a, int32_t b, int32_t i, int32_t j, int64_t cg,
                                    int with_bias)
{
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT) return 0;
    const wg_alg *w = &ALGS[algo];
    if (a < 0 || b < 0 || a >= w->m || b >= w->m || i < 0 || j < 0 || i >= w->t || j >= w->t) return 0;
    int64_t n = (int64_t)ka_of(w, a) + ka_of(w, b) + kg_of(w, i) + kg_of(w, j) + kb_of(w, i) + kb_of(w, j) + cg +
                (with_bias ? 1 : 0);
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

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

/* ---- the magnitudes ------------------------------------------------------------------------------------------- */

/* u~ = |G| g~ |G^T| for one 3x3 kernel g~ (magnitudes): t x t. */
static void kernel_mag(const wg_alg *a, const double *g9, double *u)
{
    double tmp[MAX_T][3];
    for (int32_t i = 0; i < a->t; i++)
        for (int32_t q = 0; q < 3; q++) {
            double s = 0;
            for (int32_t p = 0; p < 3; p++) s += fabs(qv(a->g[i][p])) * g9[p * 3 + q];
            tmp[i][q] = s;
        }
    for (int32_t i = 0; i < a->t; i++)
        for (int32_t j = 0; j < a->t; j++) {
            double s = 0;
            for (int32_t q = 0; q < 3; q++) s += tmp[i][q] * fabs(qv(a->g[j][q]));
            u[i * a->t + j] = s;
        }
}

/* v~ = |B^T| d~ |B| for one t x t input tile d~ (magnitudes, zero outside the image). */
static void input_mag(const wg_alg *a, const double *d, double *v)
{
    double tmp[MAX_T][MAX_T];
    for (int32_t i = 0; i < a->t; i++)
        for (int32_t s = 0; s < a->t; s++) {
            double acc = 0;
            for (int32_t r = 0; r < a->t; r++)
                if (a->bt[i][r].num) acc += fabs(qv(a->bt[i][r])) * d[r * a->t + s];
            tmp[i][s] = acc;
        }
    for (int32_t i = 0; i < a->t; i++)
        for (int32_t j = 0; j < a->t; j++) {
            double acc = 0;
            for (int32_t s = 0; s < a->t; s++)
                if (a->bt[j][s].num) acc += tmp[i][s] * fabs(qv(a->bt[j][s]));
            v[i * a->t + j] = acc;
        }
}

static double mag_of(const par_rt *t, int64_t i) { return fabs(t->v[i]) + t->e[i]; }

/* The input tile of channel ch at input origin (ih0, iw0), as magnitudes: t x t, zero outside the image. */
static void input_tile(const wg_alg *a, const par_conv_geom *q, const par_rt *x, int64_t n, int64_t ch, int64_t ih0,
                       int64_t iw0, double *d)
{
    for (int32_t r = 0; r < a->t; r++)
        for (int32_t s = 0; s < a->t; s++) {
            int64_t ih = ih0 + r, iw = iw0 + s;
            d[r * a->t + s] = (ih < 0 || ih >= q->h || iw < 0 || iw >= q->w)
                                  ? 0.0
                                  : mag_of(x, ((n * q->c + ch) * q->h + ih) * q->w + iw);
        }
}

static void weight_mag(const par_conv_geom *q, const par_rt *w, int64_t o, int64_t ci, double *g9)
{
    int64_t cg = q->c / q->groups;
    for (int32_t k = 0; k < 9; k++) g9[k] = mag_of(w, (o * cg + ci) * 9 + k);
}

double par_winograd_mag(int32_t algo, const par_conv_geom *q, const par_rt *x, const par_rt *w, int64_t n, int64_t o,
                        int64_t oh, int64_t ow, double *mt)
{
    if (algo <= PAR_ALGO_DIRECT || algo >= PAR_ALGO_COUNT) return 0;
    const wg_alg *a = &ALGS[algo];
    const int32_t t = a->t;
    int64_t cg = q->c / q->groups, og = q->o / q->groups, g0 = (o / og) * cg;
    int64_t th = oh / a->m * a->m, tw = ow / a->m * a->m;
    double M[MAX_T * MAX_T] = {0}, u[MAX_T * MAX_T], v[MAX_T * MAX_T], d[MAX_T * MAX_T], g9[9];
    for (int64_t ci = 0; ci < cg; ci++) {
        weight_mag(q, w, o, ci, g9);
        kernel_mag(a, g9, u);
        input_tile(a, q, x, n, g0 + ci, th - q->pt, tw - q->pl, d);
        input_mag(a, d, v);
        for (int32_t k = 0; k < t * t; k++) M[k] += u[k] * v[k];
    }
    int32_t ra = (int32_t)(oh - th), rb = (int32_t)(ow - tw);
    double y = 0;
    for (int32_t i = 0; i < t; i++)
        for (int32_t j = 0; j < t; j++) y += fabs(qv(a->at[ra][i])) * fabs(qv(a->at[rb][j])) * M[i * t + j];
    if (mt) memcpy(mt, M, sizeof(double) * (size_t)(t * t));
    return y;
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
    const wg_alg *a = &ALGS[algo];
    const int32_t m = a->m, t = a->t, tt = t * t;
    const int64_t cg = q->c / q->groups, og = q->o / q->groups;
    const double u = c->prec.u;
    /* Per-node weights of the tile magnitudes: wt[(a*m + b)*tt + i*t + j] = gamma(n(a,b,i,j)) |A^T[a,i]| |A^T[b,j]|,
     * wa the same without gamma; nmax the longest path (for the scale). */
    double wt[MAX_M * MAX_M * MAX_T * MAX_T], wa[MAX_M * MAX_M * MAX_T * MAX_T];
    int32_t nmax = 0, kamax = 0;
    for (int32_t r = 0; r < m; r++) kamax = ka_of(a, r) > kamax ? ka_of(a, r) : kamax;
    for (int32_t ra = 0; ra < m; ra++)
        for (int32_t rb = 0; rb < m; rb++)
            for (int32_t i = 0; i < t; i++)
                for (int32_t j = 0; j < t; j++) {
                    double coef = fabs(qv(a->at[ra][i])) * fabs(qv(a->at[rb][j]));
                    int32_t np = par_winograd_path_roundings(algo, ra, rb, i, j, cg, b != NULL);
                    size_t k = (size_t)((ra * m + rb) * tt + i * t + j);
                    wa[k] = coef;
                    wt[k] = coef * par_gamma(np, u);
                    if (coef > 0 && np > nmax) nmax = np;
                }
    const double gamma_b = par_gamma(kamax + 1, u);
    double *um = malloc(sizeof *um * (size_t)(cg * tt + 1)); /* u~ of every channel of o's group */
    if (!um) return par_msgf(msg, PAR_ERROR, "reference: out of memory");
    double v[MAX_T * MAX_T], d[MAX_T * MAX_T], g9[9], M[MAX_T * MAX_T];
    for (int64_t n = 0; n < q->n; n++)
        for (int64_t o = 0; o < q->o; o++) {
            const int64_t g0 = (o / og) * cg;
            for (int64_t ci = 0; ci < cg; ci++) {
                weight_mag(q, w, o, ci, g9);
                kernel_mag(a, g9, um + ci * tt);
            }
            for (int64_t th = 0; th < q->oh; th += m)
                for (int64_t tw = 0; tw < q->ow; tw += m) {
                    memset(M, 0, sizeof M);
                    for (int64_t ci = 0; ci < cg; ci++) {
                        input_tile(a, q, x, n, g0 + ci, th - q->pt, tw - q->pl, d);
                        input_mag(a, d, v);
                        for (int32_t k = 0; k < tt; k++) M[k] += um[ci * tt + k] * v[k];
                    }
                    for (int32_t ra = 0; ra < m && th + ra < q->oh; ra++)
                        for (int32_t rb = 0; rb < m && tw + rb < q->ow; rb++) {
                            const int64_t oh = th + ra, ow = tw + rb;
                            const double *wk = wt + (size_t)((ra * m + rb) * tt), *ak = wa + (size_t)((ra * m + rb) * tt);
                            double own = 0, mag = 0;
                            for (int32_t k = 0; k < tt; k++) {
                                own += bmul(wk[k], M[k]);
                                mag += bmul(ak[k], M[k]);
                            }
                            /* the value and the propagated budgets: the direct definition (dot.h) */
                            dot_acc acc = {0};
                            for (int64_t ci = 0; ci < cg; ci++)
                                for (int64_t kh = 0; kh < 3; kh++) {
                                    int64_t ih = oh - q->pt + kh;
                                    if (ih < 0 || ih >= q->h) continue;
                                    for (int64_t kw = 0; kw < 3; kw++) {
                                        int64_t iw = ow - q->pl + kw;
                                        if (iw < 0 || iw >= q->w) continue;
                                        dot_add(&acc, w, ((o * cg + ci) * 3 + kh) * 3 + kw, x,
                                                ((n * q->c + g0 + ci) * q->h + ih) * q->w + iw);
                                    }
                                }
                            double val = acc.v, prop = acc.prop, prop2 = acc.prop2;
                            if (b) {
                                double bm = fabs(b->v[o]) + b->e[o], sb = par_rt_scales(b)[o];
                                val += b->v[o];
                                own += bmul(gamma_b, bm);
                                mag += bm;
                                prop += b->e[o];
                                prop2 += bmul(sb, sb);
                            }
                            const int64_t yi = ((n * q->o + o) * q->oh + oh) * q->ow + ow;
                            if (y->s) {
                                /* the scale: at most nmax roundings on any path, each bounded by u times its share
                                 * of mag, root-sum-squared (as dot.h's sqrt(k) u sum |w x|) */
                                double ps = bmul(sqrt((double)nmax) * u, mag) + sqrt(prop2);
                                y->s[yi] = ps + bmul(c->prec.u_store, fabs(val) + ps);
                            }
                            double pre = own + par_prop_bound(prop, prop2);
                            y->v[yi] = val;
                            y->e[yi] = pre + bmul(c->prec.u_store, fabs(val) + pre);
                        }
                }
        }
    free(um);
    return PAR_OK;
}
