/*
 * norm.c - sweep specs of sqrt and rsqrt (positive ranges from tiny to large, and edge values with zeros, signed
 * zeros and negatives), of the reductions sum, amax, amin and prod (every axis set, keepdims both ways, negative
 * axes, edge values for amax and amin, prod on [-1.5, 1.5)), of argmax and argmin (every axis, edge values with ties
 * both ways), and of the normalizations layer_norm (1, 2 and 3 trailing dims, transformer widths),
 * group_norm (1 group, C groups and between), instance_norm (ranks 3 and 4) and rms_norm (1 and 2 trailing dims,
 * Llama-like widths), each with and without weight (and bias, but for rms_norm), two eps values, and inputs
 * centred, offset (mean 5: the variance's cancellation) or of small spread (the variance far below eps).
 *
 * It must not hold any op's semantics; the ops' rules are in docs/ops.md.
 */
#include "sweep_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * sqrt, rsqrt
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct sqrt_pt {
    int rs, rank, d[4], range;
} sqrt_pt;

/* Input ranges: positive unit-ish values, tiny normal numbers, large numbers, edge values (+-0, negatives: NaN). */
static const struct {
    const char *name;
    double lo, hi;
    int edge;
} SQ_RANGE[] = {{"pos", 0.0, 4.0, 0}, {"tiny", 1e-30, 1e-28, 0}, {"large", 1e20, 1e30, 0}, {"edge", 0.0, 4.0, 1}};

void par_sweep_sqrt(par_sweep *s)
{
    static const int SH[][5] = {{1, 1}, {1, 7}, {1, 8}, {1, 17}, {2, 5, 31}, {4, 2, 3, 5, 7},
                                {1, 16}, {1, 33}, {1, 1000}, {4, 1, 16, 8, 8}};
    enum { SQQ = 6, SQN = 10 };
    grid gr;
    grid_init(&gr, s, sizeof(sqrt_pt));
    for (int rs = 0; rs < 2; rs++)
        for (int sh = 0; sh < SQN; sh++)
            for (int r = 0; r < 4; r++) {
                sqrt_pt p;
                memset(&p, 0, sizeof p);
                p.rs = rs; p.range = r; p.rank = SH[sh][0];
                int64_t xd[4];
                for (int i = 0; i < p.rank; i++) p.d[i] = SH[sh][1 + i], xd[i] = p.d[i];
                int quick = sh < SQQ && (r == 0 || sh == 2 || sh == 4);
                if (!grid_take(&gr, &p, quick, su_numel(p.rank, xd), 0)) continue;
                const char *op = rs ? "rsqrt" : "sqrt";
                char xs[64];
                su_shape(xs, sizeof xs, p.rank, xd);
                par_case *c = par_sweep_case(s, op, "%s(x=%s,x=%s)", op, xs, SQ_RANGE[r].name);
                if (!c) continue;
                par_gen gx = SQ_RANGE[r].edge ? su_edge(SQ_RANGE[r].hi) : su_uniform(SQ_RANGE[r].lo, SQ_RANGE[r].hi);
                int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, gx);
                par_out_spec o = {"y", 0, 0.0f, 0};
                par_case_output(c, par_case_node(c, op, 1, &x, 0, NULL, &o));
                par_sweep_done(s, c);
            }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * sum, amax, amin
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct red_pt {
    int amax, rank, d[4], naxes, axes[4], keep, edge; /* amax: 0 sum, 1 amax, 2 amin, 3 prod */
} red_pt;

static void red_emit(grid *gr, red_pt p, int quick)
{
    int64_t xd[4], ax[4];
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    for (int i = 0; i < p.naxes; i++) ax[i] = p.axes[i];
    if (!grid_take(gr, &p, quick, su_numel(p.rank, xd), su_numel(p.rank, xd))) return;
    static const char *const RED_OP[4] = {"sum", "amax", "amin", "prod"};
    const char *op = RED_OP[p.amax];
    char xs[64], as[64];
    su_shape(xs, sizeof xs, p.rank, xd);
    su_shape(as, sizeof as, p.naxes, ax);
    par_case *c = par_sweep_case(gr->s, op, "%s(x=%s,axes=%s,keepdims=%d%s)", op, xs, as, p.keep,
                                 p.edge ? ",x=edge" : "");
    if (!c) return;
    par_attr at[2] = {par_a_ints("axes", p.naxes, ax), par_a_int("keepdims", p.keep)};
    /* prod: [-1.5, 1.5), factors on both sides of 1, so that a long product neither only shrinks nor overflows */
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd,
                               p.edge ? su_edge(1.0) : p.amax == 3 ? su_uniform(-1.5, 1.5) : su_uniform(-1.0, 1.0));
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, op, 1, &x, 2, at, &o));
    par_sweep_done(gr->s, c);
}

