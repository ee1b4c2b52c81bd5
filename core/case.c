/*
 * case.c - the case builder (sticky error), the seeded input generators (par_gen_fill), the materialization of a
 * case's inputs, and the JSON writer (par_case_to_json). The JSON reader is in case_json.c.
 *
 * Must not: validate graphs (graph.c does arity, attributes and shapes), depend on anything but the seed for the
 * bytes it generates, ever produce NaN or an infinity from a generator, or write text that is not JSON.
 */
#include "case.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "prng.h"
#include "tensor.h"

/* ------------------------------------------------------------------------------------------------------------------
 * Generators
 * ---------------------------------------------------------------------------------------------------------------- */

static int is_real(par_dtype dt)
{
    return dt == PAR_DTYPE_F32 || dt == PAR_DTYPE_F16 || dt == PAR_DTYPE_F64;
}

/* The largest finite value of a real dtype: generator bounds must stay within it, so no value rounds to infinity. */
static double real_max(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return FLT_MAX;
    case PAR_DTYPE_F16: return 65504.0;
    default: return DBL_MAX / 16; /* f64: headroom so a + (b - a) * u cannot overflow */
    }
}

static void int_range(par_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case PAR_DTYPE_QU8: *lo = 0; *hi = 255; return;
    case PAR_DTYPE_QS8: *lo = -128; *hi = 127; return;
    default: *lo = INT32_MIN; *hi = INT32_MAX; return;
    }
}

/* Round half to even, then saturate to [lo, hi]. Saturation happens in double first, so any finite v is safe. */
static int64_t round_clamp(double v, int64_t lo, int64_t hi)
{
    if (v <= (double)lo) return lo;
    if (v >= (double)hi) return hi;
    double f = floor(v);
    double d = v - f; /* exact: |v| < 2^31, and v - floor(v) in [0, 1) is a multiple of ulp(v) */
    int64_t q = (int64_t)f;
    if (d > 0.5 || (d == 0.5 && (q & 1))) q++;
    return q < lo ? lo : q > hi ? hi : q;
}

static void store_real(par_dtype dt, void *out, int64_t i, double v)
{
    assert(isfinite(v)); /* generators never make NaN or infinities: the JSON writer could not express them */
    switch (dt) {
    case PAR_DTYPE_F32: ((float *)out)[i] = (float)v; break;
    case PAR_DTYPE_F16: ((uint16_t *)out)[i] = par_f32_to_f16((float)v); break;
    case PAR_DTYPE_F64: ((double *)out)[i] = v; break;
    default: break;
    }
}

static void store_int(par_dtype dt, void *out, int64_t i, int64_t q)
{
    switch (dt) {
    case PAR_DTYPE_QU8: ((uint8_t *)out)[i] = (uint8_t)q; break;
    case PAR_DTYPE_QS8: ((int8_t *)out)[i] = (int8_t)q; break;
    case PAR_DTYPE_I32: ((int32_t *)out)[i] = (int32_t)q; break;
    default: break;
    }
}

/* Three times the smallest positive subnormal of the dtype (so it is not also the smallest). */
static double tiny_subnormal(par_dtype dt)
{
    switch (dt) {
    case PAR_DTYPE_F32: return 3 * 0x1p-149;
    case PAR_DTYPE_F16: return 3 * 0x1p-24;
    default: return 3 * 0x1p-1074;
    }
}

/* EDGE for real dtypes. One of 24 equally likely choices per element (m = max after fan_in scaling, u uniform in
 * [0, 1) drawn after the choice):
 *   0 +0   1 -0   2 +1   3 -1   4 +0.5   5 -0.5   6 +1.5   7 -1.5   8 +2.5   9 -2.5   (ties for round-half-even)
 *   10 +1e-30   11 -1e-30   12 +s   13 -s   (s = 3 x the dtype's smallest subnormal)
 *   14 +m   15 -m   16 +m(1 - u/256)   17 -m(1 - u/256)   18..23 uniform in [-m, m): -m + 2m u
 * Values are then rounded to the dtype (so 1e-30 is +-0 in f16). */
static double edge_real(par_prng *r, par_dtype dt, double m)
{
    static const double fixed[10] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5};
    int64_t k = par_prng_int(r, 0, 23);
    if (k < 10) return fixed[k];
    switch (k) {
    case 10: return 1e-30;
    case 11: return -1e-30;
    case 12: return tiny_subnormal(dt);
    case 13: return -tiny_subnormal(dt);
    case 14: return m;
    case 15: return -m;
    case 16: return m * (1.0 - par_prng_uniform(r) * 0x1p-8);
    case 17: return -m * (1.0 - par_prng_uniform(r) * 0x1p-8);
    default: return -m + 2.0 * m * par_prng_uniform(r);
    }
}

