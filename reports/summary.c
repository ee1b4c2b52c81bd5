/*
 * summary.c - the terminal summary of a run (reports/summary.h), from a par_report's records only. It must not
 * look at anything but the report (no run state, no backend), and keeps each failure on one line whatever the case
 * IDs and reasons contain.
 */
#include "summary.h"
#include "groups.h"

#include "core/requant.h"
#include "reference/conv_winograd.h" /* par_algo_name */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int64_t n, double q)
{
    if (n == 0) return 0;
    int64_t i = (int64_t)ceil(q * (double)n) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return sorted[i];
}

typedef struct fail_ref {
    int32_t c, b;
    int sev;
    double ratio;
} fail_ref;

static int cmp_fail(const void *a, const void *b)
{
    const fail_ref *x = a, *y = b;
    if (x->sev != y->sev) return y->sev - x->sev;
    if (x->ratio != y->ratio) return x->ratio < y->ratio ? 1 : -1;
    if (x->c != y->c) return x->c - y->c;
    return x->b - y->b;
}

static const char *vcolor(par_verdict v, int color)
{
    if (!color) return "";
    switch (v) {
    case PAR_V_PASS: return "\033[32m";
    case PAR_V_UNSUPPORTED: return "\033[33m";
    default: return "\033[31m";
    }
}

static const par_result *rec(const par_report *r, int32_t c, int32_t b)
{
    return &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
}

/* The rules that explain all n ties counted in by, comma-separated into buf ("no single rule" when none). */
static const char *consistent_rules(int64_t n, const int64_t *by, char *buf, size_t len)
{
    buf[0] = 0;
    for (int k = 0; k < PAR_TIE_RULES; k++)
        if (by[k] == n)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "",
                     par_tie_rule_name((par_tie_rule)k));
    return buf[0] ? buf : "no single rule";
}

/* One line per backend whose records had judged ties (docs/quantization.md, "Ties"): how many, the rules consistent
 * with all of them, the declared scheme's rule, and the records they contradict. When the records' declared rules
 * differ (schemes declared per node, PAR_PROC_NODE_REQUANT), the ties are counted per declared rule. */
static void print_ties(FILE *f, const par_report *r)
{
    int header = 0;
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t n = 0, by[PAR_TIE_RULES] = {0}, contra = 0;
        int64_t nd[PAR_TIE_RULES] = {0}, byd[PAR_TIE_RULES][PAR_TIE_RULES] = {{0}};
        int32_t declared = -1, n_declared = 0, per_node = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, b);
            if (!x->done || x->m.tie_n <= 0) continue;
            n += x->m.tie_n;
            for (int k = 0; k < PAR_TIE_RULES; k++) by[k] += x->m.tie_rule_n[k];
            contra += x->m.tie_over != 0;
            if (declared < 0 || x->m.tie_over) declared = x->m.tie_declared;
            per_node |= x->n_requants > 0;
            const int32_t d = x->m.tie_declared;
            if (d < 0 || d >= PAR_TIE_RULES) continue;
            n_declared += nd[d] == 0;
            nd[d] += x->m.tie_n;
            for (int k = 0; k < PAR_TIE_RULES; k++) byd[d][k] += x->m.tie_rule_n[k];
        }
        if (n == 0) continue;
        if (!header) fprintf(f, "\nties (exact ties of the declared scheme at nodes with exact inputs):\n");
        header = 1;
        char label[160], rules[64];
        par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
        const char *scheme = par_requant_name((par_requant)r->backends[b].requant);
        if (n_declared > 1 || per_node) {
            fprintf(f, "  %-22s %lld ties (schemes declared per node)", label, (long long)n);
            for (int d = 0; d < PAR_TIE_RULES; d++)
                if (nd[d] > 0)
                    fprintf(f, "; %lld where the declared rule is %s, rounded as: %s", (long long)nd[d],
                            par_tie_rule_words((par_tie_rule)d), consistent_rules(nd[d], byd[d], rules, sizeof rules));
            fprintf(f, "; %lld record%s contradict%s\n", (long long)contra, contra == 1 ? "" : "s",
                    contra == 1 ? "s" : "");
            continue;
        }
        fprintf(f, "  %-22s %lld ties, rounded as: %s; declared %s rounds %s; %lld record%s contradict%s\n", label,
                (long long)n, consistent_rules(n, by, rules, sizeof rules), scheme ? scheme : "fp32",
                declared >= 0 ? par_tie_rule_words((par_tie_rule)declared) : "?", (long long)contra,
                contra == 1 ? "" : "s", contra == 1 ? "s" : "");
    }
}

