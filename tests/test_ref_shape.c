/*
 * test_ref_shape.c - tests of the reference data movement ops (reference/shape.c): concat, reshape, flatten,
 * permute, pad, slice. Hand-computed values, budgets carried unchanged with their elements, independent
 * formulations (a permutation then its inverse, reshape vs flatten), one chain through the graph builder and the
 * interpreter (defaults filled in by validation), and shape-inference errors naming the attribute or input.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/graph.h"
#include "reference/reference.h"
#include "ref_helpers.h"
#include "tmain.h"

/* ---- helpers ------------------------------------------------------------------------------------------------ */

static void expect_dims(const par_rt *y, int32_t rank, const int64_t *dims)
{
    CU_ASSERT_EQUAL_FATAL(y->rank, rank);
    for (int32_t i = 0; i < rank; i++) CU_ASSERT_EQUAL(y->dims[i], dims[i]);
}

/* Budgets copied from the sources: e = v * 1e-3 everywhere lets a test check e against v. */
static void set_budgets_from_values(par_rt *t)
{
    for (int64_t i = 0; i < t->numel; i++) t->e[i] = fabs(t->v[i]) * 1e-3;
}

static int budgets_follow_values(const par_rt *t)
{
    for (int64_t i = 0; i < t->numel; i++)
        if (t->e[i] != fabs(t->v[i]) * 1e-3) return 0;
    return 1;
}

/* ---- concat ------------------------------------------------------------------------------------------------- */

/* concat of the n_in inputs in along axis: exactly the rank-2 shape dims and the values want, budgets carried along. */
static void expect_concat(int32_t n_in, par_rt *const *in, int64_t axis, const int64_t *dims, const double *want)
{
    par_attr at[1] = {par_a_int("axis", axis)};
    par_rt *y;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_concat, par_ref_concat, "concat", n_in, in, at, 1, &y, &msg), PAR_OK);
    expect_dims(y, 2, dims);
    expect_values(y, want, 0);
    CU_ASSERT(budgets_follow_values(y));
    rt_del(y);
}

/* a [2,2] = [[1,2],[3,4]], b [2,1] = [[5],[6]] along 1 (and -1): [[1,2,5],[3,4,6]];
 * a with c [1,2] = [[7,8]] along 0: [[1,2],[3,4],[7,8]]. Budgets travel with their elements. */
static void test_concat_axes(void)
{
    int64_t d22[2] = {2, 2}, d21[2] = {2, 1}, d12[2] = {1, 2}, d23[2] = {2, 3}, d32[2] = {3, 2};
    double av[4] = {1, 2, 3, 4}, bv[2] = {5, 6}, cv[2] = {7, 8};
    double w1[6] = {1, 2, 5, 3, 4, 6}, w0[6] = {1, 2, 3, 4, 7, 8};
    par_rt *a = rt_of(2, d22, av), *b = rt_of(2, d21, bv), *c = rt_of(2, d12, cv), *y;
    set_budgets_from_values(a), set_budgets_from_values(b), set_budgets_from_values(c);
    par_msg msg;
    par_rt *ab[2] = {a, b}, *ac[2] = {a, c};
    for (int64_t axis = -1; axis <= 1; axis += 2) expect_concat(2, ab, axis, d23, w1);
    expect_concat(2, ac, 0, d32, w0);
    /* three inputs, one of them the same tensor twice: [a | b | a] along 1 */
    par_attr a1[1] = {par_a_int("axis", 1)};
    par_rt *in3[3] = {a, b, a};
    double w3[10] = {1, 2, 5, 1, 2, 3, 4, 6, 3, 4};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_concat, par_ref_concat, "concat", 3, in3, a1, 1, &y, &msg), PAR_OK);
    expect_values(y, w3, 0);
    rt_del(y), rt_del(a), rt_del(b), rt_del(c);
}

/* ---- permute, reshape, flatten ------------------------------------------------------------------------------ */