void par_sweep_reduce(par_sweep *s)
{
    static const int RSH[][5] = {{1, 7}, {2, 4, 9}, {3, 2, 3, 5}, {4, 2, 3, 4, 5},
                                 {1, 1000}, {2, 33, 17}, {3, 8, 1, 31}, {4, 2, 32, 14, 14}};
    enum { RQ = 4, RN = 8 };
    grid gr;
    grid_init(&gr, s, sizeof(red_pt));
    for (int amax = 0; amax < 4; amax++)
        for (int sh = 0; sh < RN; sh++) {
            int r = RSH[sh][0];
            /* every non-empty subset of the axes, keepdims both ways, the last axis alone also spelled -1 */
            for (int mask = 1; mask < (1 << r); mask++)
                for (int keep = 0; keep < 2; keep++)
                    for (int neg = 0; neg < 2; neg++) {
                        red_pt p;
                        memset(&p, 0, sizeof p);
                        p.amax = amax; p.rank = r; p.keep = keep;
                        for (int i = 0; i < r; i++) p.d[i] = RSH[sh][1 + i];
                        if (neg && mask != (1 << (r - 1))) continue;
                        for (int i = 0; i < r; i++)
                            if (mask >> i & 1) p.axes[p.naxes++] = neg ? i - r : i;
                        /* quick: single axes, the trailing pair, all axes; keepdims alternating with the mask */
                        int all = mask == (1 << r) - 1, pair = r >= 2 && mask == (3 << (r - 2));
                        int q = sh < RQ && (p.naxes == 1 || pair || all) && keep == (mask & 1) && (!neg || r == 1);
                        red_emit(&gr, p, q);
                        /* amax and amin on edge values (signed zeros, ties, equal extrema): the selection must be
                         * exact */
                        if ((amax == 1 || amax == 2) && (all || (p.naxes == 1 && keep)) && !neg) {
                            p.edge = 1;
                            red_emit(&gr, p, sh < RQ && all && keep);
                        }
                    }
        }
    grid_free(&gr);
}

/* argmax and argmin: every axis of ranks 1 to 4 (also spelled negative), keepdims both ways; edge values (equal
 * extrema, signed zeros) with the first and the last of equal elements. */
typedef struct arg_pt {
    int op, rank, d[4], axis, keep, edge, last;
} arg_pt;

void par_sweep_arg(par_sweep *s)
{
    static const int ASH[][5] = {{1, 7}, {2, 4, 9}, {3, 2, 3, 5}, {4, 2, 3, 4, 5}, {1, 1000}, {2, 33, 17},
                                 {4, 2, 32, 14, 14}};
    enum { AQ = 4, AN = 7 };
    grid gr;
    grid_init(&gr, s, sizeof(arg_pt));
    for (int op = 0; op < 2; op++)
        for (int sh = 0; sh < AN; sh++)
            for (int ax = -ASH[sh][0]; ax < ASH[sh][0]; ax++)
                for (int v = 0; v < 6; v++) {
                    arg_pt p;
                    memset(&p, 0, sizeof p);
                    p.op = op, p.rank = ASH[sh][0], p.axis = ax, p.keep = v & 1, p.edge = v >= 2, p.last = v >= 4;
                    int64_t xd[4];
                    for (int i = 0; i < p.rank; i++) p.d[i] = ASH[sh][1 + i], xd[i] = p.d[i];
                    /* quick: each axis once (the last also as -1), keepdims with the axis's parity; edge values on
                     * the last axis, first and last of equal ones */
                    int quick = sh < AQ && (ax >= 0 || ax == -1) && p.keep == ((ax & 1) != 0) &&
                                (!p.edge || ax == p.rank - 1);
                    if (ax < 0 && ax != -1 && !(sh < AQ)) continue;
                    if (!grid_take(&gr, &p, quick, su_numel(p.rank, xd), 0)) continue;
                    const char *name = op ? "argmin" : "argmax";
                    char xs[64];
                    su_shape(xs, sizeof xs, p.rank, xd);
                    par_case *c = par_sweep_case(s, name, "%s(x=%s,axis=%d,keepdims=%d%s%s)", name, xs, ax, p.keep,
                                                 p.edge ? ",x=edge" : "", p.last ? ",select_last=1" : "");
                    if (!c) continue;
                    par_attr at[3] = {par_a_int("axis", ax), par_a_int("keepdims", p.keep),
                                      par_a_int("select_last", p.last)};
                    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd,
                                               p.edge ? su_edge(1.0) : su_uniform(-1.0, 1.0));
                    par_out_spec o = {"y", 0, 0.0f, 0};
                    par_case_output(c, par_case_node(c, name, 1, &x, 3, at, &o));
                    par_sweep_done(s, c);
                }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * layer_norm, group_norm, instance_norm
 * ------------------------------------------------------------------------------------------------------------- */
