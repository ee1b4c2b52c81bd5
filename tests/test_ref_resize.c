/*
 * test_ref_resize.c - tests of the reference upsample_nearest2d and upsample_bilinear2d (reference/resize.c):
 * hand-computed values (scale 2, size 3 -> 5, bilinear 2x2 -> 4x4 with align_corners 0 and 1, scale vs size), the
 * separable formulation (along W, then along H, computed here), error budgets (sound against f32 index and lerp
 * arithmetic, tight enough that align_corners flipped or a 1% error exceeds them), and shape-inference errors.
 *
 * Kernels are called directly on a one-node graph view (tests/ref_helpers.h), so budgets of inputs can be set at will.
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

typedef struct up_p {
    int32_t n_size, n_scale;
    int64_t size[2];
    double scale[2];
    int64_t align_corners;
} up_p;

static par_status upsample(int bilinear, const up_p *p, par_rt *x, par_rt **y, par_msg *msg)
{
    par_attr a[3];
    int32_t n = 0;
    a[n++] = par_a_ints("size", p->n_size, p->size);
    a[n++] = par_a_floats("scale", p->n_scale, p->scale);
    if (bilinear) a[n++] = par_a_int("align_corners", p->align_corners);
    par_rt *in[1] = {x};
    return run_op(par_infer_upsample2d, bilinear ? par_ref_upsample_bilinear2d : par_ref_upsample_nearest2d,
                  bilinear ? "upsample_bilinear2d" : "upsample_nearest2d", 1, in, a, n, y, msg);
}

static up_p by_size(int64_t oh, int64_t ow, int64_t ac)
{
    up_p p = {2, 0, {oh, ow}, {0, 0}, ac};
    return p;
}

static up_p by_scale(double sh, double sw, int64_t ac)
{
    up_p p = {0, 2, {0, 0}, {sh, sw}, ac};
    return p;
}

static void expect_shape(const par_rt *y, int64_t n, int64_t c, int64_t h, int64_t w)
{
    CU_ASSERT_EQUAL_FATAL(y->rank, 4);
    CU_ASSERT(y->dims[0] == n && y->dims[1] == c && y->dims[2] == h && y->dims[3] == w);
}

/* ---- nearest ------------------------------------------------------------------------------------------------ */

/* [[1,2],[3,4]] with scale 2: src = floor(dst / 2) = 0,0,1,1 on each axis. */
static void test_nearest_scale2(void)
{
    int64_t d[4] = {1, 1, 2, 2};
    double xv[4] = {1, 2, 3, 4};
    double want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    par_rt *x = rt_of(4, d, xv), *y;
    par_msg msg;
    up_p p = by_scale(2, 2, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(0, &p, x, &y, &msg), PAR_OK);
    expect_shape(y, 1, 1, 4, 4);
    expect_values(y, want, 0);
    for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(y->e[i], 0); /* dst/2 is never within ulps of an integer */
    rt_del(y), rt_del(x);
}

/* W 3 -> 5 by size: src = floor(dst * 3 / 5) = floor(0, 0.6, 1.2, 1.8, 2.4) = 0,0,1,1,2: [10,10,20,20,30].
 * W 6 -> 9: dst = 3 gives exactly 2: an f32 ratio 6/9 rounded down would give 1, so the budget admits x[1]:
 * |20 - 10| + 0 = 10; dst = 4 (8/3 = 2.67) is unambiguous. */
static void test_nearest_size(void)
{
    int64_t d3[4] = {1, 1, 1, 3}, d6[4] = {1, 1, 1, 6};
    double xv[6] = {10, 20, 30, 40, 50, 60}, want[5] = {10, 10, 20, 20, 30};
    par_rt *x3 = rt_of(4, d3, xv), *x6 = rt_of(4, d6, xv), *y;
    par_msg msg;
    up_p p = by_size(1, 5, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(0, &p, x3, &y, &msg), PAR_OK);
    expect_shape(y, 1, 1, 1, 5);
    expect_values(y, want, 0);
    rt_del(y);
    p = by_size(1, 9, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(0, &p, x6, &y, &msg), PAR_OK);
    CU_ASSERT_EQUAL(y->v[3], 30);
    CU_ASSERT_EQUAL(y->e[3], 10);
    CU_ASSERT_EQUAL(y->v[4], 30);
    CU_ASSERT_EQUAL(y->e[4], 0);
    rt_del(y), rt_del(x3), rt_del(x6);
}