/* x [2,3,4] with x[i,j,k] = 100i + 10j + k; perm [2,0,1]: y [4,2,3], y[k,i,j] = x[i,j,k]; e.g. y[3,1,2] = 123. */
static void test_permute_values(void)
{
    int64_t d[3] = {2, 3, 4}, dy[3] = {4, 2, 3}, perm[3] = {2, 0, 1};
    par_rt *x = rt_new(PAR_DTYPE_F32, 3, d), *y;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) x->v[i * 12 + j * 4 + k] = 100 * i + 10 * j + k;
    set_budgets_from_values(x);
    par_attr a[1] = {par_a_ints("perm", 3, perm)};
    par_rt *in[1] = {x};
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_permute, par_ref_permute, "permute", 1, in, a, 1, &y, &msg), PAR_OK);
    expect_dims(y, 3, dy);
    double want[24];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) want[k * 6 + i * 3 + j] = 100 * i + 10 * j + k;
    expect_values(y, want, 0);
    CU_ASSERT_EQUAL(y->v[3 * 6 + 1 * 3 + 2], 123);
    CU_ASSERT(budgets_follow_values(y));
    rt_del(y), rt_del(x);
}

/* A random permutation then its inverse is the identity, values and budgets, over random rank 1..6 shapes. */
static void test_permute_inverse_identity(void)
{
    uint64_t s = 121;
    for (int trial = 0; trial < 30; trial++) {
        int32_t r = 1 + (int32_t)(rng_next(&s) % 6);
        int64_t d[6], perm[6], inv[6];
        for (int32_t i = 0; i < r; i++) d[i] = 1 + (int64_t)(rng_next(&s) % 4), perm[i] = i;
        for (int32_t i = r - 1; i > 0; i--) { /* Fisher-Yates */
            int32_t j = (int32_t)(rng_next(&s) % (uint64_t)(i + 1));
            int64_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        for (int32_t i = 0; i < r; i++) inv[perm[i]] = i;
        par_rt *x = rt_new(PAR_DTYPE_F32, r, d), *y, *z;
        for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&s, -1, 1), x->e[i] = rng_f(&s, 0, 1);
        par_attr a[1] = {par_a_ints("perm", r, perm)}, b[1] = {par_a_ints("perm", r, inv)};
        par_msg msg;
        par_rt *in[1] = {x};
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_permute, par_ref_permute, "permute", 1, in, a, 1, &y, &msg), PAR_OK);
        for (int32_t i = 0; i < r; i++) CU_ASSERT_EQUAL(y->dims[i], d[perm[i]]);
        in[0] = y;
        CU_ASSERT_EQUAL_FATAL(run_op(par_infer_permute, par_ref_permute, "permute", 1, in, b, 1, &z, &msg), PAR_OK);
        expect_dims(z, r, d);
        CU_ASSERT_EQUAL(memcmp(z->v, x->v, sizeof(double) * (size_t)x->numel), 0);
        CU_ASSERT_EQUAL(memcmp(z->e, x->e, sizeof(double) * (size_t)x->numel), 0);
        rt_del(x), rt_del(y), rt_del(z);
    }
}

/* x [2,3,4,5]: flatten(1, 2) -> [2,12,5] equals reshape [2,-1,5]; flatten defaults (1, -1) -> [2,60] equals
 * reshape [2,60]; flatten(0, -1) -> [120]. The data is the same sequence throughout. */
static void test_reshape_flatten(void)
{
    int64_t d[4] = {2, 3, 4, 5}, r1[3] = {2, -1, 5}, d1[3] = {2, 12, 5}, r2[2] = {2, 60}, d3[1] = {120};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, d), *yf, *yr;
    for (int64_t i = 0; i < x->numel; i++) x->v[i] = (double)i;
    set_budgets_from_values(x);
    par_rt *in[1] = {x};
    par_msg msg;
    par_attr fa[2] = {par_a_int("start_dim", 1), par_a_int("end_dim", 2)};
    par_attr ra[1] = {par_a_ints("shape", 3, r1)};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_flatten, par_ref_copy, "flatten", 1, in, fa, 2, &yf, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_reshape, par_ref_copy, "reshape", 1, in, ra, 1, &yr, &msg), PAR_OK);
    expect_dims(yf, 3, d1);
    expect_dims(yr, 3, d1);
    expect_values(yf, x->v, 0);
    expect_values(yr, x->v, 0);
    CU_ASSERT(budgets_follow_values(yf) && budgets_follow_values(yr));
    rt_del(yf), rt_del(yr);
    par_attr fd[2] = {par_a_int("start_dim", 1), par_a_int("end_dim", -1)}, rb[1] = {par_a_ints("shape", 2, r2)};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_flatten, par_ref_copy, "flatten", 1, in, fd, 2, &yf, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_reshape, par_ref_copy, "reshape", 1, in, rb, 1, &yr, &msg), PAR_OK);
    expect_dims(yf, 2, r2);
    expect_dims(yr, 2, r2);
    rt_del(yf), rt_del(yr);
    par_attr f0[2] = {par_a_int("start_dim", 0), par_a_int("end_dim", -1)};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_flatten, par_ref_copy, "flatten", 1, in, f0, 2, &yf, &msg), PAR_OK);
    expect_dims(yf, 1, d3);
    expect_values(yf, x->v, 0);
    rt_del(yf), rt_del(x);
}

