/*
 * test_stats.c - the statistics of report diffs (reports/stats.c), each checked against a derivation of its own:
 * the exact distribution of U against a brute-force enumeration of every assignment of ranks to the two samples;
 * p-values of small samples against counts done by hand and against the critical values of the published
 * Mann-Whitney tables; the tie-corrected normal approximation against the permutation variance of the midranks
 * computed here from its definition; symmetries (swapping the samples) and limits (complete separation, all values
 * equal); the Holm adjustment against a worked example; the median.
 */
#include "reports/stats.h"
#include "tmain.h"

#include <math.h>

/* Every way of choosing which n of the N = m + n ranks belong to y (bit masks), counting U = #{(x, y): y > x}. */
static void brute_counts(int m, int n, double *count, double *total)
{
    const int N = m + n;
    *total = 0;
    for (int u = 0; u <= m * n; u++) count[u] = 0;
    for (unsigned mask = 0; mask < (1u << N); mask++) {
        if (__builtin_popcount(mask) != n) continue;
        int u = 0, xs_below = 0;
        for (int r = 0; r < N; r++) {
            if (mask & (1u << r)) u += xs_below; /* rank r is a y: it exceeds every x below it */
            else xs_below++;
        }
        count[u] += 1;
        *total += 1;
    }
}

static void test_exact_matches_enumeration(void)
{
    static const int sizes[][2] = {{1, 1}, {1, 4}, {2, 3}, {3, 3}, {4, 5}, {5, 4}, {6, 6}, {7, 3}, {8, 9}};
    par_mw_cache *cache = NULL;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int m = sizes[s][0], n = sizes[s][1];
        double count[128], total;
        brute_counts(m, n, count, &total);
        double tail = 0;
        for (int u = m * n; u >= 0; u--) {
            tail += count[u];
            const double want = tail / total;
            CU_ASSERT_DOUBLE_EQUAL(par_mw_exact_upper(m, n, u, &cache), want, 1e-12);
            CU_ASSERT_DOUBLE_EQUAL(par_mw_exact_upper(m, n, u, NULL), want, 1e-12);
        }
        CU_ASSERT_DOUBLE_EQUAL(par_mw_exact_upper(m, n, m * n + 1, &cache), 0, 0);
        CU_ASSERT_DOUBLE_EQUAL(par_mw_exact_upper(m, n, -1, &cache), 1, 0);
    }
    par_mw_cache_free(cache);
    CU_ASSERT_EQUAL(par_mw_exact_upper(0, 3, 1, NULL), -1);
    CU_ASSERT_EQUAL(par_mw_exact_upper(3, PAR_MW_EXACT_MAX + 1, 1, NULL), -1);
}

