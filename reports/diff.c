/*
 * diff.c - two reports compared, the gate, and the terminal rendering of the result (reports/diff.h). It reads
 * only the two par_reports it is given (what reports/report_read.h read, or the run's own report): it must not run
 * anything, read files, or judge values again (the oracle's verdicts and metrics are the facts compared).
 *
 * Latency: for every record present on both sides with at least min_samples timed runs on each (and a median above
 * the floor on one side at least), a one-sided Mann-Whitney test of NEW's samples against BASE's for "slower" and
 * another for "faster" (reports/stats.h); each family of p-values is adjusted with Holm over the records judged, so
 * the chance that any record of the report is called slower when none is stays below alpha whatever the report's
 * size. A significant record then counts by its effect, the ratio of medians NEW / BASE, which the ratio of the
 * fastest runs must confirm: significance alone would flag a 1% change given enough samples, an effect alone would
 * flag noise, and other processes on the machine (which stretch a burst of runs, never shorten one) move the median
 * of a record but rarely its fastest run, whereas a slower backend is slower in its best run too.
 * docs/reports-diff.md.
 */
#include "diff.h"

#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void par_diff_opts_default(par_diff_opts *o)
{
    *o = (par_diff_opts){.latency_warn = 0.05,
                         .latency_fail = 0.15,
                         .alpha = 0.01,
                         .min_samples = 5,
                         .latency_floor_ms = 0.01,
                         .drift_factor = 4,
                         .drift_floor = 0.01};
}

const char *par_gate_name(par_gate g)
{
    switch (g) {
    case PAR_GATE_FAIL: return "FAIL";
    case PAR_GATE_WARN: return "WARN";
    default: return "PASS";
    }
}

static const struct {
    const char *name;
    par_gate gate;
} kinds[PAR_DIFF_KIND_COUNT] = {
    [PAR_DIFF_NEW_FAILURE] = {"new failure", PAR_GATE_FAIL},
    [PAR_DIFF_LATENCY_FAIL] = {"latency regression", PAR_GATE_FAIL},
    [PAR_DIFF_CHANGED] = {"verdict changed", PAR_GATE_WARN},
    [PAR_DIFF_COVERAGE_LOST] = {"coverage lost", PAR_GATE_WARN},
    [PAR_DIFF_CASE_GONE] = {"case only in BASE", PAR_GATE_WARN},
    [PAR_DIFF_BACKEND_GONE] = {"backend only in BASE", PAR_GATE_WARN},
    [PAR_DIFF_DRIFT_WORSE] = {"accuracy drift (worse)", PAR_GATE_WARN},
    [PAR_DIFF_LATENCY_WARN] = {"slower", PAR_GATE_WARN},
    [PAR_DIFF_LATENCY_UNCONFIRMED] = {"regression unconfirmed", PAR_GATE_WARN},
    [PAR_DIFF_FIXED] = {"fixed", PAR_GATE_PASS},
    [PAR_DIFF_COVERAGE_GAINED] = {"coverage gained", PAR_GATE_PASS},
    [PAR_DIFF_DRIFT_BETTER] = {"accuracy drift (better)", PAR_GATE_PASS},
    [PAR_DIFF_FASTER] = {"faster", PAR_GATE_PASS},
    [PAR_DIFF_CASE_ADDED] = {"case only in NEW", PAR_GATE_PASS},
    [PAR_DIFF_BACKEND_ADDED] = {"backend only in NEW", PAR_GATE_PASS},
};

/* A kind's name after a count: "1 new failure", "75 new failures". */
static const char *kind_count_name(par_diff_kind k, int64_t n)
{
    if (n == 1) return kinds[k].name;
    switch (k) {
    case PAR_DIFF_NEW_FAILURE: return "new failures";
    case PAR_DIFF_LATENCY_FAIL: return "latency regressions";
    case PAR_DIFF_LATENCY_UNCONFIRMED: return "regressions unconfirmed";
    case PAR_DIFF_CASE_GONE: return "cases only in BASE";
    case PAR_DIFF_BACKEND_GONE: return "backends only in BASE";
    default: return kinds[k].name;
    }
}

