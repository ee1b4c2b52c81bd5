/*
 * ref_helpers.h - the shared harness of the reference kernel tests (tests/test_ref_*.c): par_rt tensors built and
 * freed here, a one-node graph view around one kernel (shape inference, then the kernel, with inputs whose budgets
 * a test sets at will), value and error checks, the tests' own deterministic generator, and error/budget ratio
 * statistics. Everything is static inline, so each test program compiles its own copy and uses what it needs.
 *
 * It must not hold test logic or tolerances of its own beyond what a caller passes in, nor depend on the graph
 * builder or the interpreter: kernels are called directly, so a failure points at the kernel under test.
 */
#ifndef PAR_TESTS_REF_HELPERS_H
#define PAR_TESTS_REF_HELPERS_H

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "tmain.h" /* PAR_TEST_NOTE */

/* ---- tensors ------------------------------------------------------------------------------------------------ */

/* float32 arithmetic: unit roundoff 2^-24 inside ops and in storage, 8 ulps for an elementary function */
static const par_prec F32 = {.u = 0x1p-24, .u_store = 0x1p-24, .fn_ulps = 8.0};

typedef par_status (*infer_fn)(const par_graph_desc *, const par_node *, par_value *, par_msg *);
typedef par_status (*ref_fn)(const par_ref_ctx *, const par_rt *const *, par_rt *const *, par_msg *);

/* A zeroed tensor (values and budgets) of the given dtype and shape. */
static inline par_rt *rt_new(par_dtype dt, int32_t rank, const int64_t *dims)
{
    par_rt *t = calloc(1, sizeof *t);
    t->dtype = dt;
    t->rank = rank;
    t->numel = 1;
    for (int32_t i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        t->numel *= dims[i];
    }
    t->v = calloc((size_t)t->numel, sizeof(double));
    t->e = calloc((size_t)t->numel, sizeof(double));
    return t;
}

/* A float32 tensor holding v (numel values), budgets 0. */
static inline par_rt *rt_of(int32_t rank, const int64_t *dims, const double *v)
{
    par_rt *t = rt_new(PAR_DTYPE_F32, rank, dims);
    for (int64_t i = 0; i < t->numel; i++) t->v[i] = v[i];
    return t;
}

static inline void rt_del(par_rt *t)
{
    if (!t) return;
    free(t->v);
    free(t->e);
    free(t->s);
    free(t);
}

/* ---- a one-node harness ------------------------------------------------------------------------------------- */

/* Quantization of the one-node graph's values (inputs and output). */
typedef struct qspec {
    par_dtype out_dtype; /* 0: default (input 0's) */
    float out_scale, in_scale;
    int32_t out_zp, in_zp;
} qspec;

/* Infer the output of one node, then (when ref is set) run its kernel; *y gets the output (caller frees) when the
 * run succeeded. in[i] may be NULL for an absent optional input (not in[0]); q NULL: float values (scale 1).
 * any: NULL, or where the output's marks (par_ref_ctx.any, one byte per element, caller frees) go; scales: the
 * output gets scales s for the kernel to fill (those that compute them: the linear combinations). */
static inline par_status run_opq_ex(infer_fn infer, ref_fn ref, const char *op, int32_t n_in, par_rt *const *in,
                                    const par_attr *attrs, int32_t n_attrs, const par_prec *prec, const qspec *q,
                                    par_rt **y, par_msg *msg, uint8_t **any, int scales)
{
    par_value vals[9];
    int32_t ins[8], outs[1] = {n_in};
    memset(vals, 0, sizeof vals);
    for (int32_t i = 0; i < n_in; i++) {
        ins[i] = in[i] ? i : -1;
        if (!in[i]) continue;
        vals[i].dtype = in[i]->dtype;
        vals[i].rank = in[i]->rank;
        memcpy(vals[i].dims, in[i]->dims, sizeof vals[i].dims);
        vals[i].numel = in[i]->numel;
        vals[i].kind = PAR_VALUE_INPUT;
        vals[i].producer = -1;
        vals[i].quant_axis = -1;
        vals[i].scale = q ? q->in_scale : 1.0f;
        vals[i].zero_point = q ? q->in_zp : 0;
    }
    par_value *o = &vals[n_in];
    o->dtype = q && q->out_dtype ? q->out_dtype : in[0]->dtype;
    o->kind = PAR_VALUE_NODE;
    o->quant_axis = -1;
    o->scale = q ? q->out_scale : 1.0f;
    o->zero_point = q ? q->out_zp : 0;
    par_node node = {.name = "t", .op = op, .n_inputs = n_in, .inputs = ins, .n_outputs = 1, .outputs = outs,
                     .n_attrs = n_attrs, .attrs = attrs};
    par_graph_desc g = {.name = "t", .n_values = n_in + 1, .values = vals, .n_nodes = 1, .nodes = &node};
    msg->text[0] = 0;
    par_status st = infer(&g, &node, o, msg);
    if (y) *y = NULL;
    if (st != PAR_OK || !ref) return st;
    par_rt *out = rt_new(o->dtype, o->rank, o->dims);
    if (scales) out->s = calloc((size_t)out->numel, sizeof(double));
    par_ref_ctx c = {.g = &g, .n = &node, .prec = *prec};
    if (any) *any = c.any = calloc((size_t)out->numel + 1, 1);
    const par_rt *cin[8] = {0};
    for (int32_t i = 0; i < n_in; i++) cin[i] = in[i];
    st = ref(&c, cin, &out, msg);
    if (st == PAR_OK && y) *y = out;
    else rt_del(out);
    return st;
}

