/*
 * select.c - sweep spec of the selection ops: where (cond, a and b broadcast in every way: equal shapes, each one a
 * scalar, each one missing leading dimensions, size-1 dimensions on each side), masked_fill (masks broadcast to x's
 * shape from every rank, fill values exact, inexact and infinite), gather (every axis, negative too, index tensors of
 * rank 0 to 2, repeated indices) and embedding (tables [V, D] with V up to 3000 in full). Masks come all true, all
 * false, half true and sparse (about 1 in 11 true); values are uniform or edge values (the ops are exact).
 *
 * It must not encode expected results; it only describes cases.
 */
#include "sweep_util.h"

enum { MASK_RANDOM, MASK_TRUE, MASK_FALSE, MASK_SPARSE, MASK_N };
static const char *const MASK_NAMES[MASK_N] = {"random", "true", "false", "sparse"};

static par_gen mask_gen(int kind)
{
    switch (kind) {
    case MASK_TRUE: return (par_gen){.dist = PAR_DIST_CONST, .a = 1, .b = 0};
    case MASK_FALSE: return (par_gen){.dist = PAR_DIST_CONST, .a = 0, .b = 0};
    /* normal(0, 0.37) rounded and saturated to [0, 1]: true when the draw exceeds 0.5, P(z > 1.35) ~ 0.09 */
    case MASK_SPARSE: return (par_gen){.dist = PAR_DIST_NORMAL, .a = 0, .b = 0.37};
    default: return (par_gen){.dist = PAR_DIST_UNIFORM, .a = 0, .b = 1};
    }
}

/* A grid point: op, three shapes (rank + dims), mask kind, edge values, one parameter (fill value / axis). */
typedef struct sel_pt {
    int op, r[3], d[3][4], mask, edge, param;
} sel_pt;

enum { OP_WHERE, OP_MASKED_FILL, OP_GATHER, OP_EMBEDDING };
static const char *const SEL_OPS[4] = {"where", "masked_fill", "gather", "embedding"};
static const double FILL_VALUES[5] = {0.0, -1e9, 0.1, 3.5, -INFINITY};

static void dims_of(const sel_pt *p, int i, int64_t *d)
{
    for (int k = 0; k < p->r[i]; k++) d[k] = p->d[i][k];
}