/* One line per backend whose records carry the device's own time (PAR_PROC_DEVICE_TIME): how many records, and the
 * median over them of their median device time beside that of their median wall time. Nothing otherwise. */
static void print_device_time(FILE *f, const par_report *r)
{
    double *dev = malloc(sizeof(double) * (size_t)(r->n_cases > 0 ? r->n_cases : 1));
    double *wall = malloc(sizeof(double) * (size_t)(r->n_cases > 0 ? r->n_cases : 1));
    for (int32_t b = 0; dev && wall && b < r->n_backends; b++) {
        int64_t n = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, b);
            if (!x->done || x->t.device_n <= 0) continue;
            dev[n] = x->t.device_median_ms;
            wall[n++] = x->t.run_median_ms;
        }
        if (!n) continue;
        qsort(dev, (size_t)n, sizeof *dev, cmp_double);
        qsort(wall, (size_t)n, sizeof *wall, cmp_double);
        char label[160];
        par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
        fprintf(f, "%-24s device time of %lld record%s (the device's own clock): median %.4g ms, wall %.4g ms\n", label,
                (long long)n, n == 1 ? "" : "s", quantile(dev, n, 0.5), quantile(wall, n, 0.5));
    }
    free(dev);
    free(wall);
}

/* The value names of a per-node declaration. */
static const char *algo_value_name(int32_t v) { return par_algo_name(v); }
static const char *scheme_value_name(int32_t v) { return par_requant_name((par_requant)v); }

/* One line when some backend declared per-node values of one kind (algos: PAR_PROC_NODE_ALGO, values 1 .. n_values
 * - 1; else PAR_PROC_NODE_REQUANT, values 0 .. n_values - 1): per backend, the records and the listed nodes of each
 * value, which the oracle judged by it. Nothing otherwise. */
static void print_decls(FILE *f, const par_report *r, int algos, int32_t n_values, const char *title,
                        const char *(*name_of)(int32_t))
{
    int any = 0;
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t recs = 0, nodes[16] = {0};
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, b);
            const int32_t n = algos ? x->n_algos : x->n_requants;
            const par_result_decl *list = algos ? x->algos : x->requants;
            if (!x->done || n <= 0) continue;
            recs++;
            for (int32_t i = 0; i < n && i < PAR_RESULT_ALGOS; i++)
                if (list[i].value >= 0 && list[i].value < n_values && list[i].value < 16) nodes[list[i].value]++;
        }
        if (!recs) continue;
        char label[160];
        par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
        fprintf(f, "%s%s: %lld record%s", any ? "; " : title, label, (long long)recs, recs == 1 ? "" : "s");
        for (int32_t v = 0; v < n_values && v < 16; v++)
            if (nodes[v])
                fprintf(f, ", %s on %lld node%s", name_of(v), (long long)nodes[v], nodes[v] == 1 ? "" : "s");
        any = 1;
    }
    if (any) fprintf(f, "\n");
}

/* "; SQNR X dB (predicted Y dB)", the statistical companion's root-mean-square where it judged, and the companion on
 * every node's value where it judged (the largest z, the first node over the bound), for a record with a float
 * output compared, else "" (docs/oracle.md, "Metrics"). */
static void sqnr_words(const par_metrics *m, char *buf, size_t n)
{
    buf[0] = 0;
    if (m->quant || m->n <= 0 || (isnan(m->sqnr_db) && isnan(m->sqnr_pred_db))) return;
    int w = snprintf(buf, n, "; SQNR %.1f dB (predicted %.1f dB)", m->sqnr_db, m->sqnr_pred_db);
    if (w > 0 && (size_t)w < n && m->stat_skip == PAR_STAT_APPLIED && m->stat_n > 0)
        w += snprintf(buf + w, n - (size_t)w, "; companion %.3g (bound %.3g)", m->stat_z, PAR_STAT_BOUND);
    if (w > 0 && (size_t)w < n && m->node_k > 0) /* the companion on every node's value */
        snprintf(buf + w, n - (size_t)w, "; node values' companion: largest %.3g at '%s'%s%s%s (bound %.3g over %d)",
                 m->node_z, m->node_at, m->node_first[0] ? ", first over the bound at '" : "", m->node_first,
                 m->node_first[0] ? "'" : "", m->node_bound, (int)m->node_k);
}