enum { N_LAYER, N_GROUP, N_INSTANCE, N_RMS };
static const char *const NORM_OP[4] = {"layer_norm", "group_norm", "instance_norm", "rms_norm"};

typedef struct norm_pt {
    int op, rank, d[4], k; /* k: layer_norm's normalized dims; group_norm's num_groups */
    int affine, data, eps;
} norm_pt;

/* affine: 0 none, 1 weight and bias (rms_norm: its weight), 2 weight only, 3 bias only (weight absent: input 1 is
 * -1). data: the input distribution. */
static const char *const AFFINE[4] = {"none", "wb", "w", "b"};
static const struct {
    const char *name;
    double lo, hi;
} NDATA[3] = {{"unit", -1.0, 1.0}, {"offset", 4.0, 6.0}, {"small", -1e-3, 1e-3}};
static const double NEPS[2] = {1e-5, 0.1};

static void norm_emit(grid *gr, norm_pt p, int quick)
{
    int64_t xd[4];
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    if (!grid_take(gr, &p, quick, su_numel(p.rank, xd), 0)) return;
    char xs[64], extra[48] = "";
    su_shape(xs, sizeof xs, p.rank, xd);
    const int rms = p.op == N_RMS;
    if (p.op == N_LAYER || rms) snprintf(extra, sizeof extra, ",dims=%d", p.k);
    if (p.op == N_GROUP) snprintf(extra, sizeof extra, ",groups=%d", p.k);
    par_case *c = par_sweep_case(gr->s, NORM_OP[p.op], "%s(x=%s%s,affine=%s,x=%s,eps=%g)", NORM_OP[p.op], xs, extra,
                                 rms ? AFFINE[p.affine ? 2 : 0] : AFFINE[p.affine], NDATA[p.data].name, NEPS[p.eps]);
    if (!c) return;
    int64_t wd[4];
    int32_t wr = 1;
    par_attr at[2];
    int32_t na = 0;
    if (p.op == N_LAYER || rms) {
        wr = p.k;
        for (int i = 0; i < p.k; i++) wd[i] = xd[p.rank - p.k + i];
        at[na++] = par_a_ints("normalized_shape", p.k, wd);
    } else {
        wd[0] = xd[1];
        if (p.op == N_GROUP) at[na++] = par_a_int("num_groups", p.k);
    }
    at[na++] = par_a_float("eps", NEPS[p.eps]);
    int32_t in[3], n_in = 1;
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(NDATA[p.data].lo, NDATA[p.data].hi));
    if (p.affine)
        in[n_in++] = p.affine == 3 ? -1 : par_case_const(c, "weight", PAR_DTYPE_F32, wr, wd, su_uniform(0.5, 1.5));
    if (!rms && (p.affine == 1 || p.affine == 3))
        in[n_in++] = par_case_const(c, "bias", PAR_DTYPE_F32, wr, wd, su_uniform(-0.5, 0.5));
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, NORM_OP[p.op], n_in, in, na, at, &o));
    par_sweep_done(gr->s, c);
}

/* One shape of one norm with its k; quick: the defaults (weight and bias, unit data, eps 1e-5), and on the `few`
 * shapes each other affine form, data distribution and eps; full: no affine and weight with bias on every data
 * distribution, weight only and bias only on centred data, and eps 0.1 with weight and bias on the unit and small
 * data. */