static void sel_emit(grid *gr, sel_pt p, int quick)
{
    int64_t d[3][4], big = 0;
    char s[3][64];
    int n_in = p.op == OP_WHERE ? 3 : 2;
    for (int i = 0; i < n_in; i++) {
        dims_of(&p, i, d[i]);
        su_shape(s[i], sizeof s[i], p.r[i], d[i]);
        big = su_max64(big, su_numel(p.r[i], d[i]));
    }
    /* the output's size: the broadcast (where), x (masked_fill), gathered rows */
    if (p.op == OP_WHERE) {
        int64_t n = 1;
        for (int k = 1; k <= 4; k++) {
            int64_t m = 1;
            for (int i = 0; i < 3; i++)
                if (p.r[i] - k >= 0 && d[i][p.r[i] - k] > m) m = d[i][p.r[i] - k];
            n *= m;
        }
        big = su_max64(big, n);
    } else if (p.op == OP_GATHER) {
        int ax = p.param < 0 ? p.param + p.r[0] : p.param;
        big = su_max64(big, su_numel(p.r[0], d[0]) / d[0][ax] * su_numel(p.r[1], d[1]));
    } else if (p.op == OP_EMBEDDING) {
        big = su_max64(big, su_numel(p.r[0], d[0]) * d[1][1]);
    }
    if (!grid_take(gr, &p, quick, big, 0)) return;
    const char *op = SEL_OPS[p.op];
    char args[256], tail[48] = "";
    switch (p.op) {
    case OP_WHERE: snprintf(args, sizeof args, "cond=%s,a=%s,b=%s,mask=%s", s[0], s[1], s[2], MASK_NAMES[p.mask]); break;
    case OP_MASKED_FILL:
        snprintf(args, sizeof args, "x=%s,mask=%s,value=%g,fill=%s", s[0], s[1], FILL_VALUES[p.param],
                 MASK_NAMES[p.mask]);
        break;
    case OP_GATHER: snprintf(args, sizeof args, "x=%s,indices=%s,axis=%d", s[0], s[1], p.param); break;
    default: snprintf(args, sizeof args, "indices=%s,weight=%s", s[0], s[1]); break;
    }
    if (p.edge) snprintf(tail, sizeof tail, ",x=edge");
    par_case *c = par_sweep_case(gr->s, op, "%s(%s%s)", op, args, tail);
    if (!c) return;
    par_gen vals = p.edge ? su_edge(8.0) : su_uniform(-1.0, 1.0);
    int32_t in[3];
    par_attr at[1];
    int na = 0;
    switch (p.op) {
    case OP_WHERE:
        in[0] = par_case_input(c, "cond", PAR_DTYPE_BOOL, p.r[0], d[0], mask_gen(p.mask));
        in[1] = par_case_input(c, "a", PAR_DTYPE_F32, p.r[1], d[1], vals);
        /* b in a range apart from a's, so that a wrong choice is never close */
        in[2] = par_case_input(c, "b", PAR_DTYPE_F32, p.r[2], d[2], p.edge ? vals : su_uniform(2.0, 3.0));
        break;
    case OP_MASKED_FILL:
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.r[0], d[0], vals);
        in[1] = par_case_input(c, "mask", PAR_DTYPE_BOOL, p.r[1], d[1], mask_gen(p.mask));
        at[na++] = par_a_float("value", FILL_VALUES[p.param]);
        break;
    case OP_GATHER: {
        int ax = p.param < 0 ? p.param + p.r[0] : p.param;
        in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.r[0], d[0], vals);
        /* indices uniform in [0, n - 1]: with more indices than rows they repeat */
        in[1] = par_case_input(c, "indices", PAR_DTYPE_I32, p.r[1], d[1], su_uniform(0, (double)(d[0][ax] - 1)));
        at[na++] = par_a_int("axis", p.param);
        break;
    }
    default:
        in[0] = par_case_input(c, "indices", PAR_DTYPE_I32, p.r[0], d[0], su_uniform(0, (double)(d[1][0] - 1)));
        in[1] = par_case_input(c, "weight", PAR_DTYPE_F32, 2, d[1], p.edge ? vals : su_weight());
        break;
    }
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, op, n_in, in, na, at, &o));
    par_sweep_done(gr->s, c);
}

static void set_shape(sel_pt *p, int i, const int *s)
{
    p->r[i] = s[0];
    for (int k = 0; k < s[0]; k++) p->d[i][k] = s[1 + k];
}

/* where: {cond, a, b} shapes, each row "rank, dims...". The first WQ rows are quick. */
static const int WSH[][3][5] = {
    {{3, 2, 3, 4}, {3, 2, 3, 4}, {3, 2, 3, 4}},       /* equal */
    {{3, 2, 3, 4}, {1, 4}, {0}},                      /* a missing leading dims, b a scalar */
    {{2, 3, 1}, {2, 1, 4}, {2, 3, 4}},                /* size-1 dims on cond and a */
    {{1, 1}, {3, 2, 3, 4}, {3, 2, 1, 4}},             /* cond one element, b size 1 in the middle */
    {{0}, {2, 5, 6}, {2, 5, 1}},                      /* cond a scalar */
    {{2, 5, 6}, {0}, {0}},                            /* a and b scalars */
    {{4, 2, 1, 1, 5}, {3, 3, 1, 1}, {3, 1, 4, 5}},    /* every input broadcast on some dim */
    {{4, 1, 1, 8, 8}, {4, 2, 4, 8, 8}, {4, 2, 4, 8, 8}}, /* an attention-style mask */
    {{3, 4, 16, 33}, {3, 4, 16, 33}, {3, 4, 16, 33}},
    {{2, 64, 1}, {3, 2, 64, 64}, {1, 64}},
    {{4, 1, 12, 64, 64}, {4, 1, 12, 64, 64}, {0}},
};
enum { WQ = 7, WN = 11 };

