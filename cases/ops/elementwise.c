/*
 * elementwise.c - sweep specs of the binary ops (add, sub, mul, div, minimum, maximum, pow: every kind of
 * broadcasting: equal shapes, scalar-like [1] on either side, rank differences, size-1 dims on either side,
 * per-channel [C,1,1]) and of every unary activation (relu, relu6, hardtanh, clamp, leaky_relu, prelu, sigmoid, tanh,
 * hardsigmoid, hardswish, elu, silu, gelu) and unary math op (abs, neg, exp, log, floor, ceil, round, reciprocal,
 * sign, softplus, softsign, erf, sin, cos) over lengths below, at and above the vector widths, with their attributes,
 * edge values for the exact ones, and quantize -> op -> dequantize graphs for the ops that have a quantized form.
 *
 * It must not encode expected results. Divisors are kept away from zero (|b| in [0.5, 2], random sign) so that the
 * division's sensitivity, and with it the error budget, stays bounded; pow's bases likewise (in [0.5, 2)).
 */
#include "sweep_util.h"

#include "core/prng.h"
#include "act_table.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Binary ops
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct bin_pt {
    int op, ra, rb, a[4], b[4], dt;
    int var; /* 1: minimum / maximum on edge values (equal operands, signed zeros); pow with a negative base and the
              * integer exponent 3 */
} bin_pt;

enum { B_ADD, B_SUB, B_MUL, B_DIV, B_MIN, B_MAX, B_POW, B_N };
static const char *const BIN_OPS[B_N] = {"add", "sub", "mul", "div", "minimum", "maximum", "pow"};

/* The divisor: |b| uniform in [0.5, 2] with a random sign, from the case seed and the tensor's name. */
static int32_t divisor_input(par_case *c, int rank, const int64_t *dims)
{
    int64_t n = su_numel(rank, dims);
    float *data = malloc((size_t)n * sizeof *data);
    if (!data) {
        c->status = PAR_ERROR;
        par_msgf(&c->err, PAR_ERROR, "input 'b': out of memory");
        return -1;
    }
    par_prng r;
    par_prng_seed(&r, par_hash_str("b", c->seed));
    for (int64_t i = 0; i < n; i++) {
        double m = 0.5 + 1.5 * par_prng_uniform(&r);
        data[i] = (float)(par_prng_next(&r) & 1 ? -m : m);
    }
    int32_t v = par_case_input_data(c, "b", PAR_DTYPE_F32, rank, dims, data);
    free(data);
    return v;
}

