/*
 * gen_ops_nn.c - constraint functions of the compute families: convolutions, linear and matmul, elementwise binary
 * and unary ops, pooling, reductions, resampling, normalizations, the decoder-block ops (rope, sdpa, slice_scatter),
 * and quantize / dequantize. Each draws a configuration its op accepts (docs/ops.md; the ranges of the sweeps in
 * cases/ops/), exploring every attribute of the schema; gen_emit checks it against the op's shape function and the
 * size limit, and a refused attempt is retried.
 * Inputs stay well-conditioned: weights normal with 1/sqrt(fan_in), divisors and sqrt / rsqrt operands positive and
 * away from 0, batch_norm variances in [0.5, 2).
 */
#include <math.h>
#include "gen/gen_int.h"

#define TRIES 4

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static double mag_of(const gen_ctx *g, const gen_in *in)
{
    return in->v >= 0 ? g->mag[in->v] : in->mag;
}

static int pos_of(const gen_ctx *g, const gen_in *in)
{
    return in->v >= 0 ? (g->flags[in->v] & GV_POS) != 0 : in->pos;
}

/* A divisor of n, uniformly among them. */
static int64_t divisor(gen_ctx *g, int64_t n)
{
    int64_t d[64];
    int32_t k = 0;
    for (int64_t i = 1; i <= n && k < 64; i++)
        if (n % i == 0) d[k++] = i;
    return k ? d[gen_below(g->src, (uint32_t)k)] : 1;
}

/* A bias of n elements, or absent. */
static gen_in maybe_bias(gen_ctx *g, int64_t n)
{
    if (gen_chance(g->src, 0.3)) return gen_in_absent();
    return gen_in_uniform(1, PAR_DTYPE_F32, 1, &n, -0.5, 0.5);
}

/* A weighted op's last step: a bias of n elements or none (the absent slot dropped half the time when may_drop,
 * so both arities occur), the output magnitude bound, the emit. */
static int32_t emit_weighted(gen_ctx *g, const par_op_info *op, gen_in *ins, const gen_attrs *at, int64_t n,
                             int may_drop)
{
    ins[2] = maybe_bias(g, n);
    double m = mag_of(g, &ins[0]) * 2.0 + 0.5;
    int32_t n_in = may_drop && ins[2].absent && gen_chance(g->src, 0.5) ? 2 : 3;
    return gen_emit(g, op, n_in, ins, at, 0, 0, 0, 0, m);
}