/* masked_fill: {x, mask} shapes. */
static const int MSH[][2][5] = {
    {{3, 2, 3, 4}, {3, 2, 3, 4}}, {{3, 2, 3, 4}, {1, 4}},  {{3, 2, 3, 4}, {2, 3, 1}}, {{3, 2, 3, 4}, {0}},
    {{4, 2, 4, 7, 7}, {2, 7, 7}}, {{4, 2, 4, 7, 7}, {4, 2, 1, 1, 7}}, {{1, 9}, {1, 1}},
    {{4, 1, 12, 64, 64}, {4, 1, 1, 64, 64}}, {{3, 8, 16, 33}, {3, 8, 16, 33}},
};
enum { MQ = 7, MN = 9 };

/* gather: x shapes and index shapes (rank 0 to 2). */
static const int GX[][5] = {{1, 5}, {2, 4, 6}, {3, 3, 5, 7}, {4, 2, 3, 4, 5}, {2, 1000, 16}, {3, 4, 300, 9}};
enum { GXQ = 4, GXN = 6 };
static const int GI[][3] = {{0}, {1, 3}, {1, 12}, {2, 2, 4}, {2, 1, 1}};
enum { GIQ = 4, GIN = 5 };

/* embedding: tables [V, D] and index shapes. */
static const int EW[][2] = {{10, 4}, {100, 16}, {7, 1}, {1000, 64}, {3000, 32}, {2500, 128}};
enum { EWQ = 3, EWN = 6 };
static const int EI[][3] = {{0}, {1, 7}, {2, 2, 5}, {2, 4, 16}};

void par_sweep_select(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(sel_pt));
    for (int i = 0; i < WN; i++)
        for (int m = 0; m < MASK_N; m++)
            for (int e = 0; e < 2; e++) {
                sel_pt p;
                memset(&p, 0, sizeof p);
                p.op = OP_WHERE; p.mask = m; p.edge = e;
                for (int k = 0; k < 3; k++) set_shape(&p, k, WSH[i][k]);
                sel_emit(&gr, p, i < WQ && (m == MASK_RANDOM || i < 2) && (!e || m == MASK_RANDOM));
            }
    for (int i = 0; i < MN; i++)
        for (int m = 0; m < MASK_N; m++)
            for (int v = 0; v < 5; v++) {
                sel_pt p;
                memset(&p, 0, sizeof p);
                p.op = OP_MASKED_FILL; p.mask = m; p.param = v;
                for (int k = 0; k < 2; k++) set_shape(&p, k, MSH[i][k]);
                sel_emit(&gr, p, i < MQ && (m == MASK_RANDOM || i == 0) && (v == 0 || v == 4 || i < 2));
                if (m == MASK_RANDOM && v == 2) {
                    p.edge = 1;
                    sel_emit(&gr, p, i < 2);
                }
            }
    for (int i = 0; i < GXN; i++)
        for (int ax = -1; ax < GX[i][0]; ax++)
            for (int j = 0; j < GIN; j++) {
                sel_pt p;
                memset(&p, 0, sizeof p);
                p.op = OP_GATHER; p.param = ax;
                set_shape(&p, 0, GX[i]);
                set_shape(&p, 1, GI[j]);
                sel_emit(&gr, p, i < GXQ && j < GIQ && (ax >= 0 || j == 1));
            }
    for (int i = 0; i < EWN; i++)
        for (int j = 0; j < 4; j++)
            for (int e = 0; e < 2; e++) {
                sel_pt p;
                memset(&p, 0, sizeof p);
                p.op = OP_EMBEDDING; p.edge = e;
                set_shape(&p, 0, EI[j]);
                p.r[1] = 2; p.d[1][0] = EW[i][0]; p.d[1][1] = EW[i][1];
                sel_emit(&gr, p, i < EWQ && (!e || j == 2));
            }
    grid_free(&gr);
}

/* ------------------------------------------------------------------------------------------------------------- */
/* Decision ops: eq, gt, lt, ge, le on f32 (broadcast every way), the logic ops on bool, and decisions followed by
 * where / masked_fill. Values: independent uniforms; edge values on both sides (ties, +-0, +-1, tiny numbers);
 * op(x, x) (every element a tie); near ties: x against add(x, d) with |d| <= 2^-23, a computed value within an ulp
 * of x whose budget makes most decisions ambiguous (docs/oracle.md, "Decision ops"). */