/* EDGE for integer dtypes, within [lo, hi] = the type's range intersected with [-floor(m), floor(m)] (the whole
 * type's range when m < 1). One of 12 equally likely choices: 0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1, and three
 * uniform integers in [lo, hi]; each clamped to [lo, hi]. */
static int64_t edge_int(par_prng *r, int64_t lo, int64_t hi)
{
    static const int64_t small[5] = {0, 1, -1, 2, -2};
    int64_t k = par_prng_int(r, 0, 11), q;
    if (k < 5) q = small[k];
    else if (k == 5) q = lo;
    else if (k == 6) q = hi;
    else if (k == 7) q = lo + 1;
    else if (k == 8) q = hi - 1;
    else q = par_prng_int(r, lo, hi);
    return q < lo ? lo : q > hi ? hi : q;
}

static int64_t fan_in_of(int32_t rank, const int64_t *dims)
{
    if (rank == 0) return 1;
    if (rank == 1) return dims[0];
    int64_t f = 1;
    for (int32_t i = 1; i < rank; i++) f *= dims[i];
    return f;
}

par_status par_gen_check(const par_gen *g, par_dtype dt, par_msg *msg)
{
    if (par_dtype_size(dt) == 0) return par_msgf(msg, PAR_ERROR, "invalid dtype %d", (int)dt);
    if (g->dist < PAR_DIST_UNIFORM || g->dist > PAR_DIST_EDGE)
        return par_msgf(msg, PAR_ERROR, "unknown distribution %d", (int)g->dist);
    if (!isfinite(g->a) || !isfinite(g->b))
        return par_msgf(msg, PAR_ERROR, "generator parameters must be finite numbers");
    const double lim = real_max(dt);
    const int real = is_real(dt);
    switch (g->dist) {
    case PAR_DIST_UNIFORM:
        if (!(g->a <= g->b))
            return par_msgf(msg, PAR_ERROR, "uniform: low %.9g is greater than high %.9g", g->a, g->b);
        if (real && (fabs(g->a) > lim || fabs(g->b) > lim))
            return par_msgf(msg, PAR_ERROR, "uniform: bounds must lie within +-%.9g for %s", lim, par_dtype_name(dt));
        if (!real && !g->fan_in && ceil(g->a) > floor(g->b))
            return par_msgf(msg, PAR_ERROR, "uniform: [%.9g, %.9g] contains no integer", g->a, g->b);
        break;
    case PAR_DIST_NORMAL:
        if (g->b < 0) return par_msgf(msg, PAR_ERROR, "normal: std %.9g is negative", g->b);
        /* Irwin-Hall values lie within mean +- 6 std. */
        if (real && (fabs(g->a) > lim || g->b > lim / 8 || fabs(g->a) + 6.0 * g->b > lim))
            return par_msgf(msg, PAR_ERROR, "normal: mean +- 6 std must lie within +-%.9g for %s", lim,
                            par_dtype_name(dt));
        break;
    case PAR_DIST_CONST:
        if (real && fabs(g->a) > lim)
            return par_msgf(msg, PAR_ERROR, "const: %.9g is outside +-%.9g for %s", g->a, lim, par_dtype_name(dt));
        break;
    case PAR_DIST_EDGE:
        if (g->b < 0) return par_msgf(msg, PAR_ERROR, "edge: max %.9g is negative", g->b);
        if (real && g->b > lim)
            return par_msgf(msg, PAR_ERROR, "edge: max %.9g is beyond %.9g for %s", g->b, lim, par_dtype_name(dt));
        break;
    }
    return PAR_OK;
}

