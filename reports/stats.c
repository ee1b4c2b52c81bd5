/*
 * stats.c - the Mann-Whitney U test, the Holm-Bonferroni adjustment and the median (reports/stats.h). Pure
 * arithmetic on arrays of doubles: it must not read reports or know what the numbers are.
 *
 * U of y against x counts the pairs (x_i, y_j) with y_j > x_i, a tie counting one half. It equals R_y - n(n+1)/2,
 * R_y the sum of y's ranks in the pooled sample (midranks for ties), which is how it is computed: one sort.
 *
 * Exact distribution (no ties): under exchangeability every one of the C(m+n, m) orders of the pooled sample is
 * equally likely. Let N(i, j, u) count the orders of i x's and j y's with U = u. The largest element is a y (it
 * exceeds all i x's: U grows by i, leaving i x's and j - 1 y's) or an x (U unchanged, leaving i - 1 and j), so
 *     N(i, j, u) = N(i, j - 1, u - i) + N(i - 1, j, u),   N(i, 0, 0) = N(0, j, 0) = 1.
 * The counts are sums of positive terms, so doubles hold them with relative error below (i + j) eps (C(100, 50) is
 * 1e29, far inside the range). Cost: m n (m n + 1) additions, once per pair of sizes (the cache).
 *
 * Normal approximation: E[U] = m n / 2; with ties, Var[U] = m n / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1))), N =
 * m + n, t the size of each group of equal values (the permutation variance of the midrank sum); a continuity
 * correction of 1/2 toward the mean.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct par_mw_cache {
    int32_t m, n;
    double *upper; /* [m n + 1]: P(U >= u) */
};

void par_mw_cache_free(par_mw_cache *c)
{
    if (!c) return;
    free(c->upper);
    free(c);
}

static par_mw_cache *mw_exact_new(int32_t m, int32_t n)
{
    const size_t stride = (size_t)m * (size_t)n + 1;
    par_mw_cache *c = calloc(1, sizeof *c);
    double *prev = calloc((size_t)(n + 1) * stride, sizeof(double));
    double *cur = calloc((size_t)(n + 1) * stride, sizeof(double));
    if (c) c->upper = malloc(stride * sizeof(double));
    if (!c || !c->upper || !prev || !cur) {
        free(prev);
        free(cur);
        par_mw_cache_free(c);
        return NULL;
    }
    /* i = 0: no x, U = 0 whatever j. */
    for (int32_t j = 0; j <= n; j++) cur[(size_t)j * stride] = 1;
    for (int32_t i = 1; i <= m; i++) {
        double *t = prev;
        prev = cur;
        cur = t;
        memset(cur, 0, (size_t)(n + 1) * stride * sizeof(double));
        cur[0] = 1; /* j = 0 */
        for (int32_t j = 1; j <= n; j++) {
            double *row = cur + (size_t)j * stride;
            const double *left = cur + (size_t)(j - 1) * stride, *up = prev + (size_t)j * stride;
            const int64_t top = (int64_t)i * j;
            for (int64_t u = 0; u <= top; u++) row[u] = up[u] + (u >= i ? left[u - i] : 0);
        }
    }
    const double *f = cur + (size_t)n * stride;
    double total = 0;
    for (size_t u = 0; u < stride; u++) total += f[u];
    double acc = 0;
    for (size_t u = stride; u-- > 0;) {
        acc += f[u];
        c->upper[u] = acc / total;
    }
    free(prev);
    free(cur);
    c->m = m;
    c->n = n;
    return c;
}

double par_mw_exact_upper(int32_t m, int32_t n, double u, par_mw_cache **cache)
{
    if (m < 1 || n < 1 || m > PAR_MW_EXACT_MAX || n > PAR_MW_EXACT_MAX) return -1;
    par_mw_cache *c = cache ? *cache : NULL;
    if (!c || c->m != m || c->n != n) {
        par_mw_cache *fresh = mw_exact_new(m, n);
        if (!fresh) return -1;
        if (cache) {
            par_mw_cache_free(*cache);
            *cache = fresh;
        }
        c = fresh;
    }
    const int64_t top = (int64_t)m * n;
    double r;
    if (u <= 0) r = 1;
    else if (u > (double)top) r = 0;
    else r = c->upper[(int64_t)ceil(u - 1e-9)];
    if (!cache) par_mw_cache_free(c);
    return r;
}