static void bin_emit(grid *gr, bin_pt p, int quick)
{
    int64_t ad[4], bd[4], yd[4];
    int ry = p.ra > p.rb ? p.ra : p.rb;
    for (int i = 0; i < p.ra; i++) ad[i] = p.a[i];
    for (int i = 0; i < p.rb; i++) bd[i] = p.b[i];
    for (int i = 0; i < ry; i++) {
        int ia = i - (ry - p.ra), ib = i - (ry - p.rb);
        int64_t x = ia >= 0 ? ad[ia] : 1, y = ib >= 0 ? bd[ib] : 1;
        if (x != y && x != 1 && y != 1) return;
        yd[i] = x > y ? x : y;
    }
    int64_t big = su_max64(su_max64(su_numel(p.ra, ad), su_numel(p.rb, bd)), su_numel(ry, yd));
    if (!grid_take(gr, &p, quick, big, 0)) return;
    const char *op = BIN_OPS[p.op];
    char as[64], bs[64], dts[16] = "";
    su_shape(as, sizeof as, p.ra, ad);
    su_shape(bs, sizeof bs, p.rb, bd);
    if (p.dt) snprintf(dts, sizeof dts, ",dt=%s", su_dt((par_dtype)p.dt));
    if (p.var) snprintf(dts, sizeof dts, p.op == B_POW ? ",b=3" : ",x=edge");
    par_case *c = par_sweep_case(gr->s, op, "%s(a=%s,b=%s%s)", op, as, bs, dts);
    if (!c) return;
    int32_t in[2];
    if (p.dt) {
        /* real inputs in [-1, 1]; the sum lies in [-2, 2], the product in [-1, 1] */
        par_dtype dt = (par_dtype)p.dt;
        in[0] = su_qinput(c, "a", dt, p.ra, ad, -1.0, 1.0);
        in[1] = su_qinput(c, "b", dt, p.rb, bd, -1.0, 1.0);
        double r = p.op == 0 ? 2.0 : 1.0;
        par_out_spec o = su_qout_spec("y_q", dt, -r, r);
        su_qoutput(c, par_case_node(c, op, 2, in, 0, NULL, &o));
    } else {
        /* pow: a base in [0.5, 2) and an exponent in [-3, 3) (results in [1/8, 8]); a negative base in [-2, 2) with the
         * integer exponent 3 (var); minimum and maximum on edge values on both sides (var) */
        par_gen ga = su_uniform(-1.0, 1.0), gb = su_uniform(-1.0, 1.0);
        if (p.op == B_POW) {
            ga = p.var ? su_uniform(-2.0, 2.0) : su_uniform(0.5, 2.0);
            gb = su_uniform(-3.0, 3.0);
            if (p.var) gb = (par_gen){.dist = PAR_DIST_CONST, .a = 3.0};
        } else if (p.var) {
            ga = gb = su_edge(2.0);
        }
        in[0] = par_case_input(c, "a", PAR_DTYPE_F32, p.ra, ad, ga);
        if (p.op == B_DIV)
            in[1] = divisor_input(c, p.rb, bd);
        else
            in[1] = par_case_input(c, "b", PAR_DTYPE_F32, p.rb, bd, gb);
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, op, 2, in, 0, NULL, &o));
    }
    par_sweep_done(gr->s, c);
}

/* Full shapes the broadcast variants derive from; the first BQ are quick. */
static const int BSH[][5] = {
    /* rank, dims */
    {1, 1},  {1, 7},  {1, 16},  {1, 33},  {2, 3, 5},  {2, 4, 17},  {4, 2, 3, 4, 5},  {4, 1, 8, 9, 9},
    {1, 3},  {1, 4},  {1, 8},   {1, 9},   {1, 15},    {1, 17},     {1, 31},         {1, 32},
    {1, 64}, {1, 100}, {1, 1000}, {2, 16, 33}, {3, 2, 7, 9}, {4, 1, 16, 28, 28}, {4, 2, 17, 8, 8}, {4, 4, 32, 16, 16},
};
enum { BQ = 8, BN = 24 };

/* Variant v of b for a full shape a (rank r): 0 equal, 1 [1], 2 the last dim, 3 the last two dims, 4 per-channel
 * [C,1,1] (rank 4), 5 a with its odd dims set to 1, 6 a with its even dims set to 1. Returns b's rank, 0 if the
 * variant does not apply. */
static int bin_variant(int v, int r, const int *a, int *b)
{
    switch (v) {
    case 0: for (int i = 0; i < r; i++) b[i] = a[i]; return r;
    case 1: b[0] = 1; return 1;
    case 2: if (r < 2) return 0; b[0] = a[r - 1]; return 1;
    case 3: if (r < 3) return 0; b[0] = a[r - 2]; b[1] = a[r - 1]; return 2;
    case 4: if (r != 4) return 0; b[0] = a[1]; b[1] = 1; b[2] = 1; return 3;
    case 5: case 6: {
        if (r < 2) return 0;
        for (int i = 0; i < r; i++) b[i] = (i % 2 == (v == 5)) ? 1 : a[i];
        return r;
    }
    default: return 0;
    }
}

