/*
 * resize.c - float64 reference kernels of upsample_nearest2d, upsample_nearest_exact2d, upsample_bilinear2d and
 * upsample_bicubic2d (docs/ops.md, "Resampling"), with the error budget of every output element
 * (docs/budgets/elementwise.md).
 *
 * PyTorch's same-size rule (1.13, scale_factor given, recompute_scale_factor unset): an axis whose output size equals
 * its input size is copied, whatever the scale (nearest, bilinear); nearest also maps dst to dst / 2 when the output
 * size is twice the input size. nearest-exact and bicubic have no such case (PyTorch's cubic index helper computes
 * every coordinate from the scale).
 *
 * Source coordinates are computed exactly (integer arithmetic where the definition allows it, else float64), as the
 * definition reads. Backends compute them in f32, so the budget admits what a coordinate off by a few ulps can do:
 *   nearest: the index floor(dst * r) may land on the neighbour when dst * r is within 4u max(dst * r, 1) of an
 *     integer (r = in/out or 1/scale rounded once, one multiply: 2u relative, doubled); the budget is then the
 *     largest |x_candidate - y| + e(x_candidate) over the candidates, else the selected element's budget;
 *   bilinear: src off by tol = 6u max(src, 1) (align_corners 0: the ratio, the multiply, the two additions of 1/2,
 *     3u (src + 1/2) + u src <= 6u max(src, 1); align_corners 1: 2u src) moves y by at most tol times the largest
 *     neighbour difference along that axis (y is continuous and piecewise linear in src; near an integer the
 *     adjacent cell counts too).
 * Bilinear own rounding: 10u M, M = max over the four neighbours of |x| + e. The weighted-sum form (weights 1 - l
 * and the products: 3u relative, the 4-term dot product gamma_4) is within 7u M; the separable lerp form
 * x0 + l (x1 - x0) costs 5u M per lerp (difference 2uM, multiply 2uM, add uM) and the outer lerp adds its own 5uM
 * to the inner ones' (weighted by 1 - l and l): 10u M covers both.
 * Propagation: sum_k w_k e(x_k). Storage: u_s (|y| + p + own + coord).
 *
 * The kernels see float tensors only (nearest is a selection and would copy any dtype, but the interpreter hands it
 * dequantized reals); they must not allocate nor read anything but their input.
 */
#include "reference.h"

#include <math.h>

#include "core/graph.h"
#include "core/shape.h"

static int is_float(par_dtype t) { return t == PAR_DTYPE_F32 || t == PAR_DTYPE_F16 || t == PAR_DTYPE_F64; }

/* Per-axis geometry at run time. */
typedef struct axis_geom {
    int64_t in, out;
    double scale; /* > 0 when the scale attribute defines this axis, else 0 */
} axis_geom;

static par_status geometry(const par_ref_ctx *c, const char *name, const par_rt *x, const par_rt *y, axis_geom *ax,
                           par_msg *msg)
{
    if (!is_float(x->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: dtype %s reached the float kernel (only f32, f16, f64)", name,
                        par_dtype_name(x->dtype));
    if (x->rank != 4 || y->rank != 4)
        return par_msgf(msg, PAR_ERROR, "%s: input and output must have rank 4", name);
    int64_t ohw[2];
    double sc[2];
    par_status st = par_resize_sizes(c->n, x->dims + 2, ohw, sc, msg);
    if (st != PAR_OK) return st;
    if (y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] || y->dims[2] != ohw[0] || y->dims[3] != ohw[1])
        return par_msgf(msg, PAR_ERROR, "%s: output shape does not match [%lld,%lld,%lld,%lld]", name,
                        (long long)x->dims[0], (long long)x->dims[1], (long long)ohw[0], (long long)ohw[1]);
    for (int32_t i = 0; i < 2; i++) {
        ax[i].in = x->dims[2 + i];
        ax[i].out = ohw[i];
        ax[i].scale = sc[i];
    }
    return PAR_OK;
}

/* Whether x is exactly representable with the significand of the format of unit roundoff u (24 bits for f32):
 * then a backend's coordinate arithmetic on it is exact and no index ambiguity arises. */