enum { DEC_UNIFORM, DEC_EDGE, DEC_SAME, DEC_NEAR, DEC_N };
static const char *const DEC_NAMES[DEC_N] = {"uniform", "edge", "same", "near"};
static const char *const DEC_OPS[] = {"eq", "gt", "lt", "ge", "le", "logical_and", "logical_or", "logical_xor",
                                      "logical_not", "where", "masked_fill"};
enum { DEC_N_CMP = 5, DEC_N_OPS = 11 };

typedef struct dec_pt {
    int op, shape, vals;
} dec_pt;

/* {a, b} shapes */
static const int DSH[][2][5] = {
    {{3, 2, 3, 4}, {3, 2, 3, 4}}, {{3, 2, 3, 4}, {1, 4}}, {{3, 2, 3, 4}, {0}}, {{4, 1, 3, 1, 5}, {4, 2, 1, 4, 5}},
    {{4, 2, 8, 16, 16}, {4, 2, 8, 16, 16}}, {{2, 64, 1}, {3, 2, 64, 64}},
};
enum { DQ = 4, DN = 6 };

/* A float operand pair (a, b) of a comparison under the value mode: b = a for "same", b = add(a, d) for "near". */
static void dec_floats(par_case *c, const char *an, const char *bn, const int *sa, const int *sb, int vals,
                       int32_t *a, int32_t *b)
{
    int64_t da[4], db[4];
    for (int k = 0; k < sa[0]; k++) da[k] = sa[1 + k];
    for (int k = 0; k < sb[0]; k++) db[k] = sb[1 + k];
    par_gen g = vals == DEC_EDGE ? su_edge(8.0) : su_uniform(-1.0, 1.0);
    *a = par_case_input(c, an, PAR_DTYPE_F32, sa[0], da, g);
    if (vals == DEC_SAME) {
        *b = *a;
    } else if (vals == DEC_NEAR) {
        char dn[32], sn[32];
        snprintf(dn, sizeof dn, "%s_d", bn);
        snprintf(sn, sizeof sn, "%s_near", bn);
        /* a's dims for d so that add(a, d) keeps a's shape; near-ties need a and b element by element */
        int32_t in[2] = {*a, par_case_input(c, dn, PAR_DTYPE_F32, sa[0], da, su_uniform(-0x1p-23, 0x1p-23))};
        par_out_spec o = {sn, 0, 0.0f, 0};
        *b = par_case_node(c, "add", 2, in, 0, NULL, &o);
    } else {
        *b = par_case_input(c, bn, PAR_DTYPE_F32, sb[0], db, g);
    }
}