/* f32 index arithmetic (floorf(dst * ((float)in / out)) and with the scale's reciprocal) selects an element within
 * the budget, over random sizes; the neighbour of an unambiguous element is outside it. */
static void test_nearest_budget_f32(void)
{
    uint64_t s = 81;
    ratio r = {0, 0, 0};
    int64_t ambiguous = 0, wrong_caught = 0, wrong_n = 0;
    for (int trial = 0; trial < 60; trial++) {
        int64_t h = 1 + (int64_t)(rng_next(&s) % 12), w = 1 + (int64_t)(rng_next(&s) % 12);
        int use_scale = trial % 2;
        double sc[2] = {0.5 + (double)(rng_next(&s) % 8) * 0.25, 0.5 + (double)(rng_next(&s) % 8) * 0.25};
        int64_t oh = use_scale ? (int64_t)floor(h * sc[0]) : 1 + (int64_t)(rng_next(&s) % 30);
        int64_t ow = use_scale ? (int64_t)floor(w * sc[1]) : 1 + (int64_t)(rng_next(&s) % 30);
        if (oh < 1 || ow < 1) continue;
        int64_t d[4] = {1, 2, h, w};
        par_rt *x = rt_new(PAR_DTYPE_F32, 4, d), *y;
        for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&s, -1, 1);
        up_p p = use_scale ? by_scale(sc[0], sc[1], 0) : by_size(oh, ow, 0);
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(upsample(0, &p, x, &y, &msg), PAR_OK);
        expect_shape(y, 1, 2, oh, ow);
        float rh = use_scale ? (float)(1.0 / sc[0]) : (float)h / (float)oh;
        float rw = use_scale ? (float)(1.0 / sc[1]) : (float)w / (float)ow;
        for (int64_t c = 0; c < 2; c++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t si = (int64_t)floorf((float)i * rh), sj = (int64_t)floorf((float)j * rw);
                    /* PyTorch's same-size and double-size rules (docs/ops.md): integer indices, whatever the scale */
                    if (oh == h || oh == 2 * h) si = oh == h ? i : i / 2;
                    if (ow == w || ow == 2 * w) sj = ow == w ? j : j / 2;
                    si = si < h - 1 ? si : h - 1;
                    sj = sj < w - 1 ? sj : w - 1;
                    int64_t k = (c * oh + i) * ow + j;
                    ratio_add(&r, x->v[(c * h + si) * w + sj], y->v[k], y->e[k]);
                    ambiguous += y->e[k] > 0;
                    if (y->e[k] == 0 && w > 1) { /* the horizontal neighbour is a wrong selection */
                        int64_t nj = sj + 1 < w ? sj + 1 : sj - 1;
                        double alt = x->v[(c * h + si) * w + nj];
                        if (alt != y->v[k]) wrong_n++, wrong_caught += fabs(alt - y->v[k]) > y->e[k];
                    }
                }
        rt_del(x), rt_del(y);
    }
    ratio_report("upsample_nearest2d f32 index", &r);
    PAR_TEST_NOTE(" (%lld ambiguous)", (long long)ambiguous);
    CU_ASSERT(wrong_n > 100);
    CU_ASSERT_EQUAL(wrong_caught, wrong_n);
}

/* ---- bilinear ----------------------------------------------------------------------------------------------- */

