/*
 * dynq.h - the budget that a dynamically quantized linear layer (linear_dynamic, linear_8da4w) propagates from an
 * input that carries budgets (docs/budgets/linear-dynamic.md, "Inputs with budgets"; docs/quantization.md): the
 * input x is quantized at run time with a scale and zero point computed from its own range, so a correct backend,
 * whose x' is within e of x, quantizes with its own s' and z'. Both kernels share this mechanism; each computes
 * its scheme's s, z and integers, and gives here, per input element, what the two quantizations can differ by,
 * and per output the weights c_k that combine them.
 *
 * The output's move y' - y = sum_k c_k (s' n'_k - s n_k) (n = q - z, the integer offset) is bounded three ways,
 * and the smallest bound is taken (each is sound under its own conditions):
 *   tight:  (s' - s) sum_k c_k n'_k + s sum_k c_k (n'_k - n_k): |s' - s| <= ds times |sum c n| + sum |c| D_k
 *           (systematic, worst case), plus the offsets' moves t_k = s |c_k| D_k, D_k the largest move of n_k
 *           by the element's own input error (par_dynq_elem_of; 0 unless a rounding boundary or a clamp is within
 *           reach), through rule 5 (the smaller of the worst case and 6 sqrt(sum t_k^2)), plus the moves that a
 *           move of the zero point causes where an element is within reach of the clamp, s |c_k| Z_k, worst case
 *           (they are common to the elements). Holds while the scale is continuous in the data (no collapse of the
 *           range, no threshold within reach).
 *   coarse: each dequantized value is within R s' of the value it quantizes (half a step, R = 1/2 + 2^-13 for the
 *           f32 roundings of x / s), whatever s' and z' are, so y' - y = sum c_k (x'_k - x_k) + sum c_k r'_k - Q
 *           with |r'_k| <= R s_max and Q = sum c_k (s n_k - x_k) the reference's own quantization error, known
 *           exactly. The first two sums are propagated together by rule 5: worst case sum |c| (e_k + R s_max), or
 *           6 sqrt(sum c^2 (sigma_k^2 + (R s_max)^2)) with sigma_k the input's scale (par_rt.s), the roundings of
 *           distinct values as independent (rule 5's assumption); |Q| is added. Holds for any s' <= s_max.
 *   mixed:  per element either form: the elements that cannot move (D = Z = 0, tight) in the tight form, where
 *           their whole move is (s' - s) n_k, <= ds |sum c n| over them, and the others in the coarse form (their
 *           Q, worst case and squares). The partition is the reference's, fixed before any backend runs.
 * It must not allocate memory.
 */
#ifndef PAR_REF_DYNQ_H
#define PAR_REF_DYNQ_H

#include <stdint.h>

/* The run-time quantization of one row of x as the reference and a correct backend may hold it. */
typedef struct par_dynq {
    double s;        /* the reference's scale */
    double ds;       /* bound of |s' - s| where the scale is continuous (tight) */
    double slo;      /* s - ds, > 0 when tight */
    double smax;     /* the largest scale a correct backend may take (coarse) */
    double qmin, qmax;
    int32_t z;       /* the reference's zero point */
    int32_t zshift;  /* how far the zero point can move (tight) */
    int tight;       /* the per-element reach holds */
    int any;         /* some input element carries a budget: else nothing moves */
} par_dynq;

/* One input element as the output sums see it. */
typedef struct par_dynq_elem {
    double n;        /* the reference's integer offset q - z */
    double d;        /* D: how far n can move in steps by the element's own input error (tight) */
    double dz;       /* Z: how far more it can move by a move of the zero point (only near the clamp; tight) */
    double e, sc;    /* the input's budget and scale */
    double res;      /* s n - x: the reference's quantization error of this element */
} par_dynq_elem;

/* The sums of one output element. */
typedef struct par_dynq_acc {
    double cn;               /* sum c n */
    double cd;               /* sum |c| D */
    double tw, tss;          /* tight offsets: sum t, sum t^2 */
    double tz;               /* the zero point's share: sum s |c| Z */
    double q;                /* Q = sum c res */
    double cw, css;          /* coarse: the worst case and the sum of squares of the scales */
    double cn0;              /* mixed: sum c n over the elements that cannot move (D = Z = 0, tight) */
    double q1, cw1, css1;    /* mixed: Q, cw and css over the others */
} par_dynq_acc;

/* The row's parameters. x: the row (n values, budgets e); s, z: the reference's scale and zero point, z0 its ideal
 * (unrounded, unclamped) value; qmin, qmax the integer range; range: qmax - qmin over which the range max - min is
 * spread; s_floor the scale's threshold below which the rule changes shape (0 for none); s_empty the scale of an
 * empty range (the collapse). Sets *d. */
void par_dynq_row(par_dynq *d, const double *x, const double *e, int64_t n, double s, int32_t z, double z0,
                  double qmin, double qmax, double s_floor, double s_empty);
/* The element k of the row: x its value, e its budget, sc its scale, t = x / s as the reference's rule computes it
 * (before the zero point), q the reference's integer. */
par_dynq_elem par_dynq_elem_of(const par_dynq *d, double x, double e, double sc, double t, double q);
/* Add the term c (a real weight) times element el. */
static inline void par_dynq_add(const par_dynq *d, par_dynq_acc *a, double c, const par_dynq_elem *el)
{
    const double ac = c < 0 ? -c : c, r = (0.5 + 0x1p-13) * d->smax;
    if (ac == 0) return; /* a zero weight moves nothing, even by an infinite budget */
    const double res = c * el->res, cw = ac * (el->e + r), css = ac * ac * (el->sc * el->sc + r * r);
    a->cn += c * el->n;
    a->q += res;
    a->cw += cw;
    a->css += css;
    if (d->tight && el->d == 0 && el->dz == 0) {
        a->cn0 += c * el->n;
    } else {
        a->q1 += res;
        a->cw1 += cw;
        a->css1 += css;
    }
    if (d->tight) {
        const double t = d->s * ac * el->d;
        a->cd += ac * (el->d + el->dz);
        a->tw += t;
        a->tss += t * t;
        a->tz += d->s * ac * el->dz;
    }
}
/* The budget *e and scale *s (<= *e) that the sums add to the output element (0 when no input carries a budget). */
void par_dynq_finish(const par_dynq *d, const par_dynq_acc *a, double *e, double *s);

#endif