int32_t gen_op_conv2d(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        ins[0] = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t c = xd[1], h = xd[2], w = xd[3];
        int64_t groups = 1;
        uint32_t gk = gen_below(g->src, 4);
        if (gk == 1) groups = c;                            /* depthwise */
        else if (gk == 2) groups = divisor(g, c);
        int64_t per = gk == 1 ? gen_range(g->src, 1, 2) : gen_range(g->src, 1, max64(1, min64(8, 16 / groups)));
        int64_t o = groups * per;
        int64_t kh = gen_range(g->src, 1, min64(5, h + 2)), kw = gen_range(g->src, 1, min64(5, w + 2));
        int64_t dil[2] = {gen_chance(g->src, 0.2) ? 2 : 1, gen_chance(g->src, 0.2) ? 2 : 1};
        int64_t st[2] = {gen_range(g->src, 1, 3), gen_range(g->src, 1, 3)};
        if (gen_chance(g->src, 0.5)) st[1] = st[0];
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        int64_t pad[4] = {gen_range(g->src, 0, (kh - 1) * dil[0]), gen_range(g->src, 0, (kw - 1) * dil[1]), 0, 0};
        pad[2] = gen_chance(g->src, 0.7) ? pad[0] : gen_range(g->src, 0, (kh - 1) * dil[0]);
        pad[3] = gen_chance(g->src, 0.7) ? pad[1] : gen_range(g->src, 0, (kw - 1) * dil[1]);
        gen_attr_set_ints(&at, "stride", 2, st);
        gen_attr_set_ints(&at, "dilation", 2, dil);
        gen_attr_set_ints(&at, "padding", 4, pad);
        gen_attr_set_int(&at, "groups", groups);
        int64_t wd[4] = {o, c / groups, kh, kw};
        ins[1] = gen_in_weight(4, wd, wd[1] * kh * kw);
        int32_t v = emit_weighted(g, op, ins, &at, o, 1);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_conv_transpose2d(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        ins[0] = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t c = xd[1];
        int64_t groups = gen_chance(g->src, 0.3) ? divisor(g, c) : 1;
        int64_t o = groups * gen_range(g->src, 1, max64(1, min64(4, 8 / groups)));
        int64_t kh = gen_range(g->src, 1, 4), kw = gen_range(g->src, 1, 4);
        int64_t st[2] = {gen_range(g->src, 1, 3), gen_range(g->src, 1, 3)};
        int64_t dil[2] = {gen_chance(g->src, 0.2) ? 2 : 1, gen_chance(g->src, 0.2) ? 2 : 1};
        int64_t pad[4];
        for (int i = 0; i < 4; i++) {
            int64_t k = i % 2 ? kw : kh, d = dil[i % 2];
            pad[i] = gen_chance(g->src, 0.5) ? 0 : gen_range(g->src, 0, (k - 1) * d);
        }
        int64_t opad[2];
        for (int i = 0; i < 2; i++) opad[i] = gen_chance(g->src, 0.7) ? 0 : gen_range(g->src, 0, max64(st[i], dil[i]) - 1);
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        gen_attr_set_ints(&at, "stride", 2, st);
        gen_attr_set_ints(&at, "dilation", 2, dil);
        gen_attr_set_ints(&at, "padding", 4, pad);
        gen_attr_set_ints(&at, "output_padding", 2, opad);
        gen_attr_set_int(&at, "groups", groups);
        int64_t wd[4] = {c, o / groups, kh, kw};
        int64_t fan = max64(1, (c / groups) * kh * kw / (st[0] * st[1]));
        ins[1] = gen_in_weight(4, wd, fan);
        int32_t v = emit_weighted(g, op, ins, &at, o, 0);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_linear(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t k = xd[r - 1], o = gen_range(g->src, 1, 16);
        int64_t wd[2] = {o, k};
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        if (op->qform == PAR_QFORM_CONVERT) {
            /* linear_dynamic: qs8 weights (per tensor or per output channel, zero point 0) at a real range of
             * about +-1/sqrt(K), as a float weight of std 1/sqrt(K) quantizes to. */
            ins[1] = gen_in_uniform(1, PAR_DTYPE_QS8, 2, wd, -127, 127);
            double s = 1.0;
            for (int64_t i = 1; i * i <= k; i++) s = 1.0 / (double)(i * 127);
            ins[1].scale = (float)s;
            ins[1].zp = 0;
            if (gen_chance(g->src, 0.5)) ins[1].ch_axis = 0;
        } else {
            ins[1] = gen_in_weight(2, wd, k);
        }
        int32_t v = emit_weighted(g, op, ins, &at, o, 1);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* A 4-bit weight form drawn for linear_8da4w / linear_16a4w (docs/quantization.md, "4-bit weights"): s4 or u4 (its
 * zero point 8 half the time, else any code; s4's 0 mostly), the nibble order, and with bf16 the scales' value
 * rounded to a bfloat16 (*s; the caller keeps its scales exact in bf16). */
static int w4_form(gen_ctx *g, gen_attrs *at, double *s)
{
    const int u4 = gen_chance(g->src, 0.5);
    int64_t zp = u4 ? (gen_chance(g->src, 0.5) ? 8 : gen_range(g->src, 0, 15))
                    : (gen_chance(g->src, 0.8) ? 0 : gen_range(g->src, -8, 7));
    gen_attr_set_str(at, "w4", u4 ? "u4" : "s4");
    gen_attr_set_int(at, "w4_zp", zp);
    gen_attr_set_str(at, "nibbles", gen_chance(g->src, 0.5) ? "hi" : "lo");
    const int bf16 = gen_chance(g->src, 0.3);
    gen_attr_set_str(at, "scales", bf16 ? "bf16" : "f32");
    if (bf16) *s = ldexp(1.0, (int)lround(log2(*s))); /* a power of two: every multiple the caller forms is bf16 */
    return bf16;
}

/* linear_8da4w: K even (else another draw), the largest block of 32, 16, ..., 2 that divides K, packed int4 bytes
 * (qu8, scale 1, zero point 0: every nibble) in a drawn form (w4_form), block scales about 1 / (8 sqrt(K)) as the
 * sweep's (bf16: one power of two for every block). */
int32_t gen_op_linear_8da4w(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[4];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t k = xd[r - 1], o = gen_range(g->src, 1, 16), blk = 32;
        if (k % 2) continue;
        while (k % blk) blk /= 2;
        int64_t wd[2] = {o, k / 2}, sd[2] = {o, k / blk};
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "block", blk);
        ins[1] = gen_in_uniform(1, PAR_DTYPE_QU8, 2, wd, 0, 255);
        ins[1].scale = 1.0f;
        ins[1].zp = 0;
        double s = 1.0 / (8.0 * sqrt((double)k));
        const int bf16 = w4_form(g, &at, &s);
        ins[2] = gen_in_uniform(1, PAR_DTYPE_F32, 2, sd, 0.25 * s, 2 * s);
        if (bf16) ins[2].gen = (par_gen){.dist = PAR_DIST_CONST, .a = s};
        ins[3] = maybe_bias(g, o);
        int32_t n_in = ins[3].absent && gen_chance(g->src, 0.5) ? 3 : 4;
        int32_t v = gen_emit(g, op, n_in, ins, &at, 0, 0, 0, 0, mag_of(g, &ins[0]) * 2.0 + 0.5);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* linear_qd8 / matmul_qd8 (docs/quantization.md, "Dynamic int8 activations (qd8)"): x f32 (matmul: rank >= 2), qs8
 * weights [O, K] (matmul: [K, N]) in [-127, 127] at about 1 / (127 sqrt(K)) (the sweep's), per channel on the output
 * channels' axis most of the time, else per tensor with zero point 0; per token or per tensor; linear's f32 bias or
 * none. K is at most the activation's, far below the int32 bound. */
int32_t gen_op_qd8(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    const int mm = op->id == PAR_OP_MATMUL_QD8;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        ins[0] = gen_act(g, mm ? 2 : 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t k = xd[r - 1], o = gen_range(g->src, 1, 16);
        int64_t wd[2] = {mm ? k : o, mm ? o : k};
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_str(&at, "per", gen_chance(g->src, 0.3) ? "tensor" : "token");
        ins[1] = gen_in_uniform(1, PAR_DTYPE_QS8, 2, wd, -127, 127);
        ins[1].scale = (float)(1.0 / (127.0 * sqrt((double)k)));
        ins[1].zp = 0;
        if (gen_chance(g->src, 0.7)) ins[1].ch_axis = mm ? 1 : 0;
        int32_t n_in = 2;
        if (!mm) {
            ins[2] = maybe_bias(g, o);
            n_in = ins[2].absent && gen_chance(g->src, 0.5) ? 2 : 3;
        }
        int32_t v = gen_emit(g, op, n_in, ins, &at, 0, 0, 0, 0, mag_of(g, &ins[0]) * 2.0 + 0.5);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* linear_16a4w (docs/quantization.md, "16a4w"): three nodes, quantize -> linear_16a4w -> dequantize, so the float
 * graph goes on from its output. x quantized to qs16 at scale |x| / 32767; K even, blocks as linear_8da4w's or one
 * block of K (per channel, multipliers 1); a drawn weight form (w4_form); multipliers in [1, m] with m <= 15 small
 * enough that no accumulator can leave int32 (K 32768 15 m + |bias| < 2^31, which the reference would refuse);
 * channel scales about 1 / (42 sqrt(K)) (the sweep's: real weights of spread 1 / sqrt(K)), per channel; an i32 bias
 * or none; the qs16 output at twice the input's scale (some saturate). Not in graphs the generator quantizes
 * afterwards: their quantizer takes float ops. */
int32_t gen_op_linear_16a4w(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 3 || g->quant) return -1;
    const par_op_info *qop = par_op_get(PAR_OP_QUANTIZE), *deq = par_op_get(PAR_OP_DEQUANTIZE);
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        int64_t k = xd[r - 1], o = gen_range(g->src, 1, 16), blk = 32;
        if (k % 2) continue;
        while (k % blk) blk /= 2;
        const int pc = gen_chance(g->src, 0.2);
        if (pc) blk = k;
        const double mmax = floor((2147483647.0 - 32768.0) / ((double)k * 32768.0 * 15.0));
        if (mmax < 1) continue;
        const double mx = mag_of(g, &x) > 0 ? mag_of(g, &x) : 1.0;
        const float sx = (float)(mx / 32767.0), so = 2.0f * sx;
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "block", blk);
        double s = 1.0 / ((pc ? 4.6 : 42.0) * sqrt((double)k));
        w4_form(g, &at, &s);
        int32_t q = gen_emit(g, qop, 1, &x, NULL, PAR_DTYPE_QS16, sx, 0, 0, mx);
        if (q < 0) {
            if (g->failed) return -1;
            continue;
        }
        gen_in ins[4];
        int64_t wd[2] = {o, k / 2}, sd[2] = {o, k / blk};
        ins[0] = gen_in_val(g, q);
        ins[1] = gen_in_uniform(1, PAR_DTYPE_QU8, 2, wd, 0, 255);
        ins[1].scale = 1.0f;
        ins[1].zp = 0;
        ins[2] = gen_in_uniform(1, PAR_DTYPE_QS8, 2, sd, 1, pc ? 1 : (mmax < 15 ? mmax : 15));
        ins[2].scale = (float)s;
        ins[2].zp = 0;
        ins[2].ch_axis = 0;
        ins[3] = gen_chance(g->src, 0.3) ? gen_in_absent() : gen_in_uniform(1, PAR_DTYPE_I32, 1, &o, -32768, 32768);
        ins[3].scale = sx * (float)s;
        ins[3].zp = 0;
        int32_t n_in = ins[3].absent && gen_chance(g->src, 0.5) ? 3 : 4;
        int32_t v = gen_emit(g, op, n_in, ins, &at, PAR_DTYPE_QS16, so, 0, 0, mx * 2.0);
        if (v < 0) return -1; /* its quantize stays, as an unconsumed value */
        gen_in vi = gen_in_val(g, v);
        return gen_emit(g, deq, 1, &vi, NULL, 0, 0, 0, 0, so * 32768.0);
    }
    return -1;
}

int32_t gen_op_matmul(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 2, GEN_RANK, 0);
        int32_t ra;
        const int64_t *ad = gen_in_dims(g, &ins[0], &ra);
        int32_t rb = (int32_t)gen_range(g->src, 2, ra);
        int64_t bd[PAR_MAX_RANK];
        for (int32_t i = 0; i < rb - 2; i++) bd[i] = gen_chance(g->src, 0.3) ? 1 : ad[ra - rb + i];
        bd[rb - 2] = ad[ra - 1];
        bd[rb - 1] = gen_range(g->src, 1, 16);
        int32_t ex = gen_find(g, rb, bd, 0);
        if (ex >= 0 && gen_chance(g->src, 0.5)) ins[1] = gen_in_val(g, ex);
        else if (gen_chance(g->src, 0.5)) ins[1] = gen_in_new(g, 0, rb, bd, 0);
        else {
            ins[1] = gen_in_weight(rb, bd, 1);
            double s = 1.0;
            for (int64_t i = 1; i * i <= bd[rb - 2]; i++) s = 1.0 / (double)i; /* 1/floor(sqrt(K)) */
            ins[1].gen.b = s;
            ins[1].mag = 6.0 * s;
        }
        if (gen_chance(g->src, 0.2)) {
            gen_in tmp = ins[0];                            /* the activation on the right */
            ins[0] = ins[1];
            ins[1] = tmp;
        }
        double m = mag_of(g, &ins[0]) * mag_of(g, &ins[1]) * 4.0 + 0.5;
        int32_t v = gen_emit(g, op, 2, ins, NULL, 0, 0, 0, 0, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_binary(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    int div = op->id == PAR_OP_DIV; /* the divisor must stay away from 0 */
    int pw = op->id == PAR_OP_POW;  /* a positive base (no NaN from a fractional power) and a bounded exponent */
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 1, GEN_RANK, pw);
        if (pw && !pos_of(g, &ins[0])) continue;
        int32_t r;
        const int64_t *ad = gen_in_dims(g, &ins[0], &r);
        int64_t bd[PAR_MAX_RANK];
        int32_t rb = r;
        memcpy(bd, ad, sizeof(int64_t) * (size_t)r);
        uint32_t how = gen_below(g->src, 4);
        if (how == 1 || how == 2) rb = gen_bcast(g, r, ad, bd);
        else if (how == 3) rb = 1, bd[0] = 1;
        int32_t ex = gen_find(g, rb, bd, div);
        if (ex >= 0 && gen_chance(g->src, 0.6)) ins[1] = gen_in_val(g, ex);
        else ins[1] = gen_in_new(g, gen_chance(g->src, 0.5), rb, bd, div);
        if (gen_chance(g->src, 0.3) && (!div || pos_of(g, &ins[0])) && !pw) {
            gen_in tmp = ins[0];                            /* the broadcast operand on the left */
            ins[0] = ins[1];
            ins[1] = tmp;
        }
        double ma = mag_of(g, &ins[0]), mb = mag_of(g, &ins[1]);
        int pa = pos_of(g, &ins[0]), pb = pos_of(g, &ins[1]);
        double m = op->id == PAR_OP_MUL ? ma * mb : div ? ma * 2.0 : ma + mb;
        if (pw) m = pow(ma > 4.0 ? ma : 4.0, mb); /* a positive base is at least 0.25 */
        if (pw && !(m < 1e30)) continue;
        int pos = pa && pb && op->id != PAR_OP_SUB && !pw;
        int32_t v = gen_emit(g, op, 2, ins, NULL, 0, 0, 0, pos, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_unary(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    /* sqrt, rsqrt, log and reciprocal: a positive operand (their NaN / Inf rules are the hazards' business); exp: an
     * operand below 80 in magnitude, so that exp stays finite (an overflow to Inf is the hazards' business too) */
    const int root = op->id == PAR_OP_SQRT || op->id == PAR_OP_RSQRT;
    const int need_pos = root || op->id == PAR_OP_LOG || op->id == PAR_OP_RECIPROCAL;
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 1, GEN_RANK, need_pos);
        if (op->id == PAR_OP_EXP && !(mag_of(g, &x) <= 80.0)) continue;
        int32_t r;
        gen_in_dims(g, &x, &r);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        /* Ordered bounds (hardtanh's min_val <= max_val, clamp's min <= max, either of clamp's may be infinite). */
        const char *lo_name = gen_has_attr(op, "min_val") ? "min_val" : gen_has_attr(op, "min") ? "min" : NULL;
        if (lo_name) {
            const char *hi_name = lo_name[3] ? "max_val" : "max";
            double lo = gen_real(g->src, -2.0, 0.5), hi = lo + gen_real(g->src, 0.0, 3.0);
            if (!lo_name[3] && gen_chance(g->src, 0.25)) lo = -1.0 / 0.0;
            if (!lo_name[3] && gen_chance(g->src, 0.25)) hi = 1.0 / 0.0;
            gen_attr_set_float(&at, lo_name, lo);
            gen_attr_set_float(&at, hi_name, hi);
        }
        double m = mag_of(g, &x);
        if (op->flags & (PAR_OPF_OUT_01 | PAR_OPF_OUT_PM1)) m = 1.0;
        else if (op->id == PAR_OP_RSQRT) m = 2.0;
        else if (op->id == PAR_OP_RECIPROCAL) m = 4.0; /* a positive operand is at least 0.25 */
        else if (op->id == PAR_OP_EXP) m = exp(m);
        else if (op->id == PAR_OP_LOG) m = m + 2.0; /* of a positive operand: |log x| <= max(x, log 4) */
        else m = m + 1.0;
        int pos = root && pos_of(g, &x);
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_prelu(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        int64_t n = r >= 2 && gen_chance(g->src, 0.7) ? xd[1] : 1;
        ins[1] = gen_in_uniform(1, PAR_DTYPE_F32, 1, &n, 0.0, 0.5);
        int32_t v = gen_emit(g, op, 2, ins, NULL, 0, 0, 0, 0, mag_of(g, &ins[0]));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_pool(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    int has_dil = gen_has_attr(op, "dilation");
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        int64_t k[2] = {gen_range(g->src, 1, min64(4, xd[2] + 1)), gen_range(g->src, 1, min64(4, xd[3] + 1))};
        int64_t st[2] = {gen_range(g->src, 1, 3), gen_range(g->src, 1, 3)};
        int64_t dil[2] = {1, 1};
        if (has_dil && gen_chance(g->src, 0.2)) dil[0] = dil[1] = 2;
        int64_t pad[4];
        for (int i = 0; i < 4; i++) {
            /* at most half the kernel's extent, as PyTorch requires */
            int64_t ext = dil[i % 2] * (k[i % 2] - 1) + 1;
            pad[i] = gen_chance(g->src, 0.5) ? 0 : gen_range(g->src, 0, (has_dil ? ext : k[i % 2]) / 2);
        }
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        gen_attr_set_ints(&at, "kernel", 2, k);
        gen_attr_set_ints(&at, "stride", 2, st);
        gen_attr_set_ints(&at, "padding", 4, pad);
        if (has_dil) gen_attr_set_ints(&at, "dilation", 2, dil);
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, (op->flags & PAR_OPF_EXACT) && pos_of(g, &x),
                             mag_of(g, &x));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_adaptive_pool(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        if (gen_has_attr(op, "output_size")) {
            int64_t os[2] = {gen_range(g->src, 1, min64(8, xd[2] * 2)), gen_range(g->src, 1, min64(8, xd[3] * 2))};
            gen_attr_set_ints(&at, "output_size", 2, os);
        }
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos_of(g, &x), mag_of(g, &x));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_reduce(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 1, GEN_RANK, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        int64_t axes[PAR_MAX_RANK], prod = 1;
        int32_t n = 0;
        for (int32_t i = 0; i < r; i++)
            if (gen_chance(g->src, 0.4)) axes[n++] = i;
        if (n == 0) axes[n++] = gen_range(g->src, 0, r - 1);
        for (int32_t i = 0; i < n; i++) prod *= xd[axes[i]];
        for (int32_t i = n - 1; i > 0; i--) {               /* any order, some counted from the end */
            int32_t j = (int32_t)gen_range(g->src, 0, i);
            int64_t tmp = axes[i];
            axes[i] = axes[j];
            axes[j] = tmp;
        }
        for (int32_t i = 0; i < n; i++)
            if (gen_chance(g->src, 0.3)) axes[i] -= r;
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_ints(&at, "axes", n, axes);
        double m = mag_of(g, &x) * (op->id == PAR_OP_SUM ? (double)prod : 1.0);
        int pos = (op->flags & PAR_OPF_EXACT || op->qform == PAR_QFORM_AVG) && pos_of(g, &x);
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, pos, m);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_upsample(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    static const double scales[] = {0.5, 0.75, 1.0, 1.1, 1.5, 2.0, 2.05, 2.5, 3.0};
    for (int t = 0; t < TRIES; t++) {
        gen_in x = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &x, &r);
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        if (gen_chance(g->src, 0.5)) {
            int64_t sz[2] = {gen_range(g->src, 1, xd[2] * 3), gen_range(g->src, 1, xd[3] * 3)};
            gen_attr_set_ints(&at, "size", 2, sz);
            gen_attr_set_floats(&at, "scale", 0, NULL);
        } else {
            double sc[2] = {scales[gen_below(g->src, 9)], scales[gen_below(g->src, 9)]};
            if (gen_chance(g->src, 0.5)) sc[1] = sc[0];
            gen_attr_set_floats(&at, "scale", 2, sc);
            gen_attr_set_ints(&at, "size", 0, NULL);
        }
        /* bicubic overshoots by up to about 1.4x */
        int32_t v = gen_emit(g, op, 1, &x, &at, 0, 0, 0, (op->flags & PAR_OPF_EXACT) && pos_of(g, &x),
                             mag_of(g, &x) * 1.5);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

int32_t gen_op_norm(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    int bn = op->infer == par_infer_batch_norm, ln = op->infer == par_infer_layer_norm;
    int gn = op->infer == par_infer_group_norm, in = op->infer == par_infer_instance_norm;
    int rms = op->infer == par_infer_rms_norm; /* layer_norm's geometry, weight only */
    ln |= rms;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[5];
        ins[0] = gen_act(g, in ? 3 : ln ? 1 : 2, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        int32_t n;
        if (bn) {
            int64_t c = xd[1];
            ins[1] = gen_in_uniform(1, PAR_DTYPE_F32, 1, &c, 0.5, 1.5);
            ins[2] = gen_in_uniform(1, PAR_DTYPE_F32, 1, &c, -0.5, 0.5);
            ins[3] = gen_in_uniform(1, PAR_DTYPE_F32, 1, &c, -0.5, 0.5);
            ins[4] = gen_in_uniform(1, PAR_DTYPE_F32, 1, &c, 0.5, 2.0); /* variance: well away from 0 */
            n = 5;
        } else {
            int64_t pd[PAR_MAX_RANK];
            int32_t pr = 1;
            if (ln) {
                pr = (int32_t)gen_range(g->src, 1, r < 3 ? r : 3);
                memcpy(pd, xd + r - pr, sizeof(int64_t) * (size_t)pr);
                gen_attr_set_ints(&at, "normalized_shape", pr, pd);
            } else {
                pd[0] = xd[1];
                if (gn) gen_attr_set_int(&at, "num_groups", divisor(g, xd[1]));
            }
            uint32_t which = gen_below(g->src, rms ? 2 : 4); /* none, weight, weight and bias, bias only */
            n = which == 0 ? 1 : which == 1 ? 2 : 3;
            ins[1] = which == 3 ? gen_in_absent() : gen_in_uniform(1, PAR_DTYPE_F32, pr, pd, 0.5, 1.5);
            ins[2] = gen_in_uniform(1, PAR_DTYPE_F32, pr, pd, -0.5, 0.5);
        }
        int32_t v = gen_emit(g, op, n, ins, &at, 0, 0, 0, 0, bn ? mag_of(g, &ins[0]) * 2.0 + 1.0 : 8.0);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* rope: x [..., S, D] with D even (an existing activation when its last dimension is even, else a new one), cos
 * and sin [S, D/2] constants in [-1, 1] (any rotation table: the op does not require cos^2 + sin^2 = 1), either
 * pair layout. */
int32_t gen_op_rope(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[3];
        ins[0] = gen_act(g, 2, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        if (xd[r - 1] % 2 != 0) {
            int64_t d[PAR_MAX_RANK];
            memcpy(d, xd, sizeof(int64_t) * (size_t)r);
            d[r - 1] = 2 * gen_range(g->src, 1, 16);
            ins[0] = gen_in_new(g, 0, r, d, 0);
            xd = gen_in_dims(g, &ins[0], &r);
        }
        const int64_t td[2] = {xd[r - 2], xd[r - 1] / 2};
        ins[1] = gen_in_uniform(1, PAR_DTYPE_F32, 2, td, -1.0, 1.0);
        ins[2] = gen_in_uniform(1, PAR_DTYPE_F32, 2, td, -1.0, 1.0);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "interleaved", gen_below(g->src, 2));
        int32_t v = gen_emit(g, op, 3, ins, &at, 0, 0, 0, 0, mag_of(g, &ins[0]) * 2.0);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* sdpa: q [B, Hq, Sq, D] (an activation of rank 4), Hkv a divisor of Hq, k [B, Hkv, Skv, D] and v [B, Hkv, Skv, Dv]
 * new (or existing of that shape), causal or not, with an additive mask in [-2, 0] broadcast to [B, Hq, Sq, Skv]
 * now and then; the scale the default or drawn. The output is a convex combination of v's rows. */
int32_t gen_op_sdpa(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[4];
        ins[0] = gen_act(g, 4, 4, 0);
        int32_t r;
        const int64_t *qd = gen_in_dims(g, &ins[0], &r);
        const int64_t hkv = divisor(g, qd[1]), skv = gen_range(g->src, 1, 16);
        const int64_t kd[4] = {qd[0], hkv, skv, qd[3]}, vd[4] = {qd[0], hkv, skv, gen_range(g->src, 1, 16)};
        int32_t ex = gen_find(g, 4, kd, 0);
        ins[1] = ex >= 0 && gen_chance(g->src, 0.5) ? gen_in_val(g, ex) : gen_in_new(g, 0, 4, kd, 0);
        ex = gen_find(g, 4, vd, 0);
        ins[2] = ex >= 0 && gen_chance(g->src, 0.5) ? gen_in_val(g, ex) : gen_in_new(g, 0, 4, vd, 0);
        int32_t n = 3;
        if (gen_chance(g->src, 0.3)) {
            const int64_t full[4] = {qd[0], qd[1], qd[2], skv};
            int64_t md[PAR_MAX_RANK];
            int32_t mr = gen_bcast(g, 4, full, md);
            ins[3] = gen_in_uniform(gen_chance(g->src, 0.5), PAR_DTYPE_F32, mr, md, -2.0, 0.0);
            n = 4;
        }
        gen_attrs at;
        gen_attrs_schema(g, op, 4, &at);
        gen_attr_set_int(&at, "is_causal", gen_chance(g->src, 0.4));
        gen_attr_set_float(&at, "scale", gen_chance(g->src, 0.7) ? 0.0 : gen_real(g->src, 0.05, 1.0));
        int32_t v = gen_emit(g, op, n, ins, &at, 0, 0, 0, 0, mag_of(g, &ins[2]));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* slice_scatter: src (new, or an existing value of its shape) written over len rows of one dimension of x, at a
 * start that fits. */
int32_t gen_op_slice_scatter(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1) return -1;
    for (int t = 0; t < TRIES; t++) {
        gen_in ins[2];
        ins[0] = gen_act(g, 1, 4, 0);
        int32_t r;
        const int64_t *xd = gen_in_dims(g, &ins[0], &r);
        const int32_t d = (int32_t)gen_below(g->src, (uint32_t)r);
        int64_t sd[PAR_MAX_RANK];
        memcpy(sd, xd, sizeof(int64_t) * (size_t)r);
        sd[d] = gen_range(g->src, 1, xd[d]);
        const int64_t start = gen_range(g->src, 0, xd[d] - sd[d]);
        int32_t ex = gen_find(g, r, sd, 0);
        ins[1] = ex >= 0 && gen_chance(g->src, 0.5) ? gen_in_val(g, ex) : gen_in_new(g, 0, r, sd, 0);
        gen_attrs at;
        gen_attrs_schema(g, op, r, &at);
        gen_attr_set_int(&at, "dim", gen_chance(g->src, 0.5) ? d : d - r);
        gen_attr_set_int(&at, "start", start);
        int32_t v = gen_emit(g, op, 2, ins, &at, 0, 0, 0, 0, fmax(mag_of(g, &ins[0]), mag_of(g, &ins[1])));
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}

/* A quantized value's parameters for real values within +-m. */
static void qparams(gen_ctx *g, par_dtype dt, double m, float *scale, int32_t *zp)
{
    double s = (m < 0.25 ? 0.25 : m > 64 ? 64 : m) / 100.0;
    *scale = (float)s;
    *zp = dt == PAR_DTYPE_QU8 ? (int32_t)gen_range(g->src, 100, 156) : (int32_t)gen_range(g->src, -20, 20);
}

int32_t gen_op_quant(gen_ctx *g, const par_op_info *op, int32_t room)
{
    const par_op_info *deq = par_op_get(PAR_OP_DEQUANTIZE);
    par_dtype dt = gen_chance(g->src, 0.5) ? PAR_DTYPE_QU8 : PAR_DTYPE_QS8;
    if (op->infer == par_infer_dequantize && (room < 2 || gen_chance(g->src, 0.5))) {
        /* dequantize of a quantized graph input */
        if (room < 1) return -1;
        int64_t d[PAR_MAX_RANK];
        int32_t r = (int32_t)gen_range(g->src, 1, 4);
        gen_shape(g, r, 12, g->o->max_elems, d);
        gen_in q = dt == PAR_DTYPE_QU8 ? gen_in_uniform(0, dt, r, d, 0, 255) : gen_in_uniform(0, dt, r, d, -128, 127);
        q.pos = 0;
        qparams(g, dt, 1.0 + gen_real(g->src, 0.0, 3.0), &q.scale, &q.zp);
        q.mag = q.scale * 256.0;
        return gen_emit(g, deq, 1, &q, NULL, 0, 0, 0, 0, q.mag);
    }
    /* quantize -> dequantize: the float graph goes on from the dequantized value */
    if (room < 2) return -1;
    const par_op_info *qop = par_op_get(PAR_OP_QUANTIZE);
    gen_in x = gen_act(g, 1, GEN_RANK, 0);
    float scale;
    int32_t zp;
    qparams(g, dt, mag_of(g, &x), &scale, &zp);
    int32_t q = gen_emit(g, qop, 1, &x, NULL, dt, scale, zp, 0, mag_of(g, &x));
    if (q < 0) return -1;
    gen_in qi = gen_in_val(g, q);
    return gen_emit(g, deq, 1, &qi, NULL, 0, 0, 0, 0, mag_of(g, &x));
}