/* [[1,2],[3,4]] -> 4x4. y is the plane 1 + sw + 2 sh at the source coordinates (sh, sw).
 * align_corners 0, r = 1/2: src = max(0, (d + 0.5) / 2 - 0.5) = 0, 0.25, 0.75, 1.25 (i0 = i1 = 1 there, so 1):
 *   rows [1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4].
 * align_corners 1: src = d / 3 = 0, 1/3, 2/3, 1:
 *   rows [1, 4/3, 5/3, 2], [5/3, 2, 7/3, 8/3], [7/3, 8/3, 3, 10/3], [3, 10/3, 11/3, 4].
 * Scale [2, 2] gives the same as size [4, 4] (r = 1/2 both ways). */
static void test_bilinear_2x2_to_4x4(void)
{
    int64_t d[4] = {1, 1, 2, 2};
    double xv[4] = {1, 2, 3, 4};
    double w0[16] = {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4};
    double w1[16] = {1, 4.0 / 3, 5.0 / 3, 2, 5.0 / 3, 2, 7.0 / 3, 8.0 / 3,
                     7.0 / 3, 8.0 / 3, 3, 10.0 / 3, 3, 10.0 / 3, 11.0 / 3, 4};
    par_rt *x = rt_of(4, d, xv), *y;
    par_msg msg;
    up_p p = by_size(4, 4, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &p, x, &y, &msg), PAR_OK);
    expect_shape(y, 1, 1, 4, 4);
    expect_values(y, w0, 1e-15);
    rt_del(y);
    p = by_scale(2, 2, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &p, x, &y, &msg), PAR_OK);
    expect_values(y, w0, 1e-15);
    rt_del(y);
    p = by_size(4, 4, 1);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &p, x, &y, &msg), PAR_OK);
    expect_values(y, w1, 1e-15);
    rt_del(y), rt_del(x);
}

/* Scale vs size when they disagree: H 3 with scale 1.5 gives out 4 but ratio 1/1.5, size 4 gives ratio 3/4.
 * dst 1 (align_corners 0): scale: (1.5)(2/3) - 0.5 = 0.5; size: 1.5 * 0.75 - 0.5 = 0.625. x rows [0, 8, 16]
 * (constant along W): 4 and 5. With align_corners 1 the ratio comes from the sizes: both give 1 * 2/3 * 8 = 16/3. */