static int exact_in(double x, double u)
{
    if (x == 0 || u == 0) return 1;
    int ex;
    double m = frexp(fabs(x), &ex);
    double scaled = ldexp(m, (int)lround(-log2(u)));
    return isfinite(x) && scaled == floor(scaled);
}

/* Tolerance of a backend's coordinate t = a * r (+ c): k u max(t, 1), or 0 when every rounding of it is exact in
 * the arithmetic format: r, its reciprocal, the product and t (power-of-two ratios such as scale 2). The reciprocal
 * is there because ONNX's Resize divides by the scale out / in instead of multiplying by in / out: for 13 -> 1, r = 13
 * is exact but 1/13 is not, and ONNX Runtime's coordinate 6 comes out 3e-7 low (docs/budgets/elementwise.md). */
static double coord_tol(double k, double r, double prod, double t, double u)
{
    if (exact_in(r, u) && (r == 0 || exact_in(1.0 / r, u)) && exact_in(prod, u) && exact_in(t, u)) return 0;
    return k * u * fmax(t, 1.0);
}

/* Nearest: the exact source index, and the range of indices a backend's f32 coordinate may give. exact: 0 for
 * nearest, floor(dst * r); 1 for nearest-exact, floor((dst + 1/2) * r) (dst + 1/2 is exact in f32: one more
 * rounding-free step, so the same 4u tolerance holds). */
static void nearest_src(const axis_geom *a, int64_t dst, int exact, double u, int64_t *src, int64_t *lo, int64_t *hi)
{
    double t, r, d = exact ? (double)dst + 0.5 : (double)dst;
    int64_t s;
    if (!exact && (a->out == a->in || a->out == 2 * a->in)) {
        /* PyTorch's nearest_idx: the same size copies and the double size takes dst / 2, whatever the scale
         * (docs/ops.md, "Resampling"); integer arithmetic, so no neighbour is ever taken */
        s = a->out == a->in ? dst : dst / 2;
        *src = *lo = *hi = s;
        return;
    }
    if (a->scale > 0) {
        r = 1.0 / a->scale;
        t = d * r;
        s = (int64_t)floor(t);
    } else {
        r = (double)a->in / (double)a->out;
        /* floor(dst * in / out) or floor((2 dst + 1) in / (2 out)), exactly */
        s = exact ? (2 * dst + 1) * a->in / (2 * a->out) : dst * a->in / a->out;
        t = d * (double)a->in / (double)a->out;
    }
    double tol = coord_tol(4, r, t, t, u);
    int64_t l = (int64_t)floor(t - tol), h = (int64_t)floor(t + tol);
    if (l > s) l = s;
    if (h < s) h = s;
    int64_t top = a->in - 1;
    *src = s < top ? s : top;
    *lo = l < 0 ? 0 : (l < top ? l : top);
    *hi = h < top ? h : top;
}

static par_status nearest(const par_ref_ctx *c, const char *name, int exact, const par_rt *const *in,
                          par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", name);
    const par_rt *x = in[0];
    par_rt *y = out[0];
    axis_geom ax[2];
    par_status st = geometry(c, name, x, y, ax, msg);
    if (st != PAR_OK) return st;
    int64_t H = ax[0].in, W = ax[1].in, OH = ax[0].out, OW = ax[1].out;
    for (int64_t nc = 0; nc < x->dims[0] * x->dims[1]; nc++) {
        const double *xv = x->v + nc * H * W, *xe = x->e + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t sh, hlo, hhi;
            nearest_src(&ax[0], oh, exact, c->prec.u, &sh, &hlo, &hhi);
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t sw, wlo, whi;
                nearest_src(&ax[1], ow, exact, c->prec.u, &sw, &wlo, &whi);
                int64_t k = nc * OH * OW + oh * OW + ow;
                double v = xv[sh * W + sw], e = xe[sh * W + sw];
                /* A backend may select any candidate: the budget is the farthest one's distance plus its budget. */
                for (int64_t i = hlo; i <= hhi; i++)
                    for (int64_t j = wlo; j <= whi; j++) e = fmax(e, fabs(xv[i * W + j] - v) + xe[i * W + j]);
                y->v[k] = v;
                y->e[k] = e == e ? e : INFINITY;
            }
        }
    }
    return PAR_OK;
}