/* One line when some passing records have output elements with an infinite budget (not judged): per backend, the
 * records and elements, so that a PASS that judged little is visible; then up to max_shown of those records, each
 * with its reason (where the unbounded budgets arise) and its SQNR. Nothing otherwise. */
static void print_unbounded(FILE *f, const par_report *r, int32_t max_shown)
{
    int any = 0;
    for (int32_t b = 0; b < r->n_backends; b++) {
        int64_t recs = 0, elems = 0;
        for (int32_t c = 0; c < r->n_cases; c++) {
            const par_result *x = rec(r, c, b);
            if (!x->done || x->verdict != PAR_V_PASS || x->m.n_unbounded <= 0) continue;
            recs++;
            elems += x->m.n_unbounded;
        }
        if (!recs) continue;
        char label[160];
        par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
        fprintf(f, "%s%s: %lld record%s, %lld element%s", any ? "; " : "infinite budgets (passed, not judged): ",
                label, (long long)recs, recs == 1 ? "" : "s", (long long)elems, elems == 1 ? "" : "s");
        any = 1;
    }
    if (!any) return;
    fprintf(f, "\n");
    int32_t shown = 0;
    for (int32_t c = 0; c < r->n_cases; c++)
        for (int32_t b = 0; b < r->n_backends; b++) {
            const par_result *x = rec(r, c, b);
            if (!x->done || x->verdict != PAR_V_PASS || x->m.n_unbounded <= 0) continue;
            if (shown++ >= max_shown) continue;
            char id[PAR_ID_LEN * 4], reason[PAR_REASON_LEN * 2], label[160], sq[400];
            par_text_clean(id, sizeof id, r->cases[c].id, sizeof r->cases[c].id, 1);
            par_text_clean(reason, sizeof reason, x->reason, sizeof x->reason, 1);
            par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
            sqnr_words(&x->m, sq, sizeof sq);
            fprintf(f, "  unjudged %s %s: %s%s\n", label, id, reason, sq);
        }
    if (shown > max_shown) fprintf(f, "  ... and %d more unjudged records in the report\n", (int)(shown - max_shown));
}