static void test_bilinear_scale_vs_size(void)
{
    int64_t d[4] = {1, 1, 3, 2};
    double xv[6] = {0, 0, 8, 8, 16, 16};
    par_rt *x = rt_of(4, d, xv), *ys, *yz;
    par_msg msg;
    up_p ps = by_scale(1.5, 1, 0), pz = by_size(4, 2, 0);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &ps, x, &ys, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &pz, x, &yz, &msg), PAR_OK);
    expect_shape(ys, 1, 1, 4, 2);
    expect_shape(yz, 1, 1, 4, 2);
    CU_ASSERT_DOUBLE_EQUAL(ys->v[2], 4, 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(yz->v[2], 5, 1e-14);
    rt_del(ys), rt_del(yz);
    ps.align_corners = pz.align_corners = 1;
    CU_ASSERT_EQUAL_FATAL(upsample(1, &ps, x, &ys, &msg), PAR_OK);
    CU_ASSERT_EQUAL_FATAL(upsample(1, &pz, x, &yz, &msg), PAR_OK);
    CU_ASSERT_DOUBLE_EQUAL(ys->v[2], 16.0 / 3, 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(yz->v[2], 16.0 / 3, 1e-14);
    rt_del(ys), rt_del(yz), rt_del(x);
}

/* The test's own source coordinate (docs/ops.md), in double or in float. */
static double coord(int64_t dst, int64_t in, int64_t out, double scale, int ac)
{
    if (in == out) return (double)dst; /* the same size copies the axis (docs/ops.md) */
    if (ac) return out > 1 ? (double)dst * (double)(in - 1) / (double)(out - 1) : 0;
    double r = scale > 0 ? 1 / scale : (double)in / (double)out;
    return fmax(0, (dst + 0.5) * r - 0.5);
}

/* In float, in one of two forms: PyTorch's and TFLite's (form 0) multiply by the ratio in / out (or 1 / scale);
 * ONNX's Resize (form 1, half_pixel) divides by the scale out / in (or the scale given), as ONNX Runtime computes it. */
static float coord_f(int64_t dst, int64_t in, int64_t out, double scale, int ac, int form)
{
    if (in == out) return (float)dst;
    if (ac) return out > 1 ? (float)dst * ((float)(in - 1) / (float)(out - 1)) : 0.0f;
    if (form == 1) {
        float q = scale > 0 ? (float)scale : (float)out / (float)in;
        return fmaxf(0.0f, ((float)dst + 0.5f) / q - 0.5f);
    }
    float r = scale > 0 ? (float)(1 / scale) : (float)in / (float)out;
    return fmaxf(0.0f, ((float)dst + 0.5f) * r - 0.5f);
}

/* Separable interpolation: along W into a temporary of [H, OW], then along H (use_float 0: double; 1: float lerps
 * and coordinates of form 0; 2: float lerps and coordinates of form 1). */
static void separable(const double *x, int64_t h, int64_t w, int64_t oh, int64_t ow, const double *sc, int ac,
                      int use_float, int flip_ac, double *y)
{
    double *t = malloc(sizeof(double) * (size_t)(h * ow));
    int a = flip_ac ? !ac : ac;
    for (int pass = 0; pass < 2; pass++) {
        int64_t in = pass ? h : w, out = pass ? oh : ow, other = pass ? ow : h;
        for (int64_t dst = 0; dst < out; dst++) {
            double s = use_float ? coord_f(dst, in, out, sc[1 - pass], a, use_float - 1)
                                 : coord(dst, in, out, sc[1 - pass], a);
            int64_t i0 = (int64_t)floor(s);
            if (i0 > in - 1) i0 = in - 1;
            int64_t i1 = i0 + 1 < in ? i0 + 1 : in - 1;
            double l = use_float ? (double)((float)s - (float)i0) : s - (double)i0;
            for (int64_t o = 0; o < other; o++) {
                double a0 = pass ? t[i0 * ow + o] : x[o * w + i0], a1 = pass ? t[i1 * ow + o] : x[o * w + i1];
                double v = use_float ? (double)((float)a0 + (float)l * ((float)a1 - (float)a0)) : (1 - l) * a0 + l * a1;
                if (pass) y[dst * ow + o] = v;
                else t[o * ow + dst] = v;
            }
        }
    }
    free(t);
}

/* A random bilinear geometry: input [1,1,h,w] to output [1,1,oh,ow], given by scale (sc > 0) or by size. */
typedef struct geom {
    int64_t h, w, oh, ow;
    double sc[2];
    int ac;
    up_p p;
} geom;

/* Draws g; returns a zeroed input x [1,1,h,w] for it, or NULL when the output would be empty. */
static par_rt *random_geometry(uint64_t *s, geom *g)
{
    g->h = 1 + (int64_t)(rng_next(s) % 9);
    g->w = 1 + (int64_t)(rng_next(s) % 9);
    g->ac = (int)(rng_next(s) % 2);
    if (rng_next(s) % 2) {
        g->sc[0] = 0.75 + (double)(rng_next(s) % 12) * 0.25;
        g->sc[1] = 0.75 + (double)(rng_next(s) % 12) * 0.25;
        g->oh = (int64_t)floor(g->h * g->sc[0]);
        g->ow = (int64_t)floor(g->w * g->sc[1]);
    } else {
        g->sc[0] = g->sc[1] = 0;
        g->oh = 1 + (int64_t)(rng_next(s) % 20);
        g->ow = 1 + (int64_t)(rng_next(s) % 20);
    }
    if (g->oh < 1 || g->ow < 1) return NULL;
    g->p = g->sc[0] > 0 ? by_scale(g->sc[0], g->sc[1], g->ac) : by_size(g->oh, g->ow, g->ac);
    int64_t d[4] = {1, 1, g->h, g->w};
    return rt_new(PAR_DTYPE_F32, 4, d);
}

/* The reference equals the separable form computed here (double), over random geometries. */
static void test_bilinear_vs_separable(void)
{
    uint64_t s = 91;
    int tried = 0;
    for (int trial = 0; trial < 80; trial++) {
        geom g;
        par_rt *x = random_geometry(&s, &g), *y;
        if (!x) continue;
        for (int64_t i = 0; i < x->numel; i++) x->v[i] = rng_f(&s, -3, 3);
        par_msg msg;
        CU_ASSERT_EQUAL_FATAL(upsample(1, &g.p, x, &y, &msg), PAR_OK);
        expect_shape(y, 1, 1, g.oh, g.ow);
        double *want = malloc(sizeof(double) * (size_t)(g.oh * g.ow));
        separable(x->v, g.h, g.w, g.oh, g.ow, g.sc, g.ac, 0, 0, want);
        expect_values(y, want, 1e-12);
        free(want);
        rt_del(x), rt_del(y);
        tried++;
    }
    CU_ASSERT(tried > 50);
}

/* Float32 separable lerps with f32 coordinates lie within the budget (inputs exact and perturbed); the same with
 * align_corners flipped, or 1% off, does not. */
static void test_bilinear_budget_f32(void)
{
    uint64_t s = 101;
    for (int with_e = 0; with_e < 4; with_e++) { /* inputs exact / perturbed, x coordinates of form 0 / 1 */
        ratio r = {0, 0, 0};
        int64_t flip_over = 0, flip_diff = 0, off_over = 0, off_n = 0;
        for (int trial = 0; trial < 80; trial++) {
            geom g;
            par_rt *x = random_geometry(&s, &g), *y;
            if (!x) continue;
            double *xh = malloc(sizeof(double) * (size_t)(g.h * g.w));
            for (int64_t i = 0; i < x->numel; i++) {
                x->v[i] = rng_f(&s, -3, 3);
                x->e[i] = with_e % 2 ? 1e-6 : 0;
                xh[i] = held(&s, x->v[i], x->e[i]);
            }
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(upsample(1, &g.p, x, &y, &msg), PAR_OK);
            int64_t n = g.oh * g.ow;
            double *got = malloc(sizeof(double) * (size_t)n), *flip = malloc(sizeof(double) * (size_t)n);
            separable(xh, g.h, g.w, g.oh, g.ow, g.sc, g.ac, 1 + with_e / 2, 0, got);
            separable(x->v, g.h, g.w, g.oh, g.ow, g.sc, g.ac, 0, 1, flip);
            for (int64_t i = 0; i < n; i++) {
                ratio_add(&r, got[i], y->v[i], y->e[i]);
                if (fabs(flip[i] - y->v[i]) > 1e-3) flip_diff++, flip_over += fabs(flip[i] - y->v[i]) > y->e[i];
                if (fabs(y->v[i]) > 0.1) off_n++, off_over += 0.01 * fabs(y->v[i]) > y->e[i];
            }
            free(xh), free(got), free(flip);
            rt_del(x), rt_del(y);
        }
        static const char *const what[4] = {"upsample_bilinear2d f32", "upsample_bilinear2d f32 (perturbed)",
                                            "upsample_bilinear2d f32, ONNX coordinates",
                                            "upsample_bilinear2d f32, ONNX coordinates (perturbed)"};
        ratio_report(what[with_e], &r);
        CU_ASSERT(flip_diff > 100);
        CU_ASSERT_EQUAL(flip_over, flip_diff);
        CU_ASSERT(off_n > 100);
        CU_ASSERT_EQUAL(off_over, off_n);
    }
}

/* Integer ratios (13 -> 1, 27 -> 3, every in <= 200 to out <= 3): the ratio in / out is exact in f32 but the scale
 * out / in that ONNX's Resize divides by is not, so ONNX Runtime's coordinate is off by a few u where PyTorch's is
 * exact; that is a correct implementation, within the budget (inputs of alternating sign, the neighbours' difference
 * twice their size). Downsampling by 2^k is exact both ways. */
static void test_bilinear_onnx_integer_ratio(void)
{
    uint64_t s = 131;
    ratio r = {0, 0, 0};
    int64_t moved = 0;
    for (int64_t in = 2; in <= 200; in++)
        for (int64_t ow = 1; ow <= 3; ow++) {
            if (in % ow) continue;
            geom g = {.h = 2, .w = in, .oh = 1, .ow = ow, .sc = {0, 0}, .ac = 0};
            g.p = by_size(g.oh, g.ow, 0);
            int64_t d[4] = {1, 1, g.h, g.w};
            par_rt *x = rt_new(PAR_DTYPE_F32, 4, d), *y;
            for (int64_t i = 0; i < x->numel; i++) x->v[i] = (i % 2 ? -1 : 1) * rng_f(&s, 2, 3); /* D ~ 2M */
            par_msg msg;
            CU_ASSERT_EQUAL_FATAL(upsample(1, &g.p, x, &y, &msg), PAR_OK);
            double got[3], pt[3];
            separable(x->v, g.h, g.w, g.oh, g.ow, g.sc, g.ac, 2, 0, got);
            separable(x->v, g.h, g.w, g.oh, g.ow, g.sc, g.ac, 1, 0, pt);
            for (int64_t i = 0; i < ow; i++) {
                ratio_add(&r, got[i], y->v[i], y->e[i]);
                moved += got[i] != pt[i];
            }
            rt_del(x), rt_del(y);
        }
    ratio_report("bilinear ONNX coordinates, in/out int", &r);
    CU_ASSERT(moved > 0); /* the two forms differ somewhere: the check is not vacuous */
}

/* ---- shape inference errors --------------------------------------------------------------------------------- */

static void test_infer_errors(void)
{
    int64_t d4[4] = {1, 2, 3, 3}, d3[3] = {2, 3, 3};
    par_rt *x = rt_new(PAR_DTYPE_F32, 4, d4), *x3 = rt_new(PAR_DTYPE_F32, 3, d3), *y;
    par_msg msg;
    up_p p = by_size(6, 6, 0);
    expect_error(upsample(0, &p, x3, &y, &msg), &msg, "input 0 (x)");
    up_p both = {2, 2, {6, 6}, {2, 2}, 0}, neither = {0, 0, {0, 0}, {0, 0}, 0};
    expect_error(upsample(0, &both, x, &y, &msg), &msg, "exactly one");
    expect_error(upsample(1, &neither, x, &y, &msg), &msg, "exactly one");
    up_p three = {1, 0, {6, 6}, {0, 0}, 0};
    expect_error(upsample(0, &three, x, &y, &msg), &msg, "'size'");
    up_p zero = by_size(0, 6, 0);
    expect_error(upsample(0, &zero, x, &y, &msg), &msg, "'size'");
    up_p neg = by_scale(-1, 2, 0), tiny = by_scale(0.1, 2, 0), inf = by_scale(INFINITY, 2, 0);
    expect_error(upsample(0, &neg, x, &y, &msg), &msg, "'scale'");
    expect_error(upsample(0, &tiny, x, &y, &msg), &msg, "'scale'"); /* floor(3 * 0.1) = 0 */
    expect_error(upsample(1, &inf, x, &y, &msg), &msg, "'scale'");
    up_p ac = by_size(6, 6, 2);
    expect_error(upsample(1, &ac, x, &y, &msg), &msg, "align_corners");
    rt_del(x), rt_del(x3);
}

static const CU_TestInfo tests[] = {
    {"nearest scale 2", test_nearest_scale2},
    {"nearest by size", test_nearest_size},
    {"nearest budget f32", test_nearest_budget_f32},
    {"bilinear 2x2 to 4x4", test_bilinear_2x2_to_4x4},
    {"bilinear scale vs size", test_bilinear_scale_vs_size},
    {"bilinear vs separable", test_bilinear_vs_separable},
    {"bilinear budget f32", test_bilinear_budget_f32},
    {"bilinear ONNX coordinates, integer ratios", test_bilinear_onnx_integer_ratio},
    {"shape inference errors", test_infer_errors},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("ref_resize", tests)