static inline par_status run_opq(infer_fn infer, ref_fn ref, const char *op, int32_t n_in, par_rt *const *in,
                                 const par_attr *attrs, int32_t n_attrs, const par_prec *prec, const qspec *q,
                                 par_rt **y, par_msg *msg)
{
    return run_opq_ex(infer, ref, op, n_in, in, attrs, n_attrs, prec, q, y, msg, NULL, 0);
}

/* run_opq in float32 with float values. */
static inline par_status run_op(infer_fn infer, ref_fn ref, const char *op, int32_t n_in, par_rt *const *in,
                                const par_attr *attrs, int32_t n_attrs, par_rt **y, par_msg *msg)
{
    return run_opq(infer, ref, op, n_in, in, attrs, n_attrs, &F32, NULL, y, msg);
}

/* ---- checks ------------------------------------------------------------------------------------------------- */

/* Every budget of t is finite and >= 0. */
static inline int budgets_ok(const par_rt *t)
{
    for (int64_t i = 0; i < t->numel; i++)
        if (!(t->e[i] >= 0) || !isfinite(t->e[i])) return 0;
    return 1;
}

/* Every value of y within tol of want (NaN never is), and every budget sound. */
static inline void expect_values(const par_rt *y, const double *want, double tol)
{
    int bad = 0;
    for (int64_t i = 0; i < y->numel; i++)
        if (!(fabs(y->v[i] - want[i]) <= tol)) {
            if (bad++ < 4) fprintf(stderr, "\n  element %lld: got %.17g, want %.17g", (long long)i, y->v[i], want[i]);
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(budgets_ok(y));
}

/* y has exactly the shape rank/dims (fatal otherwise) and exactly the values want (== compare, so an infinity
 * matches itself), and every budget sound. */
static inline void expect_exact(const par_rt *y, int32_t rank, const int64_t *dims, const double *want)
{
    CU_ASSERT_EQUAL_FATAL(y->rank, rank);
    for (int32_t i = 0; i < rank; i++) CU_ASSERT_EQUAL_FATAL(y->dims[i], dims[i]);
    int bad = 0;
    for (int64_t i = 0; i < y->numel; i++)
        if (y->v[i] != want[i]) {
            if (bad++ < 4) fprintf(stderr, "\n  element %lld: got %.17g, want %.17g", (long long)i, y->v[i], want[i]);
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(budgets_ok(y));
}

/* st is PAR_ERROR and the message names needle (an attribute, an input, a reason). */
static inline void expect_error(par_status st, const par_msg *msg, const char *needle)
{
    CU_ASSERT_EQUAL(st, PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg->text, needle));
    if (st != PAR_ERROR || !strstr(msg->text, needle))
        fprintf(stderr, "\n  expected an error naming %s, got %d '%s'", needle, (int)st, msg->text);
}

/* ---- deterministic random inputs ---------------------------------------------------------------------------- */

/* splitmix64: the tests' own deterministic generator. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t rng_int(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [lo, hi), rounded to float so that a float32 computation sees the same operands. */
static inline double rng_f(uint64_t *s, double lo, double hi)
{
    return (double)(float)(lo + (hi - lo) * (double)(rng_next(s) >> 11) * 0x1p-53);
}

/* Uniform in [-1, 1), rounded to float so that a float32 computation sees the same operands. */
static inline double rng_val(uint64_t *s) { return (double)(float)((double)(rng_next(s) >> 11) * 0x1p-52 - 1.0); }

/* A float32 tensor of rng_val values, budgets 0. */
static inline par_rt *rt_rand(int32_t rank, const int64_t *dims, uint64_t *s)
{
    par_rt *t = rt_new(PAR_DTYPE_F32, rank, dims);
    for (int64_t i = 0; i < t->numel; i++) t->v[i] = rng_val(s);
    return t;
}

/* A float32 value held by a backend whose input carries budget e: x moved by up to e, rounded to float. */
static inline float held(uint64_t *s, double x, double e)
{
    /* 0.9: the float rounding of the moved value (u|x|) must stay inside the budget's remaining tenth */
    return (float)(x + e * (2 * rng_f(s, 0, 1) - 1) * 0.9);
}

/* ---- error / budget statistics ------------------------------------------------------------------------------ */

/* Ratio statistics of observed / budget over a run. */
typedef struct ratio {
    double max;
    int64_t over, n;
} ratio;

static inline void ratio_add(ratio *r, double got, double want, double budget)
{
    double d = fabs(got - want);
    if (d > budget && r->over < 3)
        fprintf(stderr, "\n  over budget: got %.9g want %.17g budget %.3g", got, want, budget);
    double q = budget > 0 ? d / budget : (d > 0 ? INFINITY : 0);
    if (q > r->max) r->max = q;
    if (d > budget) r->over++;
    r->n++;
}

/* No element over its budget, and the largest ratio below 1. */
static inline void ratio_report(const char *what, const ratio *r)
{
    PAR_TEST_NOTE("\n  %-34s max error/budget %.3f over %lld elements", what, r->max, (long long)r->n);
    CU_ASSERT_EQUAL(r->over, 0);
    CU_ASSERT(r->max < 1.0);
}

#endif