par_status par_ref_upsample_nearest2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                      par_msg *msg)
{
    return nearest(c, "upsample_nearest2d", 0, in, out, msg);
}

par_status par_ref_upsample_nearest_exact2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                            par_msg *msg)
{
    return nearest(c, "upsample_nearest_exact2d", 1, in, out, msg);
}

/* Bilinear source coordinate of docs/ops.md, in float64, and the tolerance of a backend's f32 one. */
static double bilinear_src(const axis_geom *a, int64_t dst, int align_corners, double u, double *tol)
{
    if (a->in == a->out) { /* PyTorch: the same size copies along the axis, whatever the scale */
        *tol = 0;
        return (double)dst;
    }
    if (align_corners) {
        if (a->out <= 1) {
            *tol = 0;
            return 0.0;
        }
        double r = (double)(a->in - 1) / (double)(a->out - 1);
        double s = (double)(dst * (a->in - 1)) / (double)(a->out - 1);
        *tol = coord_tol(6, r, s, s, u);
        return s;
    }
    double r = a->scale > 0 ? 1.0 / a->scale : (double)a->in / (double)a->out;
    double prod = ((double)dst + 0.5) * r;
    double s = prod - 0.5;
    *tol = coord_tol(6, r, prod, fabs(s), u);
    return s < 0 ? 0 : s;
}

typedef struct bil_axis {
    int64_t i0, i1; /* the two neighbours */
    double l;       /* weight of i1 */
    double tol;     /* error of a backend's f32 coordinate */
    int64_t lo, hi; /* index range whose consecutive differences bound the slope near src */
} bil_axis;

static void bilinear_axis(const axis_geom *a, int64_t dst, int align_corners, double u, bil_axis *b)
{
    double s = bilinear_src(a, dst, align_corners, u, &b->tol);
    int64_t top = a->in - 1;
    b->i0 = (int64_t)floor(s);
    if (b->i0 > top) b->i0 = top;
    b->i1 = b->i0 + 1 < top ? b->i0 + 1 : top;
    b->l = s - (double)b->i0;
    int64_t lo = (int64_t)floor(s - b->tol), hi = (int64_t)floor(s + b->tol) + 1;
    if (lo > b->i0) lo = b->i0;
    if (hi < b->i1) hi = b->i1;
    b->lo = lo < 0 ? 0 : lo;
    b->hi = hi < top ? hi : top;
}

/* The operands, geometry and align_corners (0 or 1) of an interpolating resize (bilinear, bicubic). */
static par_status interp_prologue(const par_ref_ctx *c, const char *name, const par_rt *const *in, par_rt *const *out,
                                  axis_geom *ax, int *ac, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", name);
    par_status st = geometry(c, name, in[0], out[0], ax, msg);
    if (st != PAR_OK) return st;
    int64_t acv = par_attr_int(c->n, "align_corners", 0);
    if (acv != 0 && acv != 1)
        return par_msgf(msg, PAR_ERROR, "%s: attribute 'align_corners': %lld, must be 0 or 1", name, (long long)acv);
    *ac = (int)acv;
    return PAR_OK;
}