void par_sweep_binary(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(bin_pt));
    for (int op = 0; op < B_N; op++)
        for (int sh = 0; sh < BN; sh++)
            for (int v = 0; v < 7; v++)
                for (int swap = 0; swap < 2; swap++) {
                    bin_pt p;
                    memset(&p, 0, sizeof p);
                    p.op = op;
                    int r = BSH[sh][0], full[4], part[4];
                    for (int i = 0; i < r; i++) full[i] = BSH[sh][1 + i];
                    int rp = bin_variant(v, r, full, part);
                    if (!rp || (v == 0 && swap)) continue;
                    p.ra = swap ? rp : r;
                    p.rb = swap ? r : rp;
                    memcpy(p.a, swap ? part : full, sizeof(int) * (size_t)p.ra);
                    memcpy(p.b, swap ? full : part, sizeof(int) * (size_t)p.rb);
                    /* quick: the small shapes, every variant on b's side, and [1] / per-channel also on a's */
                    bin_emit(&gr, p, sh < BQ && (!swap || v == 1 || v == 4 || v == 5));
                }
    /* Size-1 dims on both sides at once, broadcasting to a larger result. */
    static const int BB[][10] = {
        /* ra, a.., rb, b.. */
        {2, 4, 1, 0, 0, 2, 1, 5, 0, 0}, {3, 3, 1, 5, 0, 2, 4, 1, 0, 0}, {4, 1, 3, 1, 5, 4, 2, 1, 4, 1},
        {4, 2, 1, 7, 1, 3, 3, 1, 9, 0}, {3, 1, 16, 1, 0, 3, 8, 1, 17, 0}, {4, 1, 1, 1, 33, 2, 9, 1, 0, 0},
    };
    for (int op = 0; op < B_N; op++)
        for (int i = 0; i < 6; i++) {
            bin_pt p;
            memset(&p, 0, sizeof p);
            p.op = op;
            p.ra = BB[i][0];
            for (int k = 0; k < p.ra; k++) p.a[k] = BB[i][1 + k];
            p.rb = BB[i][5];
            for (int k = 0; k < p.rb; k++) p.b[k] = BB[i][6 + k];
            bin_emit(&gr, p, 1);
        }
    /* minimum / maximum on edge values, pow with a negative base: equal shapes and a per-channel b. */
    static const int BV[][10] = {{1, 33, 0, 0, 0, 1, 33, 0, 0, 0}, {4, 2, 3, 5, 7, 3, 3, 1, 1, 0},
                                 {2, 16, 33, 0, 0, 2, 16, 33, 0, 0}};
    for (int op = B_MIN; op <= B_POW; op++)
        for (int i = 0; i < 3; i++) {
            bin_pt p;
            memset(&p, 0, sizeof p);
            p.op = op;
            p.var = 1;
            p.ra = BV[i][0];
            for (int k = 0; k < p.ra; k++) p.a[k] = BV[i][1 + k];
            p.rb = BV[i][5];
            for (int k = 0; k < p.rb; k++) p.b[k] = BV[i][6 + k];
            bin_emit(&gr, p, i < 2);
        }
    /* Quantized add and mul. */
    static const int QB[][10] = {
        {4, 1, 8, 9, 9, 4, 1, 8, 9, 9}, {1, 33, 0, 0, 0, 1, 1, 0, 0, 0}, {4, 2, 3, 7, 7, 3, 3, 1, 1, 0},
        {2, 4, 17, 0, 0, 2, 4, 17, 0, 0}, {3, 2, 5, 7, 0, 1, 7, 0, 0, 0},
    };
    for (int op = 0; op < 3; op += 2)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < 5; i++) {
                bin_pt p;
                memset(&p, 0, sizeof p);
                p.op = op;
                p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
                p.ra = QB[i][0];
                for (int k = 0; k < p.ra; k++) p.a[k] = QB[i][1 + k];
                p.rb = QB[i][5];
                for (int k = 0; k < p.rb; k++) p.b[k] = QB[i][6 + k];
                bin_emit(&gr, p, i < 3);
            }
    grid_free(&gr);
    par_sweep_hazard(s); /* every family's hazard cases (hazard.c) */
}

/* ---------------------------------------------------------------------------------------------------------------
 * Unary activations
 * ------------------------------------------------------------------------------------------------------------- */
/* The op table's flags of activation op: PAR_OPF_EXACT adds an edge-value variant, PAR_OPF_QUANT_OK the quantized
 * forms. */
static unsigned act_flags(int op)
{
    const par_op_info *info = par_op_find(par_act_table[op].name);
    return info ? info->flags : 0;
}

