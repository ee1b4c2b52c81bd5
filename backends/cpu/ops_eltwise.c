/*
 * ops_eltwise.c - the cpu backend's elementwise ops: binary ops with numpy broadcasting (on any mix of NHWC and
 * row-major operands), activations, prelu, batch_norm (when it was not folded into a convolution), softmax and
 * log_softmax along any axis; and the portable scalar versions of the vector kernels (used with kernels=scalar).
 *
 * Arithmetic is f32 throughout. The scalar kernels use libm (expf, tanhf, expm1f: within 1 ULP); the vector ones
 * (ops_vec_simd.h) document their own accuracy. Ops never allocate at run time and write only their output tensor.
 */
#include <math.h>
#include <stdlib.h>

#include "plan_util.h"

/* ---------------------------------------------------------------------------------------------------------------
 * Scalar vector-kernel table
 * ------------------------------------------------------------------------------------------------------------- */
static float relu6_of(float v)
{
    return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
}

static void scalar_binary(cpu_binop op, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, float *y)
{
    switch (op) {
    case CPU_BIN_ADD: for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] + b[i * sb]; break;
    case CPU_BIN_SUB: for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] - b[i * sb]; break;
    case CPU_BIN_MUL: for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] * b[i * sb]; break;
    case CPU_BIN_DIV: for (int64_t i = 0; i < n; i++) y[i] = a[i * sa] / b[i * sb]; break;
    }
}

static void scalar_clamp(int64_t n, const float *x, float *y, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

/* x < 0: e / (1 + e) with e = exp(x), so that exp never overflows and tiny results keep their relative accuracy. */
static void scalar_sigmoid(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) {
        const float e = expf(-fabsf(x[i]));
        y[i] = (x[i] < 0.0f ? e : 1.0f) / (1.0f + e);
    }
}

static void scalar_tanh(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

static void scalar_exp(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]);
}

static void scalar_hardswish(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * relu6_of(x[i] + 3.0f) * (1.0f / 6.0f);
}

static void scalar_hardsigmoid(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = relu6_of(x[i] + 3.0f) * (1.0f / 6.0f);
}

static void scalar_scale_shift(int64_t n, const float *x, const float *s, const float *t, float *y)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * s[i] + t[i];
}

static const cpu_vops scalar_vops = {
    .binary = scalar_binary,
    .clamp = scalar_clamp,
    .sigmoid = scalar_sigmoid,
    .tanh = scalar_tanh,
    .exp = scalar_exp,
    .hardswish = scalar_hardswish,
    .hardsigmoid = scalar_hardsigmoid,
    .scale_shift = scalar_scale_shift,
};

const cpu_vops *cpu_vops_scalar(void)
{
    return &scalar_vops;
}

const cpu_vops *cpu_vops_for(cpu_isa isa)
{
    const cpu_vops *v = NULL;
#if defined(__x86_64__)
    if (isa == CPU_ISA_AVX512) v = cpu_vops_avx512();
    if (!v && (isa == CPU_ISA_AVX2 || isa == CPU_ISA_AVX512)) v = cpu_vops_avx2();
#endif
#if defined(__aarch64__)
    if (isa == CPU_ISA_NEON) v = cpu_vops_neon();
#endif
    return v ? v : &scalar_vops;
}

static void free_state(void *s)
{
    free(s);
}

#define TILE 4096 /* elements per parallel task of the flat loops */

/* ---------------------------------------------------------------------------------------------------------------
 * Binary ops with broadcasting. At prepare, the output's logical dims are ordered by its physical strides (outer
 * first), each operand gets its stride along each (0 where it broadcasts), and dims that every side steps through
 * contiguously are merged: the run is an outer walk over rows and an inner kernel over the last dim.
 * ------------------------------------------------------------------------------------------------------------- */
/* The binary ops without a vector kernel (cpu_vops): scalar loops here. */
typedef enum binary_extra { BX_NONE, BX_MIN, BX_MAX, BX_POW } binary_extra;