static void norm_shape(grid *gr, int op, int rank, const int *d, int k, int in_quick, int few)
{
    for (int a = 0; a < 4; a++)
        for (int dt = 0; dt < 3; dt++)
            for (int e = 0; e < 2; e++) {
                if (e && (a != 1 || dt == 1)) continue;
                if (a >= 2 && dt != 0) continue; /* weight only and bias only: on centred data */
                if (a >= 2 && op == N_RMS) continue; /* rms_norm: with its weight (a = 1) or without */
                norm_pt p;
                memset(&p, 0, sizeof p);
                p.op = op; p.rank = rank; p.k = k; p.affine = a; p.data = dt; p.eps = e;
                for (int i = 0; i < rank; i++) p.d[i] = d[i];
                int changed = (a != 1) + (dt != 0) + e;
                norm_emit(gr, p, in_quick && (changed == 0 || (few && changed == 1)));
            }
}

void par_sweep_norm(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(norm_pt));
    /* layer_norm: {rank, dims..., k}; transformer rows [1,7,64] and [2,16,96], odd widths, 1-3 trailing dims */
    static const int LN[][6] = {{3, 1, 7, 64, 0, 1}, {3, 2, 16, 96, 0, 1}, {2, 4, 33, 0, 0, 1}, {3, 2, 5, 7, 0, 1},
                                {3, 2, 5, 7, 0, 2},  {3, 2, 5, 7, 0, 3},   {4, 2, 3, 8, 9, 2}, {2, 3, 1, 0, 0, 1},
                                {2, 8, 1000, 0, 0, 1}, {3, 1, 49, 768, 0, 1}, {4, 2, 3, 8, 9, 3}, {3, 2, 17, 15, 0, 2}};
    enum { LNQ = 8 };
    for (int i = 0; i < (int)(sizeof LN / sizeof LN[0]); i++)
        norm_shape(&gr, N_LAYER, LN[i][0], &LN[i][1], LN[i][5], i < LNQ, i == 0 || i == 4);
    /* group_norm: {rank, dims..., groups}: 1 group, C groups, and between */
    static const int GN[][6] = {{4, 1, 6, 5, 5, 2}, {4, 1, 6, 5, 5, 3}, {4, 1, 6, 5, 5, 1}, {4, 1, 6, 5, 5, 6},
                                {3, 2, 32, 9, 0, 8}, {4, 2, 32, 7, 7, 8}, {3, 2, 4, 17, 0, 2},
                                {4, 2, 32, 7, 7, 1}, {4, 2, 32, 7, 7, 32}, {3, 2, 6, 33, 0, 3}, {4, 1, 64, 14, 14, 16},
                                {3, 1, 12, 100, 0, 4}};
    enum { GNQ = 7 };
    for (int i = 0; i < (int)(sizeof GN / sizeof GN[0]); i++)
        norm_shape(&gr, N_GROUP, GN[i][0], &GN[i][1], GN[i][5], i < GNQ, i == 0 || i == 4);
    /* instance_norm, ranks 3 and 4 */
    static const int IN[][5] = {{3, 2, 5, 17}, {4, 1, 3, 7, 7}, {4, 2, 16, 8, 8}, {3, 1, 8, 33}, {4, 1, 32, 14, 14},
                                {3, 2, 3, 2}};
    enum { INQ = 4 };
    for (int i = 0; i < (int)(sizeof IN / sizeof IN[0]); i++)
        norm_shape(&gr, N_INSTANCE, IN[i][0], &IN[i][1], 0, i < INQ, i == 1);
    /* rms_norm: {rank, dims..., k}; Llama-like rows (head dim 64, widths 96 and 256), odd widths, 2 trailing dims */
    static const int RN[][6] = {{3, 1, 7, 64, 0, 1}, {3, 2, 16, 96, 0, 1}, {2, 4, 33, 0, 0, 1}, {3, 2, 5, 7, 0, 2},
                                {3, 1, 32, 256, 0, 1}, {2, 8, 1000, 0, 0, 1}, {4, 2, 3, 8, 9, 2}, {2, 3, 1, 0, 0, 1}};
    enum { RNQ = 4 };
    for (int i = 0; i < (int)(sizeof RN / sizeof RN[0]); i++)
        norm_shape(&gr, N_RMS, RN[i][0], &RN[i][1], RN[i][5], i < RNQ, i == 0 || i == 3);
    grid_free(&gr);
}