/* Attribute variants per op (variant 0 = the defaults, attributes absent). */
static int act_n_variants(int op)
{
    switch (par_act_table[op].kind) {
    case ACT_HARDTANH: return 4;
    case ACT_CLAMP: return 5;
    case ACT_LEAKY: return 4;
    case ACT_ELU: return 3;
    case ACT_PRELU: return 2; /* slope [1] or [C] */
    case ACT_GELU: return 2;  /* approximate none, tanh */
    default: return 1;
    }
}

/* Fill the attributes of variant v; returns the count and writes the ID suffix. */
static int act_attrs(int op, int v, par_attr *at, char *suffix, size_t len)
{
    static const double HT[4][2] = {{-1, 1}, {0, 6}, {-0.5, 2}, {-2, -0.25}};
    static const double CL[5][2] = {{-0.5, 1}, {0, INFINITY}, {-INFINITY, 0.5}, {-0.25, 0.75}, {0.5, 0.5}};
    static const double LR[4] = {0.01, 0.2, 0, 1.5};
    static const double EA[3] = {1, 0.5, 2};
    suffix[0] = 0;
    switch (par_act_table[op].kind) {
    case ACT_HARDTANH:
        if (v == 0) return 0;
        snprintf(suffix, len, ",min_val=%g,max_val=%g", HT[v][0], HT[v][1]);
        at[0] = par_a_float("min_val", HT[v][0]);
        at[1] = par_a_float("max_val", HT[v][1]);
        return 2;
    case ACT_CLAMP: {
        int n = 0;
        if (isfinite(CL[v][0])) at[n++] = par_a_float("min", CL[v][0]);
        if (isfinite(CL[v][1])) at[n++] = par_a_float("max", CL[v][1]);
        if (isfinite(CL[v][0]) && isfinite(CL[v][1]))
            snprintf(suffix, len, ",min=%g,max=%g", CL[v][0], CL[v][1]);
        else if (isfinite(CL[v][0]))
            snprintf(suffix, len, ",min=%g", CL[v][0]);
        else
            snprintf(suffix, len, ",max=%g", CL[v][1]);
        return n;
    }
    case ACT_LEAKY:
        if (v == 0) return 0;
        snprintf(suffix, len, ",slope=%g", LR[v]);
        at[0] = par_a_float("negative_slope", LR[v]);
        return 1;
    case ACT_GELU:
        if (v == 0) return 0;
        snprintf(suffix, len, ",approximate=tanh");
        at[0] = par_a_str("approximate", "tanh");
        return 1;
    case ACT_ELU:
        if (v == 0) return 0;
        snprintf(suffix, len, ",alpha=%g", EA[v]);
        at[0] = par_a_float("alpha", EA[v]);
        return 1;
    default: return 0;
    }
}

typedef struct act_pt {
    int op, variant, rank, d[4], edge, dt;
} act_pt;

static void act_emit(grid *gr, act_pt p, int quick)
{
    const act_info *ai = &par_act_table[p.op];
    int64_t xd[4];
    for (int i = 0; i < p.rank; i++) xd[i] = p.d[i];
    if (par_act_table[p.op].kind == ACT_PRELU && p.rank < 2) return;
    if (!grid_take(gr, &p, quick, su_numel(p.rank, xd), 0)) return;
    par_attr at[2];
    char xs[64], suffix[64], extra[32] = "";
    int na = act_attrs(p.op, p.variant, at, suffix, sizeof suffix);
    su_shape(xs, sizeof xs, p.rank, xd);
    if (par_act_table[p.op].kind == ACT_PRELU) snprintf(suffix, sizeof suffix, ",slope=[%lld]", p.variant ? (long long)xd[1] : 1LL);
    if (p.edge) snprintf(extra, sizeof extra, ai->wide > 0 ? ",x=wide" : ",x=edge");
    if (p.dt) snprintf(extra, sizeof extra, ",dt=%s", su_dt((par_dtype)p.dt));
    par_case *c = par_sweep_case(gr->s, ai->name, "%s(x=%s%s%s)", ai->name, xs, suffix, extra);
    if (!c) return;
    int32_t in[2];
    par_out_spec o = {"y", 0, 0.0f, 0};
    if (p.dt) {
        par_dtype dt = (par_dtype)p.dt;
        in[0] = su_qinput(c, "x", dt, p.rank, xd, -ai->range, ai->range);
        /* leaky_relu: the output reaches -range * slope */
        double out_lo = par_act_table[p.op].kind == ACT_LEAKY ? -ai->range * (na ? at[0].f : 0.01) : ai->out_lo;
        par_out_spec qo = su_qout_spec("y_q", dt, out_lo, ai->out_hi);
        su_qoutput(c, par_case_node(c, ai->name, 1, in, na, at, &qo));
        par_sweep_done(gr->s, c);
        return;
    }
    const double lo = ai->pos ? 0.0 : -1.0;
    par_gen gx = su_uniform(lo * ai->range, ai->range);
    if (p.edge) gx = ai->wide > 0 ? su_uniform(lo * ai->wide, ai->wide) : su_edge(ai->range);
    in[0] = par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, gx);
    if (par_act_table[p.op].kind == ACT_PRELU) {
        int64_t sd[1] = {p.variant ? xd[1] : 1};
        in[1] = par_case_const(c, "slope", PAR_DTYPE_F32, 1, sd, su_uniform(-0.5, 0.5));
    }
    par_case_output(c, par_case_node(c, ai->name, par_act_table[p.op].kind == ACT_PRELU ? 2 : 1, in, na, at, &o));
    par_sweep_done(gr->s, c);
}