void par_gen_fill(const par_gen *g, par_dtype dt, int32_t rank, const int64_t *dims, void *out)
{
    const int64_t n = par_shape_numel(rank, dims);
    double a = g->a, b = g->b;
    if (g->fan_in) {
        /* sqrt is correctly rounded (IEEE 754), so a / sqrt(f) is the same everywhere. */
        const double s = sqrt((double)fan_in_of(rank, dims));
        a /= s;
        b /= s;
    }
    par_prng r;
    par_prng_seed(&r, g->seed);

    if (is_real(dt)) {
        for (int64_t i = 0; i < n; i++) {
            double v;
            switch (g->dist) {
            case PAR_DIST_UNIFORM: v = a + (b - a) * par_prng_uniform(&r); break;
            case PAR_DIST_NORMAL: v = a + b * par_prng_normal(&r); break;
            case PAR_DIST_EDGE: v = edge_real(&r, dt, b); break;
            default: v = a; break;
            }
            store_real(dt, out, i, v);
        }
        return;
    }

    int64_t tlo, thi;
    int_range(dt, &tlo, &thi);
    int64_t lo = tlo, hi = thi;
    if (g->dist == PAR_DIST_UNIFORM) {
        /* Draw uniformly in [ceil(a), floor(b)], then saturate each draw to the type: a range wider than the type
         * piles values on its ends, on purpose (saturation is under test too). Bounds beyond +-2^40 are cut there
         * first, far outside every integer dtype, so no int64 arithmetic overflows. */
        const int64_t big = INT64_C(1) << 40;
        lo = round_clamp(ceil(a), -big, big);
        hi = round_clamp(floor(b), -big, big);
        if (hi < lo) hi = lo; /* only after fan_in scaling emptied the interval: then it is the one integer lo */
    } else if (g->dist == PAR_DIST_EDGE && b >= 1.0) {
        int64_t m = round_clamp(floor(b), 0, INT64_C(1) << 40);
        if (m < thi) hi = m;
        if (-m > tlo) lo = -m;
        if (hi < lo) hi = lo;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t q;
        switch (g->dist) {
        case PAR_DIST_UNIFORM: q = par_prng_int(&r, lo, hi), q = q < tlo ? tlo : q > thi ? thi : q; break;
        case PAR_DIST_NORMAL: q = round_clamp(a + b * par_prng_normal(&r), tlo, thi); break;
        case PAR_DIST_EDGE: q = edge_int(&r, lo, hi); break;
        default: q = round_clamp(a, tlo, thi); break;
        }
        store_int(dt, out, i, q);
    }
}

/* ------------------------------------------------------------------------------------------------------------------
 * Builder
 * ---------------------------------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int32_t fail(par_case *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.text, sizeof c->err.text, fmt, ap);
    va_end(ap);
    c->status = PAR_ERROR;
    return -1;
}

static int live(par_case *c)
{
    return c && c->status == PAR_OK && c->graph;
}

/* The seed of a generator whose seed is 0: derived from the tensor's name and the case seed, never 0. */
static uint64_t derive_seed(const char *name, uint64_t case_seed)
{
    uint64_t s = par_hash_str(name, case_seed);
    return s ? s : 1;
}

/* Shape checks shared by the builders, before the graph sees the tensor: the graph repeats them, but the size must
 * be known to be sane before this file allocates numel * size bytes. */
static int check_tensor(par_case *c, const char *what, const char *name, par_dtype dt, int32_t rank,
                        const int64_t *dims)
{
    if (!name || !*name) return fail(c, "%s: missing name", what), 0;
    if (dt != PAR_DTYPE_F32 && dt != PAR_DTYPE_F16 && dt != PAR_DTYPE_QU8 && dt != PAR_DTYPE_QS8 &&
        dt != PAR_DTYPE_I32)
        return fail(c, "%s '%.60s': dtype %s is not a case dtype", what, name, par_dtype_name(dt)), 0;
    if (rank < 0 || rank > PAR_MAX_RANK || (rank > 0 && !dims))
        return fail(c, "%s '%.60s': rank %d is outside 0..%d", what, name, (int)rank, PAR_MAX_RANK), 0;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return fail(c, "%s '%.60s': dimension %d is %lld; must be >= 1", what, name, (int)i, (long long)dims[i]),
                   0;
        if (dims[i] > PAR_CASE_MAX_ELEMS || n > PAR_CASE_MAX_ELEMS / dims[i])
            return fail(c, "%s '%.60s': more than %lld elements", what, name, (long long)PAR_CASE_MAX_ELEMS), 0;
        n *= dims[i];
    }
    return 1;
}

static par_tensor_src *push_src(par_case *c)
{
    par_tensor_src *s = realloc(c->srcs, sizeof *s * (size_t)(c->n_srcs + 1));
    if (!s) return NULL;
    c->srcs = s;
    memset(&s[c->n_srcs], 0, sizeof *s);
    return &s[c->n_srcs];
}