void par_summary_print(FILE *f, const par_report *r, int color, int32_t max_failures)
{
    int32_t nb = r->n_backends, nc = r->n_cases;
    const char *reset = color ? "\033[0m" : "";
    long total[PAR_V_COUNT] = {0};
    fprintf(f, "\nparity: %d case%s x %d backend%s in %.1f s (seed %llu)%s\n", (int)nc, nc == 1 ? "" : "s", (int)nb,
            nb == 1 ? "" : "s", r->wall_s, (unsigned long long)r->seed,
            r->interrupted ? " -- INTERRUPTED: only the finished records follow" : "");
    fprintf(f, "%-24s %6s %6s %6s %6s %6s %7s %6s   %s\n", "backend", "PASS", "FAIL", "UNSUP", "ERROR", "CRASH",
            "TIMEOUT", "FLAKY", "error/budget p50 p99 max");
    double *ratios = malloc(sizeof(double) * (size_t)(nc ? nc : 1));
    for (int32_t b = 0; b < nb; b++) {
        long cnt[PAR_V_COUNT] = {0};
        int64_t nr = 0;
        for (int32_t c = 0; c < nc; c++) {
            const par_result *x = rec(r, c, b);
            if (!x->done || (int)x->verdict < 0 || x->verdict >= PAR_V_COUNT) continue;
            cnt[x->verdict]++;
            total[x->verdict]++;
            if (ratios && (x->verdict == PAR_V_PASS || x->verdict == PAR_V_FAIL) && x->m.n > 0)
                ratios[nr++] = x->m.max_ratio;
        }
        if (ratios) qsort(ratios, (size_t)nr, sizeof *ratios, cmp_double);
        char label[160];
        par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
        fprintf(f, "%-24s %6ld %6ld %6ld %6ld %6ld %7ld %6ld   ", label, cnt[PAR_V_PASS], cnt[PAR_V_FAIL],
                cnt[PAR_V_UNSUPPORTED], cnt[PAR_V_ERROR], cnt[PAR_V_CRASH], cnt[PAR_V_TIMEOUT], cnt[PAR_V_FLAKY]);
        if (nr && ratios)
            fprintf(f, "%.2g %.2g %.2g\n", quantile(ratios, nr, 0.5), quantile(ratios, nr, 0.99), ratios[nr - 1]);
        else
            fprintf(f, "-\n");
    }
    free(ratios);
    /* where to start: the failures grouped by the parameter that separates them (reports/groups.h) */
    par_group *groups = NULL;
    int32_t n_groups = 0;
    if (par_groups_compute(r, &groups, &n_groups) == 0 && n_groups > 0) {
        fprintf(f, "\nwhere to start (failing cases by op and backend, with the parameter that separates them):\n");
        int32_t shown = par_groups_print(f, r, groups, n_groups, 5, "  ");
        if (shown < n_groups)
            fprintf(f, "  ... and %d more groups ('parity report FILE --groups' lists them all)\n", (int)(n_groups - shown));
        fprintf(f, "\n");
    }
    free(groups);
    print_ties(f, r);
    print_decls(f, r, 1, PAR_ALGO_COUNT, "declared algorithms (judged with their budgets): ", algo_value_name);
    print_decls(f, r, 0, PAR_REQUANT_N_SCHEMES, "schemes declared per node (their integers and tie rules judged): ",
                scheme_value_name);
    print_unbounded(f, r, max_failures);
    /* declared properties of the arithmetic that change the budgets (PAR_PROC_ARITH_FLAGS) */
    for (int32_t b = 0; b < nb; b++)
        if (r->backends[b].arith_flags & PAR_ARITH_FLUSH_SUBNORMALS) {
            char label[160];
            par_text_clean(label, sizeof label, r->backends[b].label, sizeof r->backends[b].label, 1);
            fprintf(f, "%-24s declares flushed subnormals (FTZ/DAZ): budgeted, a subnormal may come out as 0\n", label);
        }
    print_device_time(f, r);

    /* failures, worst first, each ending with its repro command */
    int64_t nf = 0;
    fail_ref *fails = malloc(sizeof *fails * ((size_t)nc * (size_t)nb + 1));
    for (int32_t c = 0; c < nc && fails; c++)
        for (int32_t b = 0; b < nb; b++) {
            const par_result *x = rec(r, c, b);
            if (x->done && (int)x->verdict >= 0 && x->verdict < PAR_V_COUNT &&
                par_verdict_severity(x->verdict) >= par_verdict_severity(PAR_V_ERROR))
                fails[nf++] = (fail_ref){c, b, par_verdict_severity(x->verdict), x->m.max_ratio};
        }
    if (nf && fails) {
        qsort(fails, (size_t)nf, sizeof *fails, cmp_fail);
        int64_t shown = nf < max_failures ? nf : max_failures;
        fprintf(f, "\n%lld not passing%s:\n", (long long)nf, shown < nf ? " (worst first)" : "");
        for (int64_t i = 0; i < shown; i++) {
            const par_result *x = rec(r, fails[i].c, fails[i].b);
            char repro[2048], id[PAR_ID_LEN * 4], reason[PAR_REASON_LEN * 2], label[160];
            par_report_repro(r, fails[i].c, fails[i].b, repro, sizeof repro);
            par_text_clean(id, sizeof id, r->cases[fails[i].c].id, sizeof r->cases[fails[i].c].id, 1);
            par_text_clean(reason, sizeof reason, x->reason, sizeof x->reason, 1);
            par_text_clean(label, sizeof label, r->backends[fails[i].b].label, sizeof r->backends[0].label, 1);
            char sq[400];
            sqnr_words(&x->m, sq, sizeof sq);
            fprintf(f, "%s%-7s%s %s %s: %s%s -- repro: %s\n", vcolor(x->verdict, color), par_verdict_name(x->verdict),
                    reset, label, id, reason, sq, repro);
        }
        if (shown < nf) fprintf(f, "... and %lld more in the report\n", (long long)(nf - shown));
    }
    free(fails);
    fprintf(f, "conformance: %ld passed, %ld failed, %ld skipped\n", total[PAR_V_PASS],
            total[PAR_V_FAIL] + total[PAR_V_ERROR] + total[PAR_V_CRASH] + total[PAR_V_TIMEOUT] + total[PAR_V_FLAKY],
            total[PAR_V_UNSUPPORTED]);
}