static const int ASH[][5] = {
    {1, 1},  {1, 3},  {1, 4},   {1, 7},   {1, 8},   {1, 9},   {1, 16},  {1, 17},  {1, 33},
    {4, 2, 3, 5, 7}, {4, 1, 16, 8, 8}, {2, 5, 31}, {2, 4, 9}, {3, 2, 7, 5},
    {1, 15}, {1, 31}, {1, 32}, {1, 64}, {1, 100}, {1, 1000}, {1, 4097}, {3, 3, 17, 9}, {4, 2, 17, 9, 9},
    {4, 1, 32, 28, 28}, {2, 64, 65},
};
enum { AQ = 14, AN = 25 };

void par_sweep_activation(par_sweep *s)
{
    grid gr;
    grid_init(&gr, s, sizeof(act_pt));
    for (int op = 0; op < par_act_count; op++)
        for (int sh = 0; sh < AN; sh++)
            for (int v = 0; v < act_n_variants(op); v++)
                for (int edge = 0; edge <= ((act_flags(op) & PAR_OPF_EXACT) || par_act_table[op].wide > 0 ? 1 : 0); edge++) {
                    act_pt p;
                    memset(&p, 0, sizeof p);
                    p.op = op; p.variant = v; p.edge = edge;
                    p.rank = ASH[sh][0];
                    for (int i = 0; i < p.rank; i++) p.d[i] = ASH[sh][1 + i];
                    /* quick: defaults (and both prelu slopes) on every small shape; other attribute variants and
                     * the edge values on a few */
                    int few = sh == 2 || sh == 8 || sh == 10;
                    int q = sh < AQ && ((v == 0 && !edge) || par_act_table[op].kind == ACT_PRELU || few);
                    act_emit(&gr, p, q);
                }
    /* Quantized forms (leaky_relu with every slope). */
    static const int QSH[][5] = {{1, 33}, {4, 1, 8, 7, 7}, {1, 1000}, {4, 2, 3, 9, 9}};
    for (int op = 0; op < par_act_count; op++) {
        if (!(act_flags(op) & PAR_OPF_QUANT_OK)) continue;
        for (int v = 0; v < (par_act_table[op].kind == ACT_LEAKY ? act_n_variants(op) : 1); v++)
            for (int dt = 0; dt < 2; dt++)
                for (int sh = 0; sh < 4; sh++) {
                    act_pt p;
                    memset(&p, 0, sizeof p);
                    p.op = op;
                    p.variant = v;
                    p.dt = dt ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8;
                    p.rank = QSH[sh][0];
                    for (int i = 0; i < p.rank; i++) p.d[i] = QSH[sh][1 + i];
                    act_emit(&gr, p, sh < 2);
                }
    }
    grid_free(&gr);
}