/* The checks of an input or constant (what) filled by a generator: the tensor, the generator for dt, and its seed
 * derived from the name when it has none. 0 with the case failed. */
static int check_gen(par_case *c, const char *what, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                     par_gen *gen)
{
    if (!live(c) || !check_tensor(c, what, name, dt, rank, dims)) return 0;
    par_msg m;
    if (par_gen_check(gen, dt, &m) != PAR_OK) return fail(c, "%s '%.60s': init: %s", what, name, m.text), 0;
    if (gen->seed == 0) gen->seed = derive_seed(name, c->seed);
    return 1;
}

/* Complete the source s (the one push_src gave) of value v, filled by gen; returns v. */
static int32_t keep_gen_src(par_case *c, par_tensor_src *s, int32_t v, const par_gen *gen)
{
    s->value = v;
    s->kind = PAR_SRC_GEN;
    s->gen = *gen;
    c->n_srcs++;
    return v;
}

static size_t tensor_bytes(par_dtype dt, int32_t rank, const int64_t *dims)
{
    size_t n = (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt);
    return n ? n : 1;
}

par_case *par_case_create(const char *id, uint64_t seed)
{
    par_case *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->id = strdup(id ? id : "");
    c->graph = par_graph_create(id && *id ? id : "case");
    if (!c->id || !c->graph) {
        par_case_destroy(c);
        return NULL;
    }
    c->seed = seed;
    c->status = PAR_OK;
    return c;
}

void par_case_destroy(par_case *c)
{
    if (!c) return;
    for (int32_t i = 0; i < c->n_srcs; i++) {
        free(c->srcs[i].data);
        free(c->srcs[i].file);
    }
    free(c->srcs);
    par_graph_destroy(c->graph);
    free(c->id);
    free(c->origin);
    free(c->description);
    free(c);
}

int32_t par_case_input(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen)
{
    if (!check_gen(c, "input", name, dt, rank, dims, &gen)) return -1;
    par_tensor_src *s = push_src(c);
    if (!s) return fail(c, "out of memory");
    int32_t v = par_graph_add_input(c->graph, name, dt, rank, dims, &c->err);
    if (v < 0) return c->status = PAR_ERROR, -1;
    return keep_gen_src(c, s, v, &gen);
}

int32_t par_case_input_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data)
{
    if (!live(c) || !check_tensor(c, "input", name, dt, rank, dims)) return -1;
    if (!data) return fail(c, "input '%.60s': no data", name);
    size_t bytes = tensor_bytes(dt, rank, dims);
    void *copy = malloc(bytes);
    par_tensor_src *s = copy ? push_src(c) : NULL;
    if (!s) return free(copy), fail(c, "out of memory");
    memcpy(copy, data, (size_t)par_shape_numel(rank, dims) * par_dtype_size(dt));
    int32_t v = par_graph_add_input(c->graph, name, dt, rank, dims, &c->err);
    if (v < 0) return free(copy), c->status = PAR_ERROR, -1;
    s->value = v;
    s->kind = PAR_SRC_INLINE;
    s->data = copy;
    c->n_srcs++;
    return v;
}

int32_t par_case_const(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims, par_gen gen)
{
    if (!check_gen(c, "constant", name, dt, rank, dims, &gen)) return -1;
    void *buf = malloc(tensor_bytes(dt, rank, dims));
    par_tensor_src *s = buf ? push_src(c) : NULL;
    if (!s) return free(buf), fail(c, "out of memory");
    par_gen_fill(&gen, dt, rank, dims, buf);
    int32_t v = par_graph_add_const(c->graph, name, dt, rank, dims, buf, &c->err);
    free(buf);
    if (v < 0) return c->status = PAR_ERROR, -1;
    return keep_gen_src(c, s, v, &gen);
}

int32_t par_case_const_data(par_case *c, const char *name, par_dtype dt, int32_t rank, const int64_t *dims,
                            const void *data)
{
    if (!live(c) || !check_tensor(c, "constant", name, dt, rank, dims)) return -1;
    if (!data) return fail(c, "constant '%.60s': no data", name);
    par_tensor_src *s = push_src(c);
    if (!s) return fail(c, "out of memory");
    int32_t v = par_graph_add_const(c->graph, name, dt, rank, dims, data, &c->err);
    if (v < 0) return c->status = PAR_ERROR, -1;
    s->value = v;
    s->kind = PAR_SRC_INLINE; /* the data lives in the graph */
    c->n_srcs++;
    return v;
}