par_status par_ref_upsample_bilinear2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                       par_msg *msg)
{
    axis_geom ax[2];
    int ac;
    par_status st = interp_prologue(c, "upsample_bilinear2d", in, out, ax, &ac, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    const par_prec *pr = &c->prec;
    const double own_k = par_gamma(10, pr->u);
    int64_t H = ax[0].in, W = ax[1].in, OH = ax[0].out, OW = ax[1].out;
    for (int64_t nc = 0; nc < x->dims[0] * x->dims[1]; nc++) {
        const double *xv = x->v + nc * H * W, *xe = x->e + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            bil_axis bh;
            bilinear_axis(&ax[0], oh, ac, pr->u, &bh);
            for (int64_t ow = 0; ow < OW; ow++) {
                bil_axis bw;
                bilinear_axis(&ax[1], ow, ac, pr->u, &bw);
                const int64_t ii[2] = {bh.i0, bh.i1}, jj[2] = {bw.i0, bw.i1};
                const double wh[2] = {1 - bh.l, bh.l}, ww[2] = {1 - bw.l, bw.l};
                double v = 0, p = 0, m = 0;
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        int64_t q = ii[a] * W + jj[b];
                        v += wh[a] * ww[b] * xv[q];
                        p += wh[a] * ww[b] * xe[q];
                        m = fmax(m, fabs(xv[q]) + xe[q]);
                    }
                /* Slopes along each axis near the source point (held values: differences plus both budgets). */
                double dh = 0, dw = 0;
                for (int64_t i = bh.lo; i <= bh.hi; i++)
                    for (int64_t j = bw.lo; j <= bw.hi; j++) {
                        int64_t q = i * W + j;
                        if (i < bh.hi) dh = fmax(dh, fabs(xv[q + W] - xv[q]) + xe[q + W] + xe[q]);
                        if (j < bw.hi) dw = fmax(dw, fabs(xv[q + 1] - xv[q]) + xe[q + 1] + xe[q]);
                    }
                double own = own_k * m + bh.tol * dh + bw.tol * dw + par_eta(pr, 10); /* flushing: the 10 roundings */
                double t = p + own + pr->u_store * (fabs(v) + p + own);
                int64_t k = nc * OH * OW + oh * OW + ow;
                y->v[k] = v;
                y->e[k] = (isfinite(v) && t == t) ? t : INFINITY;
            }
        }
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */
/* bicubic (PyTorch's cubic convolution, A = -0.75; taps at floor(src) - 1 .. floor(src) + 2, each index clamped to
 * [0, in - 1]; the source coordinate is not clamped, unlike bilinear's).
 *
 * Budget (docs/budgets/elementwise.md, "Bicubic"), per output element, M = max over the 16 taps of |x| + e:
 *   coefficients: a backend evaluates each of the 4 weights per axis in f32 by Horner's rule. cc2(x) = ((A x - 5A) x
 *     + 8A) x - 4A at x = t + 1 or 2 - t in [1, 2]: six roundings whose results are at most 1.5, 3, 6, 3, 6, 3, each
 *     carried through the later multiplications by x <= 2: 1.5u 4 + 3u 4 + 6u 2 + 3u 2 + 6u + 3u = 45u, plus the
 *     argument's rounding (2u) times |cc2'| <= 0.75: <= 47u. cc1(x) = ((A + 2) x - (A + 3)) x x + 1 at x = t or 1 - t
 *     in [0, 1]: intermediates at most 1.25, 2.25, 2.25, 2.25, 1, x <= 1: 9u, plus the argument's rounding times
 *     |cc1'| <= 1.35: <= 11u. Per axis sum |dw| <= 2 (47 + 11) u = 116u <= 120u.
 *   sum |w| <= 1.375 on each axis (the two negative lobes are at most 0.094 each, and the weights sum to 1), so the
 *     coefficient errors move y by at most 120u 1.375 M (outer axis) + 1.375 120u M (inner) = 330u M; the two 4-term
 *     sums add gamma_4 1.375 M (inner, then carried by the outer weights: x 1.375) and gamma_4 1.375^2 M: 16u M.
 *     Own: 360u M (f32: 2.1e-5 relative to the taps).
 *   coordinate: src off by tol = 6u max(|src|, 1) as bilinear's; the interpolant is continuously differentiable in
 *     src with |dy/dsrc| <= sum |w'| (<= 4.2: 0.75 + 1.35 + 1.35 + 0.75) times the spread of the taps carried by the
 *     other axis' weights (<= 1.375): 6 R per axis, R = the largest difference of two held taps of the window
 *     widened by the tolerance (values plus both budgets).
 *   propagation sum |w_h w_w| e; storage u_s (|y| + p + own + coord).
 * ------------------------------------------------------------------------------------------------------------- */
#define CUBIC_A (-0.75)

static double cc1(double x) { return ((CUBIC_A + 2) * x - (CUBIC_A + 3)) * x * x + 1; }
static double cc2(double x) { return ((CUBIC_A * x - 5 * CUBIC_A) * x + 8 * CUBIC_A) * x - 4 * CUBIC_A; }

typedef struct cub_axis {
    int64_t i[4];   /* the four taps, clamped */
    double w[4];
    double tol;
    int64_t lo, hi; /* clamped index range of the taps of every coordinate within tol */
} cub_axis;

static int64_t clampi(int64_t v, int64_t top) { return v < 0 ? 0 : v > top ? top : v; }

static void cubic_axis(const axis_geom *a, int64_t dst, int align_corners, double u, cub_axis *b)
{
    double s;
    if (align_corners) { /* no same-size rule for bicubic: PyTorch's cubic indices take the scale as given */
        double r = a->out > 1 ? (double)(a->in - 1) / (double)(a->out - 1) : 0;
        s = a->out > 1 ? (double)(dst * (a->in - 1)) / (double)(a->out - 1) : 0;
        b->tol = coord_tol(6, r, s, s, u);
    } else {
        double r = a->scale > 0 ? 1.0 / a->scale : (double)a->in / (double)a->out;
        double prod = ((double)dst + 0.5) * r;
        s = prod - 0.5;
        b->tol = coord_tol(6, r, prod, fabs(s), u);
    }
    int64_t f = (int64_t)floor(s), top = a->in - 1;
    double t = s - (double)f;
    b->w[0] = cc2(t + 1);
    b->w[1] = cc1(t);
    b->w[2] = cc1(1 - t);
    b->w[3] = cc2(2 - t);
    for (int k = 0; k < 4; k++) b->i[k] = clampi(f - 1 + k, top);
    b->lo = clampi((int64_t)floor(s - b->tol) - 1, top);
    b->hi = clampi((int64_t)floor(s + b->tol) + 2, top);
}

par_status par_ref_upsample_bicubic2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                      par_msg *msg)
{
    axis_geom ax[2];
    int acv;
    par_status st = interp_prologue(c, "upsample_bicubic2d", in, out, ax, &acv, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    const par_prec *pr = &c->prec;
    int64_t H = ax[0].in, W = ax[1].in, OH = ax[0].out, OW = ax[1].out;
    for (int64_t nc = 0; nc < x->dims[0] * x->dims[1]; nc++) {
        const double *xv = x->v + nc * H * W, *xe = x->e + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            cub_axis bh;
            cubic_axis(&ax[0], oh, acv, pr->u, &bh);
            for (int64_t ow = 0; ow < OW; ow++) {
                cub_axis bw;
                cubic_axis(&ax[1], ow, acv, pr->u, &bw);
                double v = 0, p = 0, m = 0;
                for (int a = 0; a < 4; a++) {
                    double r = 0;
                    for (int b = 0; b < 4; b++) {
                        int64_t q = bh.i[a] * W + bw.i[b];
                        r += bw.w[b] * xv[q];
                        p += fabs(bh.w[a] * bw.w[b]) * xe[q];
                        m = fmax(m, fabs(xv[q]) + xe[q]);
                    }
                    v += bh.w[a] * r;
                }
                double coord = 0;
                if (bh.tol > 0 || bw.tol > 0) {
                    double hi = -INFINITY, lo = INFINITY, emax = 0;
                    for (int64_t i = bh.lo; i <= bh.hi; i++)
                        for (int64_t j = bw.lo; j <= bw.hi; j++) {
                            hi = fmax(hi, xv[i * W + j]);
                            lo = fmin(lo, xv[i * W + j]);
                            emax = fmax(emax, xe[i * W + j]);
                        }
                    coord = (bh.tol + bw.tol) * 6 * (hi - lo + 2 * emax);
                }
                /* flushing: 16 products and 15 sums (31 eta), and the 8 weights, each flushed costs eta M */
                double own = par_gamma(360, pr->u) * m + coord + par_eta(pr, 31) + (pr->flush > 0 ? par_eta(pr, 8) * m : 0);
                double t = p + own + pr->u_store * (fabs(v) + p + own);
                int64_t k = nc * OH * OW + oh * OW + ow;
                y->v[k] = v;
                y->e[k] = (isfinite(v) && t == t) ? t : INFINITY;
            }
        }
    }
    return PAR_OK;
}