/* ---- pad, slice --------------------------------------------------------------------------------------------- */

/* [[1,2],[3,4]] with pads [1,0, 0,2] (one row before, two columns after), value 9:
 * [[9,9,9,9],[1,2,9,9],[3,4,9,9]]. The fill 9 is exact (budget 0); a fill of 0.1 is not: (u + u_s) * 0.1. */
static void test_pad(void)
{
    int64_t d[2] = {2, 2}, pads[4] = {1, 0, 0, 2}, dy[2] = {3, 4};
    double xv[4] = {1, 2, 3, 4}, want[12] = {9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9};
    par_rt *x = rt_of(2, d, xv), *y;
    set_budgets_from_values(x);
    par_rt *in[1] = {x};
    par_msg msg;
    par_attr a[2] = {par_a_ints("pads", 4, pads), par_a_float("value", 9)};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_pad, par_ref_pad, "pad", 1, in, a, 2, &y, &msg), PAR_OK);
    expect_dims(y, 2, dy);
    expect_values(y, want, 0);
    CU_ASSERT_EQUAL(y->e[0], 0);
    CU_ASSERT_EQUAL(y->e[5], 2e-3); /* the element 2 keeps its budget */
    rt_del(y);
    a[1] = par_a_float("value", 0.1);
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_pad, par_ref_pad, "pad", 1, in, a, 2, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[0], 0.1);
    CU_ASSERT_DOUBLE_EQUAL(y->e[0], 2 * 0x1p-24 * 0.1, 1e-22);
    rt_del(y), rt_del(x);
}

/* [0..6] with start -5 (= 2), end default, step 2: [2, 4, 6].
 * [[0..4],[5..9]] along dim -1 with start 1, end -1 (= 4), step 2: columns 1, 3: [[1,3],[6,8]]. */
static void test_slice(void)
{
    int64_t d7[1] = {7}, d25[2] = {2, 5}, d22[2] = {2, 2}, d3[1] = {3};
    double v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, w1[3] = {2, 4, 6}, w2[4] = {1, 3, 6, 8};
    par_rt *x = rt_of(1, d7, v), *x2 = rt_of(2, d25, v), *y;
    set_budgets_from_values(x2);
    par_msg msg;
    par_attr a[4] = {par_a_int("dim", 0), par_a_int("start", -5), par_a_int("end", INT64_MAX), par_a_int("step", 2)};
    par_rt *in[1] = {x};
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_slice, par_ref_slice, "slice", 1, in, a, 4, &y, &msg), PAR_OK);
    expect_dims(y, 1, d3);
    expect_values(y, w1, 0);
    rt_del(y);
    par_attr b[4] = {par_a_int("dim", -1), par_a_int("start", 1), par_a_int("end", -1), par_a_int("step", 2)};
    in[0] = x2;
    CU_ASSERT_EQUAL_FATAL(run_op(par_infer_slice, par_ref_slice, "slice", 1, in, b, 4, &y, &msg), PAR_OK);
    expect_dims(y, 2, d22);
    expect_values(y, w2, 0);
    CU_ASSERT(budgets_follow_values(y));
    rt_del(y), rt_del(x), rt_del(x2);
}

/* ---- through the graph builder and the interpreter ---------------------------------------------------------- */

/* x [1,2,3] -> pad (last dim, 1 before) -> slice (dim 2, defaults otherwise: the whole dim) -> flatten (defaults)
 * -> concat (default axis 1) with itself: the builder fills the defaults and the interpreter runs every kernel.
 * x = [[[1,2,3],[4,5,6]]]: pad -> [[[0,1,2,3],[0,4,5,6]]], flatten -> [[0,1,2,3,0,4,5,6]], concat -> twice. */