void par_case_quant(par_case *c, int32_t value, float scale, int32_t zero_point)
{
    if (!live(c)) return;
    if (par_graph_set_quant(c->graph, value, scale, zero_point, &c->err) != PAR_OK) c->status = PAR_ERROR;
}

int32_t par_case_node(par_case *c, const char *op, int32_t n_inputs, const int32_t *inputs, int32_t n_attrs,
                      const par_attr *attrs, const par_out_spec *out)
{
    if (!live(c)) return -1;
    if (!op) return fail(c, "node: missing op");
    if (n_inputs < 0 || (n_inputs > 0 && !inputs) || n_attrs < 0 || (n_attrs > 0 && !attrs))
        return fail(c, "node (%.60s): bad input or attribute list", op);
    int32_t k = par_graph_add_node(c->graph, op, NULL, n_inputs, inputs, n_attrs, attrs, out, &c->err);
    if (k < 0) return c->status = PAR_ERROR, -1;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    return d->nodes[k].outputs[0];
}

void par_case_output(par_case *c, int32_t value)
{
    if (!live(c)) return;
    if (par_graph_mark_output(c->graph, value, &c->err) != PAR_OK) c->status = PAR_ERROR;
}

par_status par_case_finish(par_case *c)
{
    if (!c) return PAR_ERROR;
    if (!live(c)) {
        if (c->status == PAR_OK) return fail(c, "case has no graph"), PAR_ERROR;
        return c->status;
    }
    if (par_graph_finalize(c->graph, &c->err) != PAR_OK) c->status = PAR_ERROR;
    return c->status;
}

/* ------------------------------------------------------------------------------------------------------------------
 * Materialization
 * ---------------------------------------------------------------------------------------------------------------- */

par_status par_case_make_inputs(const par_case *c, void ***bufs, par_msg *msg)
{
    *bufs = NULL;
    if (!c || !c->graph || c->status != PAR_OK)
        return par_msgf(msg, PAR_ERROR, "case '%s': not a valid case", c && c->id ? c->id : "?");
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    void **out = calloc((size_t)(d->n_inputs ? d->n_inputs : 1), sizeof *out);
    if (!out) return par_msgf(msg, PAR_ERROR, "out of memory");
    for (int32_t i = 0; i < d->n_inputs; i++) {
        const par_value *v = &d->values[d->inputs[i]];
        const par_tensor_src *s = NULL;
        for (int32_t k = 0; k < c->n_srcs && !s; k++)
            if (c->srcs[k].value == d->inputs[i]) s = &c->srcs[k];
        size_t bytes = (size_t)v->numel * par_dtype_size(v->dtype);
        out[i] = malloc(bytes ? bytes : 1);
        if (!out[i] || !s || (s->kind != PAR_SRC_GEN && !s->data)) {
            par_status st = out[i] ? par_msgf(msg, PAR_ERROR, "case '%s': input '%s' has no data source", c->id,
                                              v->name)
                                   : par_msgf(msg, PAR_ERROR, "out of memory for input '%s'", v->name);
            for (int32_t k = 0; k <= i; k++) free(out[k]);
            free(out);
            return st;
        }
        if (s->kind == PAR_SRC_GEN) par_gen_fill(&s->gen, v->dtype, v->rank, v->dims, out[i]);
        else memcpy(out[i], s->data, bytes);
    }
    *bufs = out;
    return PAR_OK;
}

void par_case_free_inputs(const par_case *c, void **bufs)
{
    if (!bufs) return;
    const par_graph_desc *d = c && c->graph ? par_graph_desc_of(c->graph) : NULL;
    for (int32_t i = 0; d && i < d->n_inputs; i++) free(bufs[i]);
    free(bufs);
}

/* ------------------------------------------------------------------------------------------------------------------
 * Writer (docs/case-format.md). Numbers are printed here, not by json-c: the shortest text that reads back to the
 * same bits (through strtod, as the reader does), "-0.0" for negative zero (json-c reads "-0" as the integer 0), and
 * never NaN or an infinity in data: a case holding one cannot be written (NULL). Float attributes that are infinite
 * are written as the strings "inf" / "-inf", which the reader accepts there.
 * ---------------------------------------------------------------------------------------------------------------- */

typedef struct wbuf {
    char *p;
    size_t n, cap;
    int bad; /* out of memory, or a value JSON cannot hold */
} wbuf;