typedef struct binary_state {
    cpu_binop op;
    binary_extra extra;                 /* BX_NONE: op through the vector kernels */
    const cpu_vops *v;
    int32_t m;                          /* merged dims */
    int64_t d[PAR_MAX_RANK], ys[PAR_MAX_RANK], as[PAR_MAX_RANK], bs[PAR_MAX_RANK];
    int64_t outer;                      /* product of all merged dims but the last */
    const float *a, *b;                 /* run-time pointers (set per run) */
    float *y;
} binary_state;

static void operand_strides(const cpu_tensor *y, const cpu_tensor *x, int64_t *s)
{
    for (int32_t d = 0; d < y->rank; d++) {
        const int32_t k = d - (y->rank - x->rank);
        s[d] = (k < 0 || x->dims[k] == 1) ? 0 : x->strides[k];
    }
}

/* minimum and maximum propagate NaN (torch.minimum / maximum; fminf / fmaxf would drop it); pow is computed in
 * double and rounded once (within one f32 ulp; powf of glibc is too, a float exp(b log a) is not). */
static void extra_binary(binary_extra op, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, float *y)
{
    for (int64_t i = 0; i < n; i++) {
        const float x = a[i * sa], z = b[i * sb];
        switch (op) {
        case BX_MIN: y[i] = x < z || x != x ? x : z; break;
        case BX_MAX: y[i] = x > z || x != x ? x : z; break;
        default: y[i] = (float)pow((double)x, (double)z); break;
        }
    }
}

/* One run of n elements of the step's op. */
static void binary_run(const binary_state *st, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb,
                       float *y)
{
    if (st->extra != BX_NONE) extra_binary(st->extra, n, a, sa, b, sb, y);
    else st->v->binary(st->op, n, a, sa, b, sb, y);
}

