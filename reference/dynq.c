/*
 * dynq.c - the budget a dynamically quantized linear layer propagates from an input that carries budgets, shared
 * by linear_dynamic.c and linear_8da4w.c (dynq.h has the derivation; docs/budgets/linear-dynamic.md). It must not
 * allocate memory.
 */
#include "dynq.h"
#include "reference.h" /* par_prop_bound */

#include <math.h>

#define DQ_WIN 0x1p-20 /* the tie window of the kernels' part (a), relative to |t| + |z| + 1 */

static double zclamp(double z, double qmin, double qmax) { return z < qmin ? qmin : z > qmax ? qmax : nearbyint(z); }

void par_dynq_row(par_dynq *d, const double *x, const double *e, int64_t n, double s, int32_t z, double z0,
                  double qmin, double qmax, double s_floor, double s_empty)
{
    double emax = 0, xmax = 0;
    int collapsible = n > 0;
    for (int64_t k = 0; k < n; k++) {
        emax = fmax(emax, e[k]);
        xmax = fmax(xmax, fabs(x[k]));
        if (!(fabs(x[k]) <= e[k])) collapsible = 0;
    }
    d->s = s;
    d->z = z;
    d->qmin = qmin;
    d->qmax = qmax;
    d->any = emax > 0;
    /* min and max move by at most emax each; each side rounds its scale to f32 once or twice (2^-21 s covers both) */
    d->ds = 2 * emax / (qmax - qmin) + 0x1p-21 * s;
    d->slo = s - d->ds;
    d->smax = s + d->ds;
    d->zshift = 0;
    /* A range that may collapse (every element may be 0 in a correct backend): the scale jumps to the empty range's
     * (or the threshold's), so only the coarse bound holds, with that scale as a candidate. */
    if (collapsible && d->any) d->smax = fmax(d->smax, s_empty);
    d->tight = d->any && !collapsible && d->slo > s_floor && d->slo > 0;
    if (d->tight) {
        const double dz = (emax + xmax * d->ds / d->slo) / d->slo + DQ_WIN * (fabs(z0) + 1);
        d->zshift = (int32_t)fmax(fabs(zclamp(z0 - dz, qmin, qmax) - z), fabs(zclamp(z0 + dz, qmin, qmax) - z));
    }
}

/* How far (in steps) the offset n = q - z of an element can move. Its t' = x' / s' is within dt of t (s' within ds
 * of s, s' >= slo; plus the tie window of the kernels' part (a)), its zero point z' within zshift of z. With
 * f(t', z') = clamp(z' + rne(t'), qmin, qmax) - z':
 *   f(t', z') - f(t, z) = [f(t', z) - f(t, z)] + [f(t', z') - f(t', z)].
 * The first part is the element's own move (its input's error): at most D, at the corners t +- dt (f is monotone
 * in t'). The second is the zero point's: with g(a) = clamp(a) - a, nonincreasing, it is g(z' + r) - g(z + r)
 * (r = rne(t')), 0 unless z + r lies within zshift of the clamp, monotone in z' - z, and its size over the integers
 * r between rne(t - dt) and rne(t + dt) is largest at one of them; Z is that largest size. */
par_dynq_elem par_dynq_elem_of(const par_dynq *d, double x, double e, double sc, double t, double q)
{
    par_dynq_elem el = {.n = q - d->z, .e = e, .sc = sc, .d = 0, .dz = 0};
    el.res = d->s * el.n - x;
    if (d->tight) {
        const double dt = (e + fabs(x) * d->ds / d->slo) / d->slo + DQ_WIN * (fabs(t) + fabs((double)d->z) + 1);
        for (int b = 0; b < 2; b++) {
            const double r = nearbyint(b ? t + dt : t - dt), a = d->z + r;
            el.d = fmax(el.d, fabs(fmin(fmax(a, d->qmin), d->qmax) - d->z - el.n));
            for (int m = -1; m <= 1; m += 2) {
                const double am = a + m * d->zshift;
                const double h = (fmin(fmax(am, d->qmin), d->qmax) - am) - (fmin(fmax(a, d->qmin), d->qmax) - a);
                el.dz = fmax(el.dz, fabs(h));
            }
        }
    }
    return el;
}

void par_dynq_finish(const par_dynq *d, const par_dynq_acc *a, double *e, double *s)
{
    *e = *s = 0;
    if (!d->any) return;
    const double rss = sqrt(a->css);
    double ec = fabs(a->q) + par_prop_bound(a->cw, a->css), sc = fabs(a->q) + rss;
    if (d->tight) {
        /* the elements' own moves through rule 5; the zero point's, common to the elements it reaches, worst case */
        const double sys = d->ds * (fabs(a->cn) + a->cd);
        const double et = sys + par_prop_bound(a->tw, a->tss) + a->tz, st = sys + sqrt(a->tss) + a->tz;
        if (et < ec) ec = et, sc = st;
        /* mixed: the elements that cannot move only by the scale's move, the others coarse */
        const double fix = d->ds * fabs(a->cn0) + fabs(a->q1);
        const double em = fix + par_prop_bound(a->cw1, a->css1), sm = fix + sqrt(a->css1);
        if (em < ec) ec = em, sc = sm;
    }
    *e = ec;
    *s = sc < ec ? sc : ec;
}