static void wraw(wbuf *w, const char *s, size_t k)
{
    if (w->bad) return;
    if (w->n + k + 1 > w->cap) {
        size_t nc = w->cap ? w->cap : 4096;
        while (nc < w->n + k + 1) nc *= 2;
        char *np = realloc(w->p, nc);
        if (!np) {
            w->bad = 1;
            return;
        }
        w->p = np;
        w->cap = nc;
    }
    memcpy(w->p + w->n, s, k);
    w->n += k;
    w->p[w->n] = 0;
}

static void wput(wbuf *w, const char *s)
{
    wraw(w, s, strlen(s));
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wputf(wbuf *w, const char *fmt, ...)
{
    char b[160];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof b) w->bad = 1;
    else wraw(w, b, (size_t)k);
}

/* A JSON string: quote, backslash and control characters escaped; other bytes as they are (names are UTF-8). */
static void wstr(wbuf *w, const char *s)
{
    wput(w, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"') wput(w, "\\\"");
        else if (*p == '\\') wput(w, "\\\\");
        else if (*p == '\n') wput(w, "\\n");
        else if (*p == '\t') wput(w, "\\t");
        else if (*p < 0x20 || *p == 0x7f) wputf(w, "\\u%04x", *p);
        else wraw(w, (const char *)p, 1);
    }
    wput(w, "\"");
}

/* Shortest "%.Ng" (N from 6) that reads back exactly: %.17g always does for a double, %.9g for a float (is_f32:
 * the reader rounds the double it parsed to f32, so the text need only round back to the same float). */
static void wnum(wbuf *w, double v, int is_f32)
{
    char b[40];
    if (!isfinite(v)) {
        w->bad = 1;
        return;
    }
    if (v == 0) {
        wput(w, signbit(v) ? "-0.0" : "0");
        return;
    }
    for (int prec = 6; prec <= (is_f32 ? 9 : 17); prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        double r = strtod(b, NULL);
        if (is_f32 ? (float)r == (float)v : r == v) break;
    }
    wput(w, b);
}

static void wf64(wbuf *w, double v) { wnum(w, v, 0); }

static void wf32(wbuf *w, float f) { wnum(w, (double)f, 1); }

static void wshape(wbuf *w, int32_t rank, const int64_t *dims)
{
    wput(w, "[");
    for (int32_t i = 0; i < rank; i++) wputf(w, "%s%lld", i ? ", " : "", (long long)dims[i]);
    wput(w, "]");
}

static void wdata(wbuf *w, par_dtype dt, const void *buf, int64_t n)
{
    const int wrap = n > 8; /* short lists stay on one line; long ones take 8 values a line */
    wput(w, "[");
    for (int64_t i = 0; i < n && !w->bad; i++) {
        if (!wrap) wput(w, i ? ", " : "");
        else wput(w, i == 0 ? "\n        " : i % 8 == 0 ? ",\n        " : ", ");
        switch (dt) {
        case PAR_DTYPE_F32: wf32(w, ((const float *)buf)[i]); break;
        case PAR_DTYPE_F16: wf32(w, par_f16_to_f32(((const uint16_t *)buf)[i])); break;
        case PAR_DTYPE_QU8: wputf(w, "%d", ((const uint8_t *)buf)[i]); break;
        case PAR_DTYPE_QS8: wputf(w, "%d", ((const int8_t *)buf)[i]); break;
        case PAR_DTYPE_I32: wputf(w, "%d", (int)((const int32_t *)buf)[i]); break;
        default: w->bad = 1; break;
        }
    }
    wput(w, wrap ? "\n      ]" : "]");
}

static void wgen(wbuf *w, const par_gen *g, uint64_t derived)
{
    switch (g->dist) {
    case PAR_DIST_UNIFORM: wput(w, "{\"dist\": \"uniform\", \"low\": "), wf64(w, g->a), wput(w, ", \"high\": "); break;
    case PAR_DIST_NORMAL: wput(w, "{\"dist\": \"normal\", \"mean\": "), wf64(w, g->a), wput(w, ", \"std\": "); break;
    case PAR_DIST_CONST: wput(w, "{\"dist\": \"const\", \"value\": "), wf64(w, g->a); break;
    case PAR_DIST_EDGE: wput(w, "{\"dist\": \"edge\", \"max\": "); break;
    default: w->bad = 1; return;
    }
    if (g->dist != PAR_DIST_CONST) wf64(w, g->b);
    if (g->fan_in) wput(w, ", \"fan_in\": true");
    if (g->seed != derived) wputf(w, ", \"seed\": %llu", (unsigned long long)g->seed);
    wput(w, "}");
}