static void binary_row(void *ctx, size_t row)
{
    const binary_state *st = ctx;
    int64_t ya = 0, aa = 0, ba = 0, r = (int64_t)row;
    for (int32_t i = st->m - 2; i >= 0; i--) {
        const int64_t k = r % st->d[i];
        r /= st->d[i];
        ya += k * st->ys[i];
        aa += k * st->as[i];
        ba += k * st->bs[i];
    }
    const int64_t n = st->d[st->m - 1], sa = st->as[st->m - 1], sb = st->bs[st->m - 1];
    if ((sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
        binary_run(st, n, st->a + aa, sa, st->b + ba, sb, st->y + ya);
    } else {
        /* an operand strided along the output's inner dim (a row-major operand of an NHWC output) */
        float *y = st->y + ya;
        const float *a = st->a + aa, *b = st->b + ba;
        for (int64_t k = 0; k < n; k++) {
            if (st->extra != BX_NONE) extra_binary(st->extra, 1, a + k * sa, 0, b + k * sb, 0, y + k);
            else scalar_binary(st->op, 1, a + k * sa, 0, b + k * sb, 0, y + k);
        }
    }
}

/* A single long row (outer = 1, e.g. two same-shape tensors): split it into tiles. */
static void binary_tile(void *ctx, size_t tile)
{
    const binary_state *st = ctx;
    const int64_t n = st->d[0], i0 = (int64_t)tile * TILE, len = n - i0 < TILE ? n - i0 : TILE;
    binary_run(st, len, st->a + i0 * st->as[0], st->as[0], st->b + i0 * st->bs[0], st->bs[0], st->y + i0);
}

static void run_binary(const cpu_plan *p, const cpu_step *s)
{
    binary_state *st = s->state;
    st->a = p->t[s->in[0]].data;
    st->b = p->t[s->in[1]].data;
    st->y = p->t[s->out].data;
    if (st->outer == 1 && st->as[0] <= 1 && st->bs[0] <= 1)
        cpu_parallel(p, binary_tile, st, (size_t)((st->d[0] + TILE - 1) / TILE));
    else
        cpu_parallel(p, binary_row, st, (size_t)st->outer);
}

par_status cpu_lower_binary(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    binary_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->op = s->variant <= CPU_BIN_DIV ? (cpu_binop)s->variant : CPU_BIN_ADD;
    st->extra = s->variant == CPU_BIN_MINIMUM ? BX_MIN : s->variant == CPU_BIN_MAXIMUM ? BX_MAX
              : s->variant == CPU_BIN_POW ? BX_POW : BX_NONE;
    st->v = cpu_vops_for(p->isa);
    const cpu_tensor *y = &p->t[s->out], *a = &p->t[s->in[0]], *b = &p->t[s->in[1]];
    int64_t as[PAR_MAX_RANK], bs[PAR_MAX_RANK];
    operand_strides(y, a, as);
    operand_strides(y, b, bs);
    /* drop size-1 dims, order by output stride (outer first), merge contiguous runs */
    int64_t d[PAR_MAX_RANK], ys[PAR_MAX_RANK], xa[PAR_MAX_RANK], xb[PAR_MAX_RANK];
    int32_t r = 0;
    for (int32_t i = 0; i < y->rank; i++) {
        if (y->dims[i] == 1) continue;
        d[r] = y->dims[i], ys[r] = y->strides[i], xa[r] = as[i], xb[r] = bs[i];
        r++;
    }
    for (int32_t i = 1; i < r; i++)
        for (int32_t j = i; j > 0 && ys[j] > ys[j - 1]; j--) {
            int64_t t;
            t = d[j], d[j] = d[j - 1], d[j - 1] = t;
            t = ys[j], ys[j] = ys[j - 1], ys[j - 1] = t;
            t = xa[j], xa[j] = xa[j - 1], xa[j - 1] = t;
            t = xb[j], xb[j] = xb[j - 1], xb[j - 1] = t;
        }
    int32_t m = 0;
    for (int32_t i = 0; i < r; i++) {
        if (m > 0 && st->ys[m - 1] == ys[i] * d[i] && st->as[m - 1] == xa[i] * d[i] && st->bs[m - 1] == xb[i] * d[i]) {
            st->d[m - 1] *= d[i];
            st->ys[m - 1] = ys[i], st->as[m - 1] = xa[i], st->bs[m - 1] = xb[i];
        } else {
            st->d[m] = d[i], st->ys[m] = ys[i], st->as[m] = xa[i], st->bs[m] = xb[i];
            m++;
        }
    }
    if (m == 0) { /* a single element */
        st->d[0] = 1, st->ys[0] = 1, st->as[0] = 0, st->bs[0] = 0;
        m = 1;
    }
    st->m = m;
    st->outer = 1;
    for (int32_t i = 0; i < m - 1; i++) st->outer *= st->d[i];
    s->run = run_binary;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Unary ops: input and output have the same shape, so the same layout: one flat loop over numel, in tiles.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct unary_state {
    cpu_unary_kind kind;
    cpu_map_fn of;                      /* CPU_UN_MAP: the element function */
    float lo, hi, alpha;
    const cpu_vops *v;
    int64_t n;
    const float *x;
    float *y;
} unary_state;

/* silu and gelu are computed in double and rounded once to f32: the double functions (exp, erfc within 1 ULP of
 * double, ~2^-52) add far less than one f32 ULP, so the result is the correctly rounded value or its neighbour,
 * well inside the oracle's allowance for an elementary function. Forms without cancellation:
 *   silu(x) = x / (1 + e^-x)                                    (e^-x overflows to inf for x < -709: x / inf = -0)
 *   gelu(x) = 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)   (1 + erf cancels for x << 0; erfc does not)
 *   gelu_tanh(x) = 0.5 x (1 + tanh u) = x / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3)   (same reason)
 * x = -inf would give -inf / inf or -inf * 0 = NaN; the limit is -0. x^3 of an f32 fits a double (< 2^385). */
static float silu_of(float xf)
{
    const double x = xf;
    return xf == -INFINITY ? -0.0f : (float)(x / (1.0 + exp(-x)));
}

static float gelu_of(float xf)
{
    const double x = xf;
    return xf == -INFINITY ? -0.0f : (float)(0.5 * x * erfc(-x * 0.70710678118654752440));
}

static float gelu_tanh_of(float xf)
{
    const double x = xf, u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return xf == -INFINITY ? -0.0f : (float)(x / (1.0 + exp(-2.0 * u)));
}

/* The element-wise maps: one f32 function each, named in map_table below. abs, neg, floor, ceil, round and sign are
 * exact in f32 (nearbyintf rounds half to even in the default rounding mode: torch.round, ONNX Round); reciprocal
 * is one correctly rounded division; IEEE sqrt is correctly rounded; rsqrt is 1 / sqrt (two roundings: sqrt(-0) =
 * -0, 1 / -0 = -inf). The transcendental ones are computed in double and rounded once to f32 (the double functions
 * err by about 2^-52 relative, so the result is within one f32 ulp, far inside the oracle's 4 ulps), in the forms
 * without overflow or cancellation: softplus as x + log1p(e^-x) above 0 and log1p(e^x) below; softsign x / (1 +
 * |x|), whose limits +-1 at +-inf are said explicitly (inf / inf is NaN). sign keeps +-0 and NaN. */
static float abs_of(float x) { return fabsf(x); }
static float neg_of(float x) { return -x; }
static float floor_of(float x) { return floorf(x); }
static float ceil_of(float x) { return ceilf(x); }
static float round_of(float x) { return nearbyintf(x); }
static float sign_of(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
static float exp_of(float x) { return (float)exp(x); }
static float log_of(float x) { return (float)log(x); }
static float reciprocal_of(float x) { return 1.0f / x; }
static float sqrt_of(float x) { return sqrtf(x); }
static float rsqrt_of(float x) { return 1.0f / sqrtf(x); }
static float softplus_of(float xf)
{
    const double x = xf;
    return (float)(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)));
}
/* mish(x) = x tanh(softplus(x)) in f32 throughout (softplus in its form without overflow, then tanhf and the
 * multiply: the budget's own roundings of docs/budgets/elementwise.md); x = -inf would give -inf * 0: its limit
 * is -0. */
static float mish_of(float x)
{
    if (x == -INFINITY) return -0.0f;
    float sp = x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    return x * tanhf(sp);
}
static float softsign_of(float x) { return isinf(x) ? copysignf(1.0f, x) : x / (1.0f + fabsf(x)); }
static float erf_of(float x) { return (float)erf((double)x); }
static float sin_of(float x) { return (float)sin((double)x); }
static float cos_of(float x) { return (float)cos((double)x); }

/* The unary maps by op name: adding one is a row here and its function above. */
static const struct {
    const char *op;
    cpu_map_fn of;
} map_table[] = {
    {"abs", abs_of},   {"neg", neg_of},       {"floor", floor_of},           {"ceil", ceil_of},
    {"round", round_of}, {"sign", sign_of},   {"exp", exp_of},               {"log", log_of},
    {"sqrt", sqrt_of}, {"rsqrt", rsqrt_of},   {"reciprocal", reciprocal_of}, {"softplus", softplus_of},
    {"softsign", softsign_of}, {"erf", erf_of}, {"sin", sin_of},             {"cos", cos_of},
    {"silu", silu_of}, {"mish", mish_of},
};

cpu_map_fn cpu_unary_map(const char *op)
{
    for (size_t k = 0; k < sizeof map_table / sizeof map_table[0]; k++)
        if (strcmp(map_table[k].op, op) == 0) return map_table[k].of;
    return NULL;
}

static void unary_tile(void *ctx, size_t tile)
{
    const unary_state *st = ctx;
    const int64_t i0 = (int64_t)tile * TILE, len = st->n - i0 < TILE ? st->n - i0 : TILE;
    const float *x = st->x + i0;
    float *y = st->y + i0;
    switch (st->kind) {
    case CPU_UN_CLAMP: st->v->clamp(len, x, y, st->lo, st->hi); break;
    case CPU_UN_SIGMOID: st->v->sigmoid(len, x, y); break;
    case CPU_UN_TANH: st->v->tanh(len, x, y); break;
    case CPU_UN_HARDSIGMOID: st->v->hardsigmoid(len, x, y); break;
    case CPU_UN_HARDSWISH: st->v->hardswish(len, x, y); break;
    case CPU_UN_LEAKY:
        for (int64_t i = 0; i < len; i++) y[i] = x[i] >= 0.0f ? x[i] : st->alpha * x[i];
        break;
    case CPU_UN_ELU: /* expm1f: accurate exp(x) - 1 near 0 */
        for (int64_t i = 0; i < len; i++) y[i] = x[i] > 0.0f ? x[i] : st->alpha * expm1f(x[i]);
        break;
    case CPU_UN_MAP: for (int64_t i = 0; i < len; i++) y[i] = st->of(x[i]); break;
    }
}

static void run_unary(const cpu_plan *p, const cpu_step *s)
{
    unary_state *st = s->state;
    st->x = p->t[s->in[0]].data;
    st->y = p->t[s->out].data;
    cpu_parallel(p, unary_tile, st, (size_t)((st->n + TILE - 1) / TILE));
}

/* A unary step of one kind; lo, hi: the clamp bounds (CPU_UN_CLAMP), alpha: the slope or scale (CPU_UN_LEAKY,
 * CPU_UN_ELU), of: the element function (CPU_UN_MAP). */
static par_status lower_unary_kind(cpu_plan *p, cpu_step *s, cpu_unary_kind kind, cpu_map_fn of, float lo, float hi,
                                   float alpha, par_msg *msg)
{
    unary_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->v = cpu_vops_for(p->isa);
    st->n = p->t[s->out].numel;
    st->kind = kind;
    st->of = of;
    st->lo = lo, st->hi = hi, st->alpha = alpha;
    s->run = run_unary;
    return PAR_OK;
}

/* The op table's unary family: the row's variant is the kind; the clamp family reads its bounds by the kit's rule. */
par_status cpu_lower_unary(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    float lo = -INFINITY, hi = INFINITY, alpha = 0.0f;
    switch ((cpu_unary_kind)s->variant) {
    case CPU_UN_CLAMP: par_clamp_bounds_f32(n, &lo, &hi); break;
    case CPU_UN_LEAKY: alpha = (float)par_attr_float(n, "negative_slope", 0.01); break;
    case CPU_UN_ELU: alpha = (float)par_attr_float(n, "alpha", 1.0); break;
    default: break;
    }
    return lower_unary_kind(p, s, (cpu_unary_kind)s->variant, NULL, lo, hi, alpha, msg);
}

/* A unary map (cpu_unary_map). */
par_status cpu_lower_map(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_map_fn of = cpu_unary_map(s->node->op);
    if (!of) return par_msgf(msg, PAR_UNSUPPORTED, "unary op '%s' is not implemented", s->node->op);
    return lower_unary_kind(p, s, CPU_UN_MAP, of, 0.0f, 0.0f, 0.0f, msg);
}

/* gelu: attribute approximate = "none" (erf form, the default) or "tanh". */
par_status cpu_lower_gelu(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const char *approx = par_attr_str(s->node, "approximate", "none");
    if (strcmp(approx, "none") == 0) return lower_unary_kind(p, s, CPU_UN_MAP, gelu_of, 0.0f, 0.0f, 0.0f, msg);
    if (strcmp(approx, "tanh") == 0) return lower_unary_kind(p, s, CPU_UN_MAP, gelu_tanh_of, 0.0f, 0.0f, 0.0f, msg);
    return par_msgf(msg, PAR_UNSUPPORTED, "gelu: approximate='%s' is neither 'none' nor 'tanh'", approx);
}

/* ---------------------------------------------------------------------------------------------------------------
 * prelu and batch_norm: per-channel (logical dim 1). NHWC: the channel is the innermost index; row-major: channel c
 * owns blocks of `inner` elements.
 * ------------------------------------------------------------------------------------------------------------- */
static void run_prelu(const cpu_plan *p, const cpu_step *s)
{
    const cpu_tensor *xt = &p->t[s->in[0]], *st = &p->t[s->in[1]];
    const float *x = xt->data, *sl = st->data;
    float *y = p->t[s->out].data;
    const int64_t C = xt->rank >= 2 ? xt->dims[1] : 1, per = st->numel == 1 ? 0 : 1;
    if (xt->nhwc) {
        for (int64_t i = 0; i < xt->numel; i += C)
            for (int64_t c = 0; c < C; c++) {
                const float v = x[i + c];
                y[i + c] = v >= 0.0f ? v : sl[c * per] * v;
            }
    } else {
        int64_t inner = 1;
        for (int32_t d = 2; d < xt->rank; d++) inner *= xt->dims[d];
        for (int64_t i = 0; i < xt->numel; i++) {
            const float v = x[i];
            y[i] = v >= 0.0f ? v : sl[((i / inner) % C) * per] * v;
        }
    }
}

par_status cpu_lower_prelu(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]], *sl = &p->t[s->in[1]];
    if (x->rank < 2 && sl->numel != 1)
        return par_msgf(msg, PAR_UNSUPPORTED, "prelu: per-channel slope needs an input of rank >= 2");
    if (sl->numel != 1 && sl->numel != (x->rank >= 2 ? x->dims[1] : 1))
        return par_msgf(msg, PAR_ERROR, "prelu: slope has %lld elements, not 1 or C = %lld", (long long)sl->numel,
                        (long long)x->dims[1]);
    s->run = run_prelu;
    return PAR_OK;
}