static void dec_emit(grid *gr, dec_pt p, int quick)
{
    const int *sa = DSH[p.shape][0], *sb = DSH[p.shape][1];
    int64_t big = 1;
    for (int k = 1; k <= 4; k++) {
        int ia = sa[0] - k, ib = sb[0] - k;
        int64_t m = 1;
        if (ia >= 0 && sa[1 + ia] > m) m = sa[1 + ia];
        if (ib >= 0 && sb[1 + ib] > m) m = sb[1 + ib];
        big *= m;
    }
    if (!grid_take(gr, &p, quick, big, 0)) return;
    const char *op = DEC_OPS[p.op];
    char s0[64], s1[64];
    int64_t da[4], db[4];
    for (int k = 0; k < sa[0]; k++) da[k] = sa[1 + k];
    for (int k = 0; k < sb[0]; k++) db[k] = sb[1 + k];
    su_shape(s0, sizeof s0, sa[0], da);
    su_shape(s1, sizeof s1, sb[0], db);
    par_case *c = par_sweep_case(gr->s, op, "%s(a=%s,b=%s,values=%s)", op, s0, p.vals >= DEC_SAME ? s0 : s1,
                                 DEC_NAMES[p.vals]);
    if (!c) return;
    int32_t in[3], y;
    par_out_spec o = {"y", 0, 0.0f, 0};
    if (p.op < DEC_N_CMP) {
        dec_floats(c, "a", "b", sa, sb, p.vals, &in[0], &in[1]);
        y = par_case_node(c, op, 2, in, 0, NULL, &o);
    } else if (p.op < DEC_N_OPS - 2) {
        /* bool operands: random masks, or (near) decisions of near ties, ambiguous where the add's budget reaches */
        const int n_in = p.op == DEC_N_OPS - 3 ? 1 : 2;
        for (int i = 0; i < n_in; i++) {
            const int *si = i ? sb : sa;
            int64_t di[4];
            for (int k = 0; k < si[0]; k++) di[k] = si[1 + k];
            char nm[8] = {(char)('p' + i), 0};
            if (p.vals == DEC_NEAR) {
                char xn[8] = {'u', (char)('0' + i), 0}, zn[8] = {'v', (char)('0' + i), 0};
                int32_t ab[2];
                dec_floats(c, xn, zn, si, si, DEC_NEAR, &ab[0], &ab[1]);
                par_out_spec co = {nm, 0, 0.0f, 0};
                in[i] = par_case_node(c, i ? "lt" : "ge", 2, ab, 0, NULL, &co);
            } else {
                in[i] = par_case_input(c, nm, PAR_DTYPE_BOOL, si[0], di, mask_gen(p.vals == DEC_EDGE ? MASK_SPARSE
                                                                                                     : MASK_RANDOM));
            }
        }
        y = par_case_node(c, op, n_in, in, 0, NULL, &o);
    } else {
        /* a decision followed by a selection: cond = le(a, b) (near: le(a, add(a, d))), branches x and w apart */
        int32_t ab[2];
        dec_floats(c, "a", "b", sa, sb, p.vals, &ab[0], &ab[1]);
        par_out_spec co = {"cond", 0, 0.0f, 0};
        int32_t cond = par_case_node(c, "le", 2, ab, 0, NULL, &co);
        /* x and w take the condition's shape, the broadcast of a's and b's (a's alone for near ties) */
        int64_t dx[4];
        const int rx = p.vals == DEC_NEAR || sa[0] >= sb[0] ? sa[0] : sb[0];
        for (int k = 0; k < rx; k++) {
            int ia = sa[0] - rx + k, ib = sb[0] - rx + k;
            int64_t ma = ia >= 0 ? sa[1 + ia] : 1, mb = ib >= 0 && p.vals != DEC_NEAR ? sb[1 + ib] : 1;
            dx[k] = ma > mb ? ma : mb;
        }
        const int sx[1] = {rx};
        if (p.op == DEC_N_OPS - 2) {
            in[0] = cond;
            in[1] = par_case_input(c, "x", PAR_DTYPE_F32, sx[0], dx, su_uniform(-1.0, 1.0));
            in[2] = par_case_input(c, "w", PAR_DTYPE_F32, sx[0], dx, su_uniform(2.0, 3.0));
            y = par_case_node(c, "where", 3, in, 0, NULL, &o);
        } else {
            par_attr at = par_a_float("value", -1e9);
            in[0] = par_case_input(c, "x", PAR_DTYPE_F32, sx[0], dx, su_uniform(-1.0, 1.0));
            in[1] = cond;
            y = par_case_node(c, "masked_fill", 2, in, 1, &at, &o);
        }
    }
    par_case_output(c, y);
    par_sweep_done(gr->s, c);
}

void par_sweep_compare(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(dec_pt));
    for (int op = 0; op < DEC_N_OPS; op++)
        for (int i = 0; i < DN; i++)
            for (int v = 0; v < DEC_N; v++) {
                dec_pt p = {op, i, v};
                /* same: one operand; logic ops: no "same" (a bool input against itself adds nothing) */
                if (v == DEC_SAME && op >= DEC_N_CMP) continue;
                /* same, near: b is a or a computed from a, so the rows differing only in b's shape are one case */
                if (v >= DEC_SAME && (i == 1 || i == 2)) continue;
                dec_emit(&gr, p, i < DQ && (v == DEC_UNIFORM || i == 0));
            }
    grid_free(&gr);
}