static void wtensor(wbuf *w, const par_case *c, const par_value *v, const par_tensor_src *s, int inline_data)
{
    wput(w, "    {\n      \"name\": ");
    wstr(w, v->name);
    wputf(w, ",\n      \"dtype\": \"%s\",\n      \"shape\": ", par_dtype_name(v->dtype));
    wshape(w, v->rank, v->dims);
    const void *data = v->kind == PAR_VALUE_CONST ? v->data : s ? s->data : NULL;
    void *tmp = NULL;
    if (s && s->kind == PAR_SRC_GEN && !inline_data) {
        wput(w, ",\n      \"init\": ");
        wgen(w, &s->gen, derive_seed(v->name, c->seed));
    } else if (s && s->kind == PAR_SRC_FILE && !inline_data) {
        wput(w, ",\n      \"data\": {\"file\": ");
        wstr(w, s->file);
        wputf(w, ", \"offset\": %lld}", (long long)s->offset);
    } else {
        if (!data && s && s->kind == PAR_SRC_GEN) {
            tmp = malloc(tensor_bytes(v->dtype, v->rank, v->dims));
            if (tmp) par_gen_fill(&s->gen, v->dtype, v->rank, v->dims, tmp);
            data = tmp;
        }
        if (!data) w->bad = 1; /* an input with no known source */
        wput(w, ",\n      \"data\": ");
        if (data) wdata(w, v->dtype, data, v->numel);
    }
    free(tmp);
    if (v->quant_axis >= 0 && v->channel_scales) {
        wputf(w, ",\n      \"quant\": {\"axis\": %d, \"scales\": [", (int)v->quant_axis);
        for (int64_t i = 0; i < v->dims[v->quant_axis]; i++) {
            if (i) wput(w, ", ");
            wf32(w, v->channel_scales[i]);
        }
        wput(w, "]}");
    } else if (v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8 ||
               (v->dtype == PAR_DTYPE_I32 && (v->scale != 1.0f || v->zero_point != 0))) {
        wput(w, ",\n      \"quant\": {\"scale\": ");
        wf32(w, v->scale);
        wputf(w, ", \"zero_point\": %d}", (int)v->zero_point);
    }
    wput(w, "\n    }");
}

static int attr_is_default(const par_attr_spec *sp, const par_attr *a)
{
    const par_attr *d = &sp->def;
    if (!sp->has_default || d->type != a->type) return 0;
    switch (a->type) {
    case PAR_ATTR_INT: return a->i == d->i;
    case PAR_ATTR_FLOAT: return a->f == d->f && !signbit(a->f) == !signbit(d->f);
    case PAR_ATTR_STRING: return a->s && d->s && strcmp(a->s, d->s) == 0;
    case PAR_ATTR_INTS:
    case PAR_ATTR_FLOATS:
        if (a->count != d->count) return 0;
        for (int32_t i = 0; i < a->count; i++)
            if (a->type == PAR_ATTR_INTS ? a->ints[i] != d->ints[i] : a->floats[i] != d->floats[i]) return 0;
        return 1;
    }
    return 0;
}

static void wattr_float(wbuf *w, double f)
{
    if (isinf(f)) wput(w, f > 0 ? "\"inf\"" : "\"-inf\"");
    else wf64(w, f); /* NaN marks the text bad */
}