/* batch_norm folded at prepare into y = x * s + t, s = w / sqrt(var + eps), t = b - mean * s, both computed in double
 * and rounded once (docs/budgets/elementwise.md: the folded form is within the budget). */
typedef struct bn_state {
    const cpu_vops *v;
    int64_t C;
    float *s, *t; /* C each */
} bn_state;

static void bn_destroy(void *p)
{
    bn_state *st = p;
    if (!st) return;
    free(st->s);
    free(st);
}

static void run_batch_norm(const cpu_plan *p, const cpu_step *s)
{
    const bn_state *st = s->state;
    const cpu_tensor *xt = &p->t[s->in[0]];
    const float *x = xt->data;
    float *y = p->t[s->out].data;
    const int64_t C = st->C;
    if (xt->nhwc) {
        for (int64_t i = 0; i < xt->numel; i += C) st->v->scale_shift(C, x + i, st->s, st->t, y + i);
    } else {
        int64_t inner = 1;
        for (int32_t d = 2; d < xt->rank; d++) inner *= xt->dims[d];
        for (int64_t blk = 0; blk < xt->numel / inner; blk++) {
            const float sc = st->s[blk % C], sh = st->t[blk % C];
            for (int64_t k = 0; k < inner; k++) y[blk * inner + k] = x[blk * inner + k] * sc + sh;
        }
    }
}