typedef struct pooled {
    double v;
    int from_y;
} pooled;

static int cmp_pooled(const void *a, const void *b)
{
    double x = ((const pooled *)a)->v, y = ((const pooled *)b)->v;
    return (x > y) - (x < y);
}

/* Standard normal upper tail P(Z >= z). */
static double normal_upper(double z) { return 0.5 * erfc(z / sqrt(2.0)); }

int par_mann_whitney(const double *x, int32_t m, const double *y, int32_t n, par_mw_cache **cache,
                     par_mw_result *out)
{
    memset(out, 0, sizeof *out);
    out->p_greater = out->p_less = out->p_two = 1;
    if (m < 1 || n < 1) return -1;
    par_mw_cache *local = NULL;
    if (!cache) cache = &local;
    const int32_t N = m + n;
    pooled *p = malloc(sizeof *p * (size_t)N);
    if (!p) return -1;
    for (int32_t i = 0; i < m; i++) p[i] = (pooled){x[i], 0};
    for (int32_t j = 0; j < n; j++) p[m + j] = (pooled){y[j], 1};
    qsort(p, (size_t)N, sizeof *p, cmp_pooled);
    double rank_y = 0, tie_term = 0;
    for (int32_t a = 0; a < N;) {
        int32_t b = a;
        while (b + 1 < N && p[b + 1].v == p[a].v) b++;
        const double t = b - a + 1, mid = (a + 1 + b + 1) / 2.0; /* ranks a+1 .. b+1 share their mean */
        for (int32_t k = a; k <= b; k++)
            if (p[k].from_y) rank_y += mid;
        if (t > 1) tie_term += t * t * t - t;
        a = b + 1;
    }
    free(p);
    const double mn = (double)m * n;
    out->u = rank_y - (double)n * (n + 1) / 2.0;
    out->ties = tie_term > 0;
    if (!out->ties && m <= PAR_MW_EXACT_MAX && n <= PAR_MW_EXACT_MAX) {
        /* U is an integer here; P(U <= u) = P(U >= mn - u) by the symmetry of the distribution about mn / 2. */
        const double g = par_mw_exact_upper(m, n, out->u, cache), l = par_mw_exact_upper(m, n, mn - out->u, cache);
        if (g >= 0 && l >= 0) {
            out->exact = 1;
            out->p_greater = g;
            out->p_less = l;
        }
    }
    if (!out->exact) {
        const double var = mn / 12.0 * ((N + 1) - tie_term / ((double)N * (N - 1)));
        const double mu = mn / 2.0;
        if (var <= 0) { /* every value equal: no evidence either way */
            out->p_greater = out->p_less = 1;
        } else {
            const double sd = sqrt(var), d = out->u - mu;
            const double zg = (d - 0.5) / sd, zl = (d + 0.5) / sd;
            out->p_greater = normal_upper(zg);
            out->p_less = normal_upper(-zl);
            out->z = d > 0 ? (d - 0.5 > 0 ? zg : 0) : (d + 0.5 < 0 ? zl : 0);
        }
    }
    if (out->p_greater > 1) out->p_greater = 1;
    if (out->p_less > 1) out->p_less = 1;
    const double two = 2 * (out->p_greater < out->p_less ? out->p_greater : out->p_less);
    out->p_two = two < 1 ? two : 1;
    par_mw_cache_free(local);
    return 0;
}

typedef struct indexed {
    double p;
    int32_t i;
} indexed;

static int cmp_indexed(const void *a, const void *b)
{
    const indexed *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Sorted ascending p_(1) <= ... <= p_(k): adj_(r) = max over s <= r of min(1, (k - s + 1) p_(s)). */
int par_holm(const double *p, int32_t k, double *adj)
{
    if (k <= 0) return 0;
    indexed *s = malloc(sizeof *s * (size_t)k);
    if (!s) return -1;
    for (int32_t i = 0; i < k; i++) s[i] = (indexed){p[i], i};
    qsort(s, (size_t)k, sizeof *s, cmp_indexed);
    double run = 0;
    for (int32_t r = 0; r < k; r++) {
        double a = (double)(k - r) * s[r].p;
        if (a > 1) a = 1;
        if (a > run) run = a;
        adj[s[r].i] = run;
    }
    free(s);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double par_median(const double *v, int32_t n)
{
    if (n <= 0) return 0;
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s) return v[0];
    memcpy(s, v, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    const double r = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return r;
}