static void test_graph_chain(void)
{
    par_msg msg;
    par_graph *g = par_graph_create("chain");
    int64_t d[3] = {1, 2, 3}, pads[6] = {0, 0, 0, 0, 1, 0};
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 3, d, &msg);
    CU_ASSERT_FATAL(x >= 0);
    par_attr pa[1] = {par_a_ints("pads", 6, pads)}, sa[1] = {par_a_int("dim", 2)};
    int32_t n;
    int32_t in1[1] = {x};
    n = par_graph_add_node(g, "pad", "p", 1, in1, 1, pa, NULL, &msg);
    CU_ASSERT_FATAL(n >= 0);
    in1[0] = par_graph_find_value(g, "p");
    n = par_graph_add_node(g, "slice", "s", 1, in1, 1, sa, NULL, &msg);
    CU_ASSERT_FATAL(n >= 0);
    in1[0] = par_graph_find_value(g, "s");
    n = par_graph_add_node(g, "flatten", "f", 1, in1, 0, NULL, NULL, &msg);
    CU_ASSERT_FATAL(n >= 0);
    int32_t in2[2] = {par_graph_find_value(g, "f"), par_graph_find_value(g, "f")};
    n = par_graph_add_node(g, "concat", "c", 2, in2, 0, NULL, NULL, &msg);
    if (n < 0) fprintf(stderr, "\n  %s", msg.text);
    CU_ASSERT_FATAL(n >= 0);
    int32_t out = par_graph_find_value(g, "c");
    CU_ASSERT_EQUAL_FATAL(par_graph_mark_output(g, out, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(par_graph_finalize(g, &msg), PAR_OK);
    const par_graph_desc *desc = par_graph_desc_of(g);
    CU_ASSERT_EQUAL(desc->values[out].rank, 2);
    CU_ASSERT(desc->values[out].dims[0] == 1 && desc->values[out].dims[1] == 16);
    float xin[6] = {1, 2, 3, 4, 5, 6};
    const void *inputs[1] = {xin};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    par_ref_result *r = NULL;
    CU_ASSERT_EQUAL_FATAL(par_ref_run(desc, &p, inputs, &r, &msg), PAR_OK);
    double want[16] = {0, 1, 2, 3, 0, 4, 5, 6, 0, 1, 2, 3, 0, 4, 5, 6};
    expect_values(&r->values[out], want, 0);
    for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(r->values[out].e[i], 0); /* exact ops on exact inputs */
    par_ref_result_destroy(r);
    par_graph_destroy(g);
}

/* ---- shape inference errors --------------------------------------------------------------------------------- */

static void test_infer_errors(void)
{
    int64_t d23[2] = {2, 3}, d33[2] = {3, 3}, d4[1] = {4};
    par_rt *a = rt_new(PAR_DTYPE_F32, 2, d23), *b = rt_new(PAR_DTYPE_F32, 2, d33), *c = rt_new(PAR_DTYPE_F32, 1, d4);
    par_msg msg;
    par_rt *ab[2] = {a, b}, *ac[2] = {a, c}, *aa[1] = {a};
    par_attr ax1[1] = {par_a_int("axis", 1)}, ax2[1] = {par_a_int("axis", 2)}, ax0[1] = {par_a_int("axis", 0)};
    expect_error(run_op(par_infer_concat, NULL, "concat", 2, ab, ax1, 1, NULL, &msg), &msg, "input 1");
    CU_ASSERT_EQUAL(run_op(par_infer_concat, NULL, "concat", 2, ab, ax0, 1, NULL, &msg), PAR_OK);
    expect_error(run_op(par_infer_concat, NULL, "concat", 2, ab, ax2, 1, NULL, &msg), &msg, "'axis'");
    expect_error(run_op(par_infer_concat, NULL, "concat", 2, ac, ax0, 1, NULL, &msg), &msg, "input 1");
    int64_t s_bad[2] = {4, 2}, s_two[3] = {-1, -1, 6}, s_zero[2] = {0, 6}, s_neg[2] = {-2, -3}, s_ok[3] = {3, -1, 1};
    par_attr r1[1] = {par_a_ints("shape", 2, s_bad)}, r2[1] = {par_a_ints("shape", 3, s_two)};
    par_attr r3[1] = {par_a_ints("shape", 2, s_zero)}, r4[1] = {par_a_ints("shape", 2, s_neg)};
    par_attr r5[1] = {par_a_ints("shape", 3, s_ok)};
    expect_error(run_op(par_infer_reshape, NULL, "reshape", 1, aa, r1, 1, NULL, &msg), &msg, "'shape'");
    expect_error(run_op(par_infer_reshape, NULL, "reshape", 1, aa, r2, 1, NULL, &msg), &msg, "-1");
    expect_error(run_op(par_infer_reshape, NULL, "reshape", 1, aa, r3, 1, NULL, &msg), &msg, "0 is not allowed");
    expect_error(run_op(par_infer_reshape, NULL, "reshape", 1, aa, r4, 1, NULL, &msg), &msg, "'shape'");
    CU_ASSERT_EQUAL(run_op(par_infer_reshape, NULL, "reshape", 1, aa, r5, 1, NULL, &msg), PAR_OK);
    par_attr f1[2] = {par_a_int("start_dim", 1), par_a_int("end_dim", 0)};
    par_attr f2[2] = {par_a_int("start_dim", 2), par_a_int("end_dim", -1)};
    expect_error(run_op(par_infer_flatten, NULL, "flatten", 1, aa, f1, 2, NULL, &msg), &msg, "start_dim");
    expect_error(run_op(par_infer_flatten, NULL, "flatten", 1, aa, f2, 2, NULL, &msg), &msg, "start_dim");
    int64_t p_dup[2] = {0, 0}, p_short[1] = {0}, p_range[2] = {0, 2};
    par_attr pm1[1] = {par_a_ints("perm", 2, p_dup)}, pm2[1] = {par_a_ints("perm", 1, p_short)};
    par_attr pm3[1] = {par_a_ints("perm", 2, p_range)};
    expect_error(run_op(par_infer_permute, NULL, "permute", 1, aa, pm1, 1, NULL, &msg), &msg, "'perm'");
    expect_error(run_op(par_infer_permute, NULL, "permute", 1, aa, pm2, 1, NULL, &msg), &msg, "'perm'");
    expect_error(run_op(par_infer_permute, NULL, "permute", 1, aa, pm3, 1, NULL, &msg), &msg, "'perm'");
    int64_t pd_short[2] = {1, 1}, pd_neg[4] = {0, 0, -1, 0};
    par_attr pd1[2] = {par_a_ints("pads", 2, pd_short), par_a_float("value", 0)};
    par_attr pd2[2] = {par_a_ints("pads", 4, pd_neg), par_a_float("value", 0)};
    par_attr pd3[2] = {par_a_ints("pads", 4, pd_neg), par_a_float("value", NAN)};
    pd_neg[2] = 0;
    expect_error(run_op(par_infer_pad, NULL, "pad", 1, aa, pd1, 2, NULL, &msg), &msg, "'pads'");
    expect_error(run_op(par_infer_pad, NULL, "pad", 1, aa, pd3, 2, NULL, &msg), &msg, "'value'");
    pd_neg[2] = -1;
    expect_error(run_op(par_infer_pad, NULL, "pad", 1, aa, pd2, 2, NULL, &msg), &msg, "'pads'");
    par_attr sl1[4] = {par_a_int("dim", 1), par_a_int("start", 0), par_a_int("end", 3), par_a_int("step", 0)};
    par_attr sl2[4] = {par_a_int("dim", 1), par_a_int("start", 2), par_a_int("end", -1), par_a_int("step", 1)};
    par_attr sl3[4] = {par_a_int("dim", 2), par_a_int("start", 0), par_a_int("end", 3), par_a_int("step", 1)};
    expect_error(run_op(par_infer_slice, NULL, "slice", 1, aa, sl1, 4, NULL, &msg), &msg, "'step'");
    expect_error(run_op(par_infer_slice, NULL, "slice", 1, aa, sl2, 4, NULL, &msg), &msg, "no element");
    expect_error(run_op(par_infer_slice, NULL, "slice", 1, aa, sl3, 4, NULL, &msg), &msg, "'dim'");
    rt_del(a), rt_del(b), rt_del(c);
}

static const CU_TestInfo tests[] = {
    {"concat along 0, 1, -1", test_concat_axes},
    {"permute values", test_permute_values},
    {"permute then inverse", test_permute_inverse_identity},
    {"reshape and flatten", test_reshape_flatten},
    {"pad", test_pad},
    {"slice", test_slice},
    {"graph chain through the interpreter", test_graph_chain},
    {"shape inference errors", test_infer_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_shape", tests)