par_status cpu_lower_batch_norm(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_graph_desc *g = p->g;
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]];
    if (x->rank < 2) return par_msgf(msg, PAR_ERROR, "batch_norm: input rank %d < 2", x->rank);
    bn_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = bn_destroy;
    st->v = cpu_vops_for(p->isa);
    st->C = x->dims[1];
    st->s = malloc((size_t)st->C * 2 * sizeof(float) + 64);
    if (!st->s) return par_msgf(msg, PAR_ERROR, "out of memory");
    st->t = st->s + st->C;
    const float *w = par_node_input(g, n, 1)->data, *b = par_node_input(g, n, 2)->data;
    const float *mean = par_node_input(g, n, 3)->data, *var = par_node_input(g, n, 4)->data;
    const double eps = (double)(float)par_attr_float(n, "eps", 1e-5);
    for (int64_t c = 0; c < st->C; c++) {
        const double sc = (double)w[c] / sqrt((double)var[c] + eps);
        st->s[c] = (float)sc;
        st->t[c] = (float)((double)b[c] - (double)mean[c] * sc);
    }
    s->run = run_batch_norm;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * softmax / log_softmax: the tensor is physically [outer, L, inner] around the axis (inner = the axis's stride),
 * whatever its layout. inner = 1 is a contiguous row per softmax; inner > 1 runs the inner index as the vector
 * dimension with a max and a sum per column in scratch. exp(x - max) / sum and (x - max) - log(sum), in f32.
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct softmax_state {
    int log_form;
    int64_t outer, L, inner;
    const cpu_vops *v;
} softmax_state;

static void run_softmax(const cpu_plan *p, const cpu_step *s)
{
    const softmax_state *st = s->state;
    const float *x = p->t[s->in[0]].data;
    float *y = p->t[s->out].data;
    const int64_t L = st->L, inner = st->inner;
    for (int64_t o = 0; o < st->outer; o++) {
        const float *xs = x + o * L * inner;
        float *ys = y + o * L * inner;
        if (inner == 1) {
            float m = xs[0];
            for (int64_t l = 1; l < L; l++) m = xs[l] > m ? xs[l] : m;
            for (int64_t l = 0; l < L; l++) ys[l] = xs[l] - m;
            st->v->exp(L, ys, ys);
            float sum = 0.0f;
            for (int64_t l = 0; l < L; l++) sum += ys[l];
            if (st->log_form) {
                const float ls = logf(sum);
                for (int64_t l = 0; l < L; l++) ys[l] = (xs[l] - m) - ls;
            } else {
                for (int64_t l = 0; l < L; l++) ys[l] = ys[l] / sum;
            }
            continue;
        }
        float *mx = s->scratch, *sm = s->scratch + inner;
        memcpy(mx, xs, (size_t)inner * sizeof(float));
        for (int64_t l = 1; l < L; l++)
            for (int64_t k = 0; k < inner; k++) mx[k] = xs[l * inner + k] > mx[k] ? xs[l * inner + k] : mx[k];
        for (int64_t k = 0; k < inner; k++) sm[k] = 0.0f;
        for (int64_t l = 0; l < L; l++) {
            float *yr = ys + l * inner;
            for (int64_t k = 0; k < inner; k++) yr[k] = xs[l * inner + k] - mx[k];
            st->v->exp(inner, yr, yr);
            for (int64_t k = 0; k < inner; k++) sm[k] += yr[k];
        }
        if (st->log_form) {
            for (int64_t k = 0; k < inner; k++) sm[k] = logf(sm[k]);
            for (int64_t l = 0; l < L; l++)
                for (int64_t k = 0; k < inner; k++) ys[l * inner + k] = (xs[l * inner + k] - mx[k]) - sm[k];
        } else {
            for (int64_t l = 0; l < L; l++)
                for (int64_t k = 0; k < inner; k++) ys[l * inner + k] = ys[l * inner + k] / sm[k];
        }
    }
}

par_status cpu_lower_softmax(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const cpu_tensor *x = &p->t[s->in[0]];
    int64_t axis = par_attr_int(s->node, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'axis': out of range for rank %d", x->rank);
    softmax_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->log_form = s->variant == CPU_LOG_SOFTMAX;
    st->v = cpu_vops_for(p->isa);
    st->L = x->dims[axis];
    st->inner = st->L == 1 ? 1 : x->strides[axis];
    if (st->L == 1) {
        st->outer = x->numel;
    } else {
        st->outer = x->numel / (st->L * st->inner);
    }
    if (st->inner > 1) {
        par_status r = cpu_step_scratch(s, (size_t)st->inner * 2, msg);
        if (r != PAR_OK) return r;
    }
    s->run = run_softmax;
    return PAR_OK;
}