/* Complete separation of 3 and 3: only 1 of the C(6, 3) = 20 orders puts every y above every x. */
static void test_small_by_hand(void)
{
    const double x[] = {1.5, 2.25, 3}, y[] = {4, 6, 5};
    par_mw_result r;
    CU_ASSERT_EQUAL(par_mann_whitney(x, 3, y, 3, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.exact, 1);
    CU_ASSERT_EQUAL(r.ties, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.u, 9, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.p_greater, 1.0 / 20, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.p_less, 1, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.p_two, 2.0 / 20, 1e-15);
    /* y = {2, 4}, x = {1, 3, 5}: pairs y > x are (2>1), (4>1), (4>3): U = 3 of 6. Orders of 3 x's and 2 y's with
     * U >= 3: U is the sum of the x's below each y; by listing the 10 orders, U takes 0,1,2,2,3,3,4,4,5,6, so
     * P(U >= 3) = 6/10 and P(U <= 3) = 6/10. */
    const double x2[] = {1, 3, 5}, y2[] = {2, 4};
    CU_ASSERT_EQUAL(par_mann_whitney(x2, 3, y2, 2, NULL, &r), 0);
    CU_ASSERT_DOUBLE_EQUAL(r.u, 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.p_greater, 6.0 / 10, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.p_less, 6.0 / 10, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.p_two, 1, 1e-15);
    CU_ASSERT_EQUAL(par_mann_whitney(x2, 0, y2, 2, NULL, &r), -1);
    CU_ASSERT_DOUBLE_EQUAL(r.p_greater, 1, 0);
}

/* The published tables of critical values (e.g. Mann and Whitney 1947; Siegel's tables): for n1 = n2 = 10 the
 * smaller U must be at most 27 to reject at one-tailed 0.05, at most 23 at two-tailed 0.05 (one-tailed 0.025), at most
 * 19 at one-tailed 0.01, and at most 16 at two-tailed 0.01 (one-tailed 0.005). So P(U <= c) <= level < P(U <= c + 1),
 * and P(U <= c) = P(U >= 100 - c). */
static void test_critical_values(void)
{
    static const struct {
        int c;
        double level;
    } t[] = {{27, 0.05}, {23, 0.025}, {19, 0.01}, {16, 0.005}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CU_ASSERT(par_mw_exact_upper(10, 10, 100 - t[i].c, NULL) <= t[i].level);
        CU_ASSERT(par_mw_exact_upper(10, 10, 100 - (t[i].c + 1), NULL) > t[i].level);
    }
}

static void test_swap_symmetry(void)
{
    const double x[] = {3.1, 0.2, 5.5, 4.4, 1.0, 2.7, 9.3}, y[] = {2.9, 6.1, 7.7, 8.0, 0.9};
    par_mw_result a, b;
    CU_ASSERT_EQUAL(par_mann_whitney(x, 7, y, 5, NULL, &a), 0);
    CU_ASSERT_EQUAL(par_mann_whitney(y, 5, x, 7, NULL, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(a.u + b.u, 35, 0);
    CU_ASSERT_DOUBLE_EQUAL(a.p_greater, b.p_less, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a.p_less, b.p_greater, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(a.p_two, b.p_two, 1e-15);
    /* Adding a constant to every value changes no rank. */
    double x2[7], y2[5];
    for (int i = 0; i < 7; i++) x2[i] = x[i] + 100;
    for (int i = 0; i < 5; i++) y2[i] = y[i] + 100;
    CU_ASSERT_EQUAL(par_mann_whitney(x2, 7, y2, 5, NULL, &b), 0);
    CU_ASSERT_DOUBLE_EQUAL(a.p_greater, b.p_greater, 0);
}

/* With ties the test uses the normal approximation; its variance must be the permutation variance of the midrank
 * sum, m n / (N (N - 1)) sum_k (r_k - (N + 1) / 2)^2, computed here from midranks counted by definition. */
static void test_ties_normal(void)
{
    const double x[] = {1, 1, 2, 3, 3, 3, 5, 8}, y[] = {2, 3, 4, 5, 5, 8, 8, 9, 9};
    const int m = 8, n = 9, N = m + n;
    double all[17];
    for (int i = 0; i < m; i++) all[i] = x[i];
    for (int j = 0; j < n; j++) all[m + j] = y[j];
    double ry = 0, ss = 0, u_pairs = 0;
    for (int k = 0; k < N; k++) {
        int below = 0, equal = 0;
        for (int l = 0; l < N; l++) below += all[l] < all[k], equal += all[l] == all[k];
        const double r = below + (equal + 1) / 2.0;
        if (k >= m) ry += r;
        ss += (r - (N + 1) / 2.0) * (r - (N + 1) / 2.0);
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) u_pairs += y[j] > x[i] ? 1 : y[j] == x[i] ? 0.5 : 0;
    const double var = (double)m * n / ((double)N * (N - 1)) * ss, mu = m * n / 2.0;
    par_mw_result r;
    CU_ASSERT_EQUAL(par_mann_whitney(x, m, y, n, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.exact, 0);
    CU_ASSERT_EQUAL(r.ties, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.u, u_pairs, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.u, ry - n * (n + 1) / 2.0, 1e-12);
    const double zg = (r.u - mu - 0.5) / sqrt(var), zl = (r.u - mu + 0.5) / sqrt(var);
    CU_ASSERT_DOUBLE_EQUAL(r.p_greater, 0.5 * erfc(zg / sqrt(2.0)), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.p_less, 0.5 * erfc(-zl / sqrt(2.0)), 1e-12);
    CU_ASSERT(r.p_greater < 0.5 && r.p_less > 0.5); /* y sits higher */
    /* All values equal: no evidence either way. */
    const double c[] = {2, 2, 2};
    CU_ASSERT_EQUAL(par_mann_whitney(c, 3, c, 3, NULL, &r), 0);
    CU_ASSERT_DOUBLE_EQUAL(r.p_greater, 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.p_less, 1, 0);
}

/* Limits: beyond PAR_MW_EXACT_MAX the approximation is used; complete separation of 60 and 60 is overwhelming
 * (the exact p would be 1 / C(120, 60), about 1e-35); the exact and approximate tails agree near the 2.5% point
 * at 30 and 30 (the approximation's error there is a few 1e-4). */
static void test_limits(void)
{
    double x[60], y[60];
    for (int i = 0; i < 60; i++) x[i] = i, y[i] = 100 + i;
    par_mw_result r;
    CU_ASSERT_EQUAL(par_mann_whitney(x, 60, y, 60, NULL, &r), 0);
    CU_ASSERT_EQUAL(r.exact, 0);
    CU_ASSERT(r.p_greater < 1e-15);
    CU_ASSERT(r.p_less > 0.999999);
    const double mu = 450, sd = sqrt(30.0 * 30 * 61 / 12);
    const double u = ceil(mu + 1.959964 * sd); /* the normal 2.5% point */
    const double exact = par_mw_exact_upper(30, 30, u, NULL);
    const double approx = 0.5 * erfc((u - mu - 0.5) / sd / sqrt(2.0));
    CU_ASSERT(exact > 0.015 && exact < 0.03);
    CU_ASSERT_DOUBLE_EQUAL(exact, approx, 1e-3);
}

/* Holm, worked by hand: p = (0.01, 0.04, 0.03, 0.005), k = 4. Sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03;
 * 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to 0.06 (step-down monotonicity). */
static void test_holm(void)
{
    double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    CU_ASSERT_EQUAL(par_holm(p, 4, adj), 0);
    CU_ASSERT_DOUBLE_EQUAL(adj[0], 0.03, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(adj[1], 0.06, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(adj[2], 0.06, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(adj[3], 0.02, 1e-15);
    double q[] = {0.5, 0.9};
    CU_ASSERT_EQUAL(par_holm(q, 2, q), 0); /* in place; capped at 1 */
    CU_ASSERT_DOUBLE_EQUAL(q[0], 1, 0);
    CU_ASSERT_DOUBLE_EQUAL(q[1], 1, 0);
    double one[] = {0.02};
    CU_ASSERT_EQUAL(par_holm(one, 1, one), 0);
    CU_ASSERT_DOUBLE_EQUAL(one[0], 0.02, 0);
}

static void test_median(void)
{
    const double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
    CU_ASSERT_DOUBLE_EQUAL(par_median(odd, 3), 3, 0);
    CU_ASSERT_DOUBLE_EQUAL(par_median(even, 4), 2.5, 0);
    CU_ASSERT_DOUBLE_EQUAL(par_median(odd, 0), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(odd[0], 5, 0); /* not sorted in place */
}

static const CU_TestInfo tests[] = {
    {"exact_matches_enumeration", test_exact_matches_enumeration},
    {"small_by_hand", test_small_by_hand},
    {"critical_values", test_critical_values},
    {"swap_symmetry", test_swap_symmetry},
    {"ties_normal", test_ties_normal},
    {"limits", test_limits},
    {"holm", test_holm},
    {"median", test_median},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("stats", tests)
