/*
 * stats.h - the statistics of report diffs (reports/diff.h): the Mann-Whitney U test of two samples of run times,
 * with its exact distribution for small samples without ties and the normal approximation with tie and continuity
 * corrections otherwise, the Holm-Bonferroni adjustment of a family of p-values, and the median.
 *
 * Why Mann-Whitney: run times are not normal (a floor at the machine's best, a long right tail of interruptions),
 * so a t-test's p-values are wrong exactly where a decision is made; the rank test assumes nothing of the shape,
 * only that under "no change" the two samples are exchangeable. docs/reports-diff.md says how the diff uses it.
 */
#ifndef PAR_STATS_H
#define PAR_STATS_H

#include <stdint.h>

/* The exact distribution is used when neither sample is larger than this and there are no ties (run times measured
 * in nanoseconds rarely tie); the normal approximation is accurate to about 1e-3 in p at this size. */
#define PAR_MW_EXACT_MAX 50

/* The exact distribution of U for one pair of sample sizes, kept between calls: a diff tests thousands of records
 * with the same sizes. NULL-safe; free with par_mw_cache_free. */
typedef struct par_mw_cache par_mw_cache;
void par_mw_cache_free(par_mw_cache *c);

typedef struct par_mw_result {
    double u;          /* U of y: #{(i, j): y_j > x_i} + #{(i, j): y_j == x_i} / 2, in [0, m n] */
    double p_greater;  /* one-sided p-value against "y tends to be larger than x": P(U >= u) under exchangeability */
    double p_less;     /* one-sided p-value against "y tends to be smaller": P(U <= u) */
    double p_two;      /* two-sided: min(1, 2 min(p_greater, p_less)) */
    double z;          /* the normal approximation's z of U (continuity-corrected toward the mean); 0 when exact */
    int exact;         /* 1: exact distribution; 0: normal approximation */
    int ties;          /* 1 when some values are equal (across or within the samples) */
} par_mw_result;

/* Mann-Whitney U test of x (m values) against y (n values), m, n >= 1. cache may be NULL (the exact distribution is
 * then computed and freed each call) or point to a cache pointer (NULL at first) reused between calls. Values must be
 * finite. Returns 0, or -1 when m or n is below 1 or memory ran out (out is then all p-values 1). */
int par_mann_whitney(const double *x, int32_t m, const double *y, int32_t n, par_mw_cache **cache,
                     par_mw_result *out);

/* The exact upper tail P(U >= u) of U for sizes m and n under exchangeability without ties, from the cache (NULL:
 * computed once and freed); -1 when the sizes are out of range (0 or above PAR_MW_EXACT_MAX) or memory ran out. */
double par_mw_exact_upper(int32_t m, int32_t n, double u, par_mw_cache **cache);

/* Holm-Bonferroni step-down adjustment of k p-values: adj[i] is the smallest family-wise level at which hypothesis
 * i is rejected (monotone in p, at most 1). p and adj may be the same array. Returns 0, or -1 when memory ran out. */
int par_holm(const double *p, int32_t k, double *adj);

/* The median of n values (the mean of the two middle ones when n is even); 0 when n is 0. v is not changed. */
double par_median(const double *v, int32_t n);

#endif