static void wnode(wbuf *w, const par_graph_desc *d, const par_node *n)
{
    const par_op_info *info = par_op_find(n->op);
    wput(w, "    {\"name\": ");
    wstr(w, n->name);
    wput(w, ", \"op\": ");
    wstr(w, n->op);
    wput(w, ", \"inputs\": [");
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (i) wput(w, ", ");
        if (n->inputs[i] < 0) wput(w, "null");
        else wstr(w, d->values[n->inputs[i]].name);
    }
    wput(w, "]");
    int first = 1;
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const par_attr *a = &n->attrs[i];
        const par_attr_spec *sp = NULL;
        for (int32_t j = 0; info && j < info->n_attrs && !sp; j++)
            if (strcmp(info->attrs[j].name, a->name) == 0) sp = &info->attrs[j];
        if (sp && attr_is_default(sp, a)) continue;
        wput(w, first ? ", \"attrs\": {" : ", ");
        first = 0;
        wstr(w, a->name);
        wput(w, ": ");
        switch (a->type) {
        case PAR_ATTR_INT: wputf(w, "%lld", (long long)a->i); break;
        case PAR_ATTR_FLOAT: wattr_float(w, a->f); break;
        case PAR_ATTR_STRING: wstr(w, a->s); break;
        case PAR_ATTR_INTS:
        case PAR_ATTR_FLOATS:
            wput(w, "[");
            for (int32_t k = 0; k < a->count; k++) {
                if (k) wput(w, ", ");
                if (a->type == PAR_ATTR_INTS) wputf(w, "%lld", (long long)a->ints[k]);
                else wattr_float(w, a->floats[k]);
            }
            wput(w, "]");
            break;
        }
    }
    if (!first) wput(w, "}");
    wput(w, ", \"outputs\": [");
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const par_value *v = &d->values[n->outputs[i]];
        if (i) wput(w, ", ");
        if (v->dtype == PAR_DTYPE_QU8 || v->dtype == PAR_DTYPE_QS8 || v->dtype == PAR_DTYPE_I32) {
            wput(w, "{\"name\": ");
            wstr(w, v->name);
            wputf(w, ", \"dtype\": \"%s\", \"scale\": ", par_dtype_name(v->dtype));
            wf32(w, v->scale);
            wputf(w, ", \"zero_point\": %d}", (int)v->zero_point);
        } else {
            wstr(w, v->name);
        }
    }
    wput(w, "]}");
}

char *par_case_to_json(const par_case *c, int inline_data)
{
    if (!c || !c->graph || c->status != PAR_OK) return NULL;
    const par_graph_desc *d = par_graph_desc_of(c->graph);
    wbuf w = {0};
    int32_t *src_of = malloc(sizeof(int32_t) * (size_t)(d->n_values ? d->n_values : 1));
    if (!src_of) return NULL;
    for (int32_t i = 0; i < d->n_values; i++) src_of[i] = -1;
    for (int32_t k = 0; k < c->n_srcs; k++)
        if (c->srcs[k].value >= 0 && c->srcs[k].value < d->n_values) src_of[c->srcs[k].value] = k;

    wput(&w, "{\n  \"schema\": \"" PAR_CASE_SCHEMA "\",\n");
    wputf(&w, "  \"version\": %d,\n  \"id\": ", PAR_CASE_VERSION);
    wstr(&w, c->id);
    if (c->description) wput(&w, ",\n  \"description\": "), wstr(&w, c->description);
    wputf(&w, ",\n  \"seed\": %llu,\n", (unsigned long long)c->seed);
    if (c->repeat > 0 || c->timeout_s > 0) {
        wput(&w, "  \"options\": {");
        if (c->repeat > 0) wputf(&w, "\"repeat\": %d%s", (int)c->repeat, c->timeout_s > 0 ? ", " : "");
        if (c->timeout_s > 0) wput(&w, "\"timeout_s\": "), wf64(&w, c->timeout_s);
        wput(&w, "},\n");
    }
    for (int pass = 0; pass < 2; pass++) {
        int first = 1;
        int32_t count = pass == 0 ? d->n_inputs : d->n_values;
        for (int32_t i = 0; i < count; i++) {
            int32_t vi = pass == 0 ? d->inputs[i] : i;
            if (pass == 1 && d->values[vi].kind != PAR_VALUE_CONST) continue;
            wput(&w, first ? (pass == 0 ? "  \"inputs\": [\n" : "  \"constants\": [\n") : ",\n");
            first = 0;
            wtensor(&w, c, &d->values[vi], src_of[vi] >= 0 ? &c->srcs[src_of[vi]] : NULL, inline_data);
        }
        if (!first) wput(&w, "\n  ],\n");
    }
    wput(&w, "  \"nodes\": [\n");
    for (int32_t i = 0; i < d->n_nodes; i++) {
        if (i) wput(&w, ",\n");
        wnode(&w, d, &d->nodes[i]);
    }
    wput(&w, "\n  ],\n  \"outputs\": [");
    for (int32_t i = 0; i < d->n_outputs; i++) {
        if (i) wput(&w, ", ");
        wstr(&w, d->values[d->outputs[i]].name);
    }
    wput(&w, "]\n}\n");
    free(src_of);
    if (w.bad) {
        free(w.p);
        return NULL;
    }
    return w.p;
}