const char *par_diff_kind_name(par_diff_kind k) { return k < PAR_DIFF_KIND_COUNT ? kinds[k].name : "?"; }

par_gate par_diff_kind_gate(par_diff_kind k) { return k < PAR_DIFF_KIND_COUNT ? kinds[k].gate : PAR_GATE_PASS; }

par_gate par_diff_gate(const par_diff *d) { return d ? d->gate : PAR_GATE_PASS; }

void par_diff_free(par_diff *d)
{
    if (!d) return;
    free(d->items);
    free(d);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Matching
 * ------------------------------------------------------------------------------------------------------------- */

static const par_result *rec(const par_report *r, int32_t c, int32_t b)
{
    if (c < 0 || b < 0 || c >= r->n_cases || b >= r->n_backends) return NULL;
    const par_result *x = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
    return x->done ? x : NULL;
}

static int failing(par_verdict v) { return v != PAR_V_PASS && v != PAR_V_UNSUPPORTED; }

/* Case indices sorted by ID, for lookups of the other report's IDs in O(log n). */
static const par_report *sort_report;
static int cmp_case_idx(const void *a, const void *b)
{
    return strcmp(sort_report->cases[*(const int32_t *)a].id, sort_report->cases[*(const int32_t *)b].id);
}

static int32_t *case_index(const par_report *r)
{
    int32_t *ix = malloc(sizeof *ix * (size_t)(r->n_cases ? r->n_cases : 1));
    if (!ix) return NULL;
    for (int32_t i = 0; i < r->n_cases; i++) ix[i] = i;
    sort_report = r;
    qsort(ix, (size_t)r->n_cases, sizeof *ix, cmp_case_idx);
    return ix;
}

static int32_t find_case(const par_report *r, const int32_t *ix, const char *id)
{
    int32_t lo = 0, hi = r->n_cases - 1;
    while (lo <= hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(r->cases[ix[mid]].id, id);
        if (!c) return ix[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int32_t find_backend(const par_report *r, const char *label)
{
    for (int32_t b = 0; b < r->n_backends; b++)
        if (!strcmp(r->backends[b].label, label)) return b;
    return -1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Items
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct builder {
    par_diff *d;
    int32_t cap;
    int oom;
    const par_report *cur;
} builder;

static par_diff_item *add_item(builder *bl, par_diff_kind kind, const char *case_id, const char *backend,
                               int32_t c, int32_t b)
{
    par_diff *d = bl->d;
    d->counts[kind]++;
    if (d->n_items == bl->cap) {
        const int32_t cap = bl->cap ? 2 * bl->cap : 64;
        par_diff_item *p = realloc(d->items, sizeof *p * (size_t)cap);
        if (!p) {
            bl->oom = 1;
            return NULL;
        }
        d->items = p;
        bl->cap = cap;
    }
    par_diff_item *it = &d->items[d->n_items++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->c = c;
    it->b = b;
    it->v_base = it->v_new = -1;
    it->ratio_base = it->ratio_new = it->med_base = it->med_new = NAN;
    it->p = it->p_adj = it->effect = it->confirm_effect = NAN;
    snprintf(it->case_id, sizeof it->case_id, "%s", case_id ? case_id : "");
    snprintf(it->backend, sizeof it->backend, "%s", backend ? backend : "");
    if (c >= 0 && b >= 0) par_report_repro(bl->cur, c, b, it->repro, sizeof it->repro);
    return it;
}

static par_diff_item *add_record(builder *bl, par_diff_kind kind, const par_report *cur, int32_t c, int32_t b,
                                 const par_result *rb, const par_result *rn)
{
    par_diff_item *it = add_item(bl, kind, cur->cases[c].id, cur->backends[b].label, c, b);
    if (!it) return NULL;
    it->v_base = rb ? (int32_t)rb->verdict : -1;
    it->v_new = rn ? (int32_t)rn->verdict : -1;
    const par_result *why = kind == PAR_DIFF_FIXED || !rn ? rb : rn;
    if (why) snprintf(it->reason, sizeof it->reason, "%s", why->reason);
    return it;
}

/* Compared by the oracle (metrics present in the report): PASS or FAIL with elements compared. */
static int compared(const par_result *x)
{
    return (x->verdict == PAR_V_PASS || x->verdict == PAR_V_FAIL) && x->m.n > 0;
}

static void drift(builder *bl, const par_diff_opts *o, const par_report *cur, int32_t c, int32_t b,
                  const par_result *rb, const par_result *rn)
{
    if (!compared(rb) || !compared(rn)) return;
    const double x = rb->m.max_ratio, y = rn->m.max_ratio;
    if (!isfinite(x) || !isfinite(y)) return;
    bl->d->drift_compared++;
    if ((x > y ? x : y) < o->drift_floor) return;
    par_diff_kind k;
    if (y > x && y >= o->drift_factor * x) k = PAR_DIFF_DRIFT_WORSE; /* y > x: two zero ratios did not drift */
    else if (x > y && x >= o->drift_factor * y) k = PAR_DIFF_DRIFT_BETTER;
    else return;
    par_diff_item *it = add_record(bl, k, cur, c, b, rb, rn);
    if (!it) return;
    it->ratio_base = x;
    it->ratio_new = y;
    it->effect = x > 0 ? y / x : INFINITY;
}

/* A record whose latency is judged, waiting for the Holm adjustment over all of them. */
typedef struct lat {
    int32_t c, b;
    int device;                  /* judged on the device's times */
    const par_result *rb, *rn;
    double med_b, med_n, min_b, min_n, p_slower, p_faster;
} lat;

static double min_of(const double *v, int32_t n)
{
    double m = v[0];
    for (int32_t i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

static int cmp_item(const void *pa, const void *pb)
{
    const par_diff_item *x = pa, *y = pb;
    if (x->kind != y->kind) return (int)x->kind - (int)y->kind;
    double ex = 0, ey = 0;
    switch (x->kind) {
    case PAR_DIFF_NEW_FAILURE:
    case PAR_DIFF_CHANGED: {
        /* the worst verdict first: CRASH, TIMEOUT, FAIL, FLAKY, ERROR */
        static const int sev[PAR_V_COUNT] = {0, 4, 0, 2, 6, 5, 3};
        ex = x->v_new >= 0 && x->v_new < PAR_V_COUNT ? sev[x->v_new] : 0;
        ey = y->v_new >= 0 && y->v_new < PAR_V_COUNT ? sev[y->v_new] : 0;
        break;
    }
    case PAR_DIFF_LATENCY_FAIL:
    case PAR_DIFF_LATENCY_WARN:
    case PAR_DIFF_LATENCY_UNCONFIRMED:
    case PAR_DIFF_DRIFT_WORSE: ex = x->effect, ey = y->effect; break;
    case PAR_DIFF_FASTER:
    case PAR_DIFF_DRIFT_BETTER: ex = -x->effect, ey = -y->effect; break;
    default: break;
    }
    if (ex != ey) return ex > ey ? -1 : 1;
    int s = strcmp(x->case_id, y->case_id);
    return s ? s : strcmp(x->backend, y->backend);
}

/* Items worst first, and the gate of the worst kind present. */
static void order_and_gate(par_diff *d)
{
    if (d->n_items > 1) qsort(d->items, (size_t)d->n_items, sizeof *d->items, cmp_item);
    d->gate = PAR_GATE_PASS;
    for (int k = 0; k < PAR_DIFF_KIND_COUNT; k++)
        if (d->counts[k] && kinds[k].gate > d->gate) d->gate = kinds[k].gate;
}

int64_t par_diff_confirm(par_diff *d, const par_diff *again)
{
    int64_t kept = 0;
    for (int32_t i = 0; d && i < d->n_items; i++) {
        par_diff_item *it = &d->items[i];
        if (it->kind != PAR_DIFF_LATENCY_FAIL) continue;
        const par_diff_item *second = NULL;
        for (int32_t j = 0; again && j < again->n_items && !second; j++) {
            const par_diff_item *a = &again->items[j];
            if ((a->kind == PAR_DIFF_LATENCY_FAIL || a->kind == PAR_DIFF_LATENCY_WARN || a->kind == PAR_DIFF_FASTER) &&
                a->device == it->device && !strcmp(a->case_id, it->case_id) && !strcmp(a->backend, it->backend))
                second = a;
        }
        it->confirm_effect = second ? second->effect : NAN;
        if (second && second->kind == PAR_DIFF_LATENCY_FAIL) {
            kept++;
            continue;
        }
        it->kind = PAR_DIFF_LATENCY_UNCONFIRMED;
        d->counts[PAR_DIFF_LATENCY_FAIL]--;
        d->counts[PAR_DIFF_LATENCY_UNCONFIRMED]++;
    }
    if (d) order_and_gate(d);
    return kept;
}

static int opts_bad(const par_diff_opts *o, par_msg *msg)
{
    if (!(o->latency_warn >= 0) || !(o->latency_fail >= o->latency_warn))
        return par_msgf(msg, PAR_ERROR, "--latency-fail (%g) must be at least --latency-warn (%g), both >= 0",
                        o->latency_fail, o->latency_warn) != PAR_OK;
    if (!(o->alpha > 0 && o->alpha < 1))
        return par_msgf(msg, PAR_ERROR, "--alpha must be in (0, 1), not %g", o->alpha) != PAR_OK;
    if (o->min_samples < 1 || o->min_samples > PAR_TIMING_SAMPLES)
        return par_msgf(msg, PAR_ERROR, "--min-samples must be 1..%d, not %d", PAR_TIMING_SAMPLES,
                        (int)o->min_samples) != PAR_OK;
    if (!(o->drift_factor > 1))
        return par_msgf(msg, PAR_ERROR, "--drift-factor must be above 1, not %g", o->drift_factor) != PAR_OK;
    if (!(o->drift_floor >= 0) || !(o->latency_floor_ms >= 0))
        return par_msgf(msg, PAR_ERROR, "the floors must be >= 0") != PAR_OK;
    return 0;
}

static void judge_latency(builder *bl, const par_diff_opts *o, lat *l, int32_t nl)
{
    if (nl == 0) return;
    double *ps = malloc(sizeof *ps * (size_t)nl), *pf = malloc(sizeof *pf * (size_t)nl);
    if (!ps || !pf) {
        free(ps);
        free(pf);
        bl->oom = 1;
        return;
    }
    for (int32_t i = 0; i < nl; i++) ps[i] = l[i].p_slower, pf[i] = l[i].p_faster;
    if (par_holm(ps, nl, ps) < 0 || par_holm(pf, nl, pf) < 0) bl->oom = 1;
    for (int32_t i = 0; i < nl && !bl->oom; i++) {
        const double ratio = l[i].med_n / l[i].med_b, rmin = l[i].min_b > 0 ? l[i].min_n / l[i].min_b : ratio;
        const double slower = ratio < rmin ? ratio : rmin, faster = ratio > rmin ? ratio : rmin;
        const int sig_slower = ps[i] <= o->alpha, sig_faster = pf[i] <= o->alpha;
        par_diff_kind k;
        if (sig_slower && slower >= 1 + o->latency_fail) k = PAR_DIFF_LATENCY_FAIL;
        else if (sig_slower && slower >= 1 + o->latency_warn) k = PAR_DIFF_LATENCY_WARN;
        else if (sig_faster && faster <= 1 / (1 + o->latency_warn)) k = PAR_DIFF_FASTER;
        else continue;
        const int fast = k == PAR_DIFF_FASTER;
        const double p = fast ? l[i].p_faster : l[i].p_slower, adj = fast ? pf[i] : ps[i];
        par_diff_item *it = add_record(bl, k, bl->cur, l[i].c, l[i].b, l[i].rb, l[i].rn);
        if (!it) break;
        it->med_base = l[i].med_b;
        it->med_new = l[i].med_n;
        it->min_base = l[i].min_b;
        it->min_new = l[i].min_n;
        it->device = l[i].device;
        it->n_base = l[i].device ? l[i].rb->t.device_n_samples : l[i].rb->t.n_samples;
        it->n_new = l[i].device ? l[i].rn->t.device_n_samples : l[i].rn->t.n_samples;
        it->p = p;
        it->p_adj = adj;
        it->effect = ratio;
    }
    free(ps);
    free(pf);
}

par_status par_diff_compute(const par_report *base, const par_report *cur, const par_diff_opts *o, par_diff **out,
                            par_msg *msg)
{
    *out = NULL;
    par_diff_opts defaults;
    if (!o) {
        par_diff_opts_default(&defaults);
        o = &defaults;
    }
    if (opts_bad(o, msg)) return PAR_ERROR;
    par_diff *d = calloc(1, sizeof *d);
    int32_t *bix = case_index(base);
    int32_t *cmap = malloc(sizeof *cmap * (size_t)(cur->n_cases ? cur->n_cases : 1));
    int32_t *bmap = malloc(sizeof *bmap * (size_t)(cur->n_backends ? cur->n_backends : 1));
    char *base_case_seen = calloc((size_t)(base->n_cases ? base->n_cases : 1), 1);
    char *base_be_seen = calloc((size_t)(base->n_backends ? base->n_backends : 1), 1);
    lat *l = malloc(sizeof *l * (2 * (size_t)cur->n_cases * (size_t)cur->n_backends + 1)); /* wall and device */
    builder bl = {.d = d, .cur = cur};
    par_mw_cache *cache = NULL;
    int32_t nl = 0;
    if (!d || !bix || !cmap || !bmap || !base_case_seen || !base_be_seen || !l) {
        bl.oom = 1;
        goto done;
    }
    d->opts = *o;
    d->base_interrupted = base->interrupted;
    d->new_interrupted = cur->interrupted;
    d->seeds_differ = base->seed != cur->seed;
    if (base->env && cur->env) {
        snprintf(d->cpu_base, sizeof d->cpu_base, "%s", base->env->cpu_model);
        snprintf(d->cpu_new, sizeof d->cpu_new, "%s", cur->env->cpu_model);
        d->machines_differ = strcmp(d->cpu_base, d->cpu_new) != 0;
    }

    for (int32_t b = 0; b < cur->n_backends; b++) {
        bmap[b] = find_backend(base, cur->backends[b].label);
        if (bmap[b] >= 0) base_be_seen[bmap[b]] = 1;
        else add_item(&bl, PAR_DIFF_BACKEND_ADDED, NULL, cur->backends[b].label, -1, -1);
    }
    for (int32_t b = 0; b < base->n_backends; b++)
        if (!base_be_seen[b]) add_item(&bl, PAR_DIFF_BACKEND_GONE, NULL, base->backends[b].label, -1, -1);
    for (int32_t c = 0; c < cur->n_cases; c++) {
        cmap[c] = find_case(base, bix, cur->cases[c].id);
        if (cmap[c] >= 0) base_case_seen[cmap[c]] = 1;
        else add_item(&bl, PAR_DIFF_CASE_ADDED, cur->cases[c].id, NULL, -1, -1);
    }
    for (int32_t c = 0; c < base->n_cases; c++)
        if (!base_case_seen[c]) add_item(&bl, PAR_DIFF_CASE_GONE, base->cases[c].id, NULL, -1, -1);
    for (int32_t c = 0; c < base->n_cases; c++)
        for (int32_t b = 0; b < base->n_backends; b++) d->records_base += rec(base, c, b) != NULL;

    for (int32_t c = 0; c < cur->n_cases && !bl.oom; c++) {
        for (int32_t b = 0; b < cur->n_backends && !bl.oom; b++) {
            const par_result *rn = rec(cur, c, b), *rb = rec(base, cmap[c], bmap[b]);
            d->records_new += rn != NULL;
            if (!rn) { /* the case and backend are in NEW, the record did not run (an interrupted run) */
                if (rb && rb->verdict == PAR_V_PASS) add_record(&bl, PAR_DIFF_COVERAGE_LOST, cur, c, b, rb, NULL);
                else if (rb && failing(rb->verdict)) add_record(&bl, PAR_DIFF_CHANGED, cur, c, b, rb, NULL);
                continue;
            }
            if (!rb) {
                if (failing(rn->verdict)) add_record(&bl, PAR_DIFF_NEW_FAILURE, cur, c, b, NULL, rn);
                continue;
            }
            d->records_both++;
            const par_verdict vb = rb->verdict, vn = rn->verdict;
            if (vb != vn) {
                par_diff_kind k;
                if (!failing(vb) && failing(vn)) k = PAR_DIFF_NEW_FAILURE;
                else if (failing(vb) && vn == PAR_V_PASS) k = PAR_DIFF_FIXED;
                else if (failing(vb)) k = PAR_DIFF_CHANGED;
                else if (vb == PAR_V_PASS) k = PAR_DIFF_COVERAGE_LOST; /* PASS -> UNSUPPORTED */
                else k = PAR_DIFF_COVERAGE_GAINED;                     /* UNSUPPORTED -> PASS */
                add_record(&bl, k, cur, c, b, rb, rn);
            }
            drift(&bl, o, cur, c, b, rb, rn);
            /* the wall times, then the device's own where both records have them */
            for (int dev = 0; dev < 2 && !bl.oom; dev++) {
                const int32_t sb = dev ? rb->t.device_n_samples : rb->t.n_samples;
                const int32_t sn = dev ? rn->t.device_n_samples : rn->t.n_samples;
                const double *xb = dev ? rb->t.device_samples_ms : rb->t.samples_ms;
                const double *xn = dev ? rn->t.device_samples_ms : rn->t.samples_ms;
                if (sb <= 0 || sn <= 0 || sb > PAR_TIMING_SAMPLES || sn > PAR_TIMING_SAMPLES) continue;
                if (sb < o->min_samples || sn < o->min_samples) {
                    d->latency_few++;
                    continue;
                }
                lat *x = &l[nl];
                *x = (lat){.c = c, .b = b, .device = dev, .rb = rb, .rn = rn};
                x->med_b = par_median(xb, sb);
                x->med_n = par_median(xn, sn);
                x->min_b = min_of(xb, sb);
                x->min_n = min_of(xn, sn);
                if (!(x->med_b > 0) || !isfinite(x->med_n) || !isfinite(x->med_b)) continue;
                if (x->med_b < o->latency_floor_ms && x->med_n < o->latency_floor_ms) {
                    d->latency_below_floor++;
                    continue;
                }
                par_mw_result mw;
                if (par_mann_whitney(xb, sb, xn, sn, &cache, &mw) < 0) {
                    bl.oom = 1;
                    break;
                }
                x->p_slower = mw.p_greater;
                x->p_faster = mw.p_less;
                nl++;
                d->device_judged += dev;
            }
        }
    }
    d->latency_judged = nl;
    if (!bl.oom) judge_latency(&bl, o, l, nl);
    if (!bl.oom) order_and_gate(d);
done:
    par_mw_cache_free(cache);
    free(bix);
    free(cmap);
    free(bmap);
    free(base_case_seen);
    free(base_be_seen);
    free(l);
    if (bl.oom) {
        par_diff_free(d);
        return par_msgf(msg, PAR_ERROR, "diff: out of memory");
    }
    *out = d;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Terminal rendering
 * ------------------------------------------------------------------------------------------------------------- */

static const char *gate_color(par_gate g, int color)
{
    if (!color) return "";
    return g == PAR_GATE_FAIL ? "\033[31m" : g == PAR_GATE_WARN ? "\033[33m" : "\033[32m";
}

static const char *vname(int32_t v) { return v >= 0 && v < PAR_V_COUNT ? par_verdict_name((par_verdict)v) : "absent"; }

/* What an item says after its kind, case and backend, on its first line (s: a cleaned reason). */
static void item_detail(FILE *f, const par_diff_item *it, const char *s)
{
    switch (it->kind) {
    case PAR_DIFF_LATENCY_FAIL:
    case PAR_DIFF_LATENCY_WARN:
    case PAR_DIFF_LATENCY_UNCONFIRMED:
    case PAR_DIFF_FASTER:
        fprintf(f, "%smedian %.4g -> %.4g ms (x%.3f, %+.1f%%), fastest %.4g -> %.4g ms (x%.3f), %d/%d samples, p %.2g, "
                   "Holm %.2g",
                it->device ? "device time: " : "", it->med_base, it->med_new, it->effect, 100 * (it->effect - 1), it->min_base, it->min_new,
                it->min_base > 0 ? it->min_new / it->min_base : NAN, (int)it->n_base, (int)it->n_new, it->p, it->p_adj);
        if (it->kind == PAR_DIFF_LATENCY_UNCONFIRMED && isnan(it->confirm_effect))
            fprintf(f, "; a second timing: no significant change");
        else if (it->kind == PAR_DIFF_LATENCY_UNCONFIRMED || (it->kind == PAR_DIFF_LATENCY_FAIL && !isnan(it->confirm_effect)))
            fprintf(f, "; a second timing: x%.3f", it->confirm_effect);
        break;
    case PAR_DIFF_DRIFT_WORSE:
    case PAR_DIFF_DRIFT_BETTER:
        fprintf(f, "error/budget %.3g -> %.3g (x%.3g)", it->ratio_base, it->ratio_new, it->effect);
        break;
    case PAR_DIFF_CASE_GONE:
    case PAR_DIFF_CASE_ADDED:
    case PAR_DIFF_BACKEND_GONE:
    case PAR_DIFF_BACKEND_ADDED: break;
    default:
        fprintf(f, "%s -> %s%s%s", vname(it->v_base), vname(it->v_new), s[0] ? ": " : "", s);
        break;
    }
}

void par_diff_print(FILE *f, const par_diff *d, int color, int32_t max_items)
{
    const char *reset = color ? "\033[0m" : "";
    const par_diff_opts *o = &d->opts;
    fprintf(f, "\nparity diff: %s%s%s", gate_color(d->gate, color), par_gate_name(d->gate), reset);
    const char *sep = " (";
    for (int k = 0; k < PAR_DIFF_KIND_COUNT; k++)
        if (d->counts[k] && kinds[k].gate == d->gate && d->gate != PAR_GATE_PASS) {
            fprintf(f, "%s%lld %s", sep, (long long)d->counts[k], kind_count_name((par_diff_kind)k, d->counts[k]));
            sep = ", ";
        }
    fprintf(f, "%s\n", sep[0] == ',' ? ")" : "");
    fprintf(f, "records: %lld in BASE, %lld in NEW, %lld in both%s%s\n", (long long)d->records_base,
            (long long)d->records_new, (long long)d->records_both,
            d->base_interrupted ? "; BASE was interrupted" : "", d->new_interrupted ? "; NEW was interrupted" : "");
    /* a kind's gate is printed beside its count only when it has items: "0 FAIL" reads as a failure. The latency
     * kinds say "not judged" when no record had enough samples to be judged at all. */
    const int latency_unjudged = d->latency_judged == 0;
    for (int k = 0; k < PAR_DIFF_KIND_COUNT; k++) {
        const par_gate g = kinds[k].gate;
        const int latency_kind = k == PAR_DIFF_LATENCY_FAIL || k == PAR_DIFF_LATENCY_WARN ||
                                 k == PAR_DIFF_LATENCY_UNCONFIRMED || k == PAR_DIFF_FASTER;
        if (latency_kind && latency_unjudged && !d->counts[k]) {
            fprintf(f, "  %-24s %6lld  not judged\n", kinds[k].name, (long long)d->counts[k]);
            continue;
        }
        fprintf(f, "  %-24s %6lld  %s%s%s\n", kinds[k].name, (long long)d->counts[k],
                d->counts[k] && g != PAR_GATE_PASS ? gate_color(g, color) : "",
                g == PAR_GATE_PASS || !d->counts[k] ? "" : par_gate_name(g),
                d->counts[k] && g != PAR_GATE_PASS ? reset : "");
    }
    fprintf(f,
            "latency: %lld records judged (one-sided Mann-Whitney, Holm over the records judged, alpha %g; warn "
            "+%g%%, fail +%g%% of the median and of the fastest run), %lld with fewer than %d samples on a side, "
            "%lld below %g ms\n",
            (long long)d->latency_judged, o->alpha, 100 * o->latency_warn, 100 * o->latency_fail,
            (long long)d->latency_few, (int)o->min_samples, (long long)d->latency_below_floor, o->latency_floor_ms);
    if (latency_unjudged && d->latency_few > 0)
        fprintf(f, "latency: not judged: every record compared has fewer than %d timed runs on a side (the default "
                   "--repeat is 3); run both sides with --repeat %d or more to judge latency\n",
                (int)o->min_samples, (int)o->min_samples);
    if (d->device_judged)
        fprintf(f, "device time: %lld of them judged on the device's own times too (timing.device), in the same "
                   "family\n", (long long)d->device_judged);
    if (d->seeds_differ)
        fprintf(f, "note: the runs' seeds differ: a case whose ID sets no #seed= had other inputs on each side\n");
    if (d->machines_differ) {
        char a[128], b[128];
        par_text_clean(a, sizeof a, d->cpu_base, sizeof d->cpu_base, 1);
        par_text_clean(b, sizeof b, d->cpu_new, sizeof d->cpu_new, 1);
        fprintf(f, "note: the runs were on different CPUs (%s; %s): latency compares the machines too\n", a, b);
    }
    fprintf(f, "accuracy: %lld records compared on both sides; drift when error/budget moves by x%g or more with the "
               "larger ratio at least %g\n",
            (long long)d->drift_compared, o->drift_factor, o->drift_floor);
    if (d->n_items == 0) return;
    const int32_t shown = max_items < 0 || max_items > d->n_items ? d->n_items : max_items;
    fprintf(f, "\nitems, worst first (%d of %d):\n", (int)shown, (int)d->n_items);
    for (int32_t i = 0; i < shown; i++) {
        const par_diff_item *it = &d->items[i];
        const par_gate g = kinds[it->kind].gate;
        char id[PAR_ID_LEN], be[160], why[PAR_REASON_LEN];
        par_text_clean(id, sizeof id, it->case_id, sizeof it->case_id, 1);
        par_text_clean(be, sizeof be, it->backend, sizeof it->backend, 1);
        par_text_clean(why, sizeof why, it->reason, sizeof it->reason, 1);
        fprintf(f, "  %s%-4s%s %-22s %s%s%s  ", gate_color(g, color), g == PAR_GATE_PASS ? "" : par_gate_name(g),
                reset, kinds[it->kind].name, id, id[0] && be[0] ? "  " : "", be);
        item_detail(f, it, why);
        fputc('\n', f);
        if (it->repro[0]) {
            char rp[sizeof it->repro];
            par_text_clean(rp, sizeof rp, it->repro, sizeof it->repro, 1);
            fprintf(f, "       repro: %s\n", rp);
        }
    }
    if (shown < d->n_items) fprintf(f, "  ... and %d more (--max-items)\n", (int)(d->n_items - shown));
}
