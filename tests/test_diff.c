/*
 * test_diff.c - the report diff (reports/diff.c, reports/diff_html.c) on reports built here record by record: each
 * kind of verdict change and the gate it sets; accuracy drift at and around its factor and floor; latency with
 * samples whose Mann-Whitney p-value is known in closed form (complete separation of 10 and 10: 1 / C(20, 10)) and
 * its Holm adjustment over the records judged; a median that moved without the fastest run; too few samples; the
 * order of the items; the printed summary and repro lines; the HTML page's escaping; options refused.
 */
#include "reports/diff.h"
#include "tmain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXC 16
#define MAXB 2

typedef struct side {
    par_report_case cases[MAXC];
    par_backend_inst be[MAXB];
    par_result res[MAXC * MAXB];
    par_report r;
} side;

static void side_init(side *s, int nb)
{
    memset(s, 0, sizeof *s);
    for (int b = 0; b < nb; b++) snprintf(s->be[b].label, sizeof s->be[b].label, b ? "cpu[threads=2]" : "cpu");
    s->r = (par_report){.parity_exe = "build/parity", .n_backends = nb, .backends = s->be, .cases = s->cases,
                        .results = s->res, .seed = 1};
}

/* Add case id with verdict v on backend 0 (and PASS on backend 1 when there is one); returns the case index. */
static int add_case(side *s, const char *id, par_verdict v)
{
    const int c = s->r.n_cases++;
    snprintf(s->cases[c].id, sizeof s->cases[c].id, "%s", id);
    snprintf(s->cases[c].origin, sizeof s->cases[c].origin, "suite:quick");
    for (int b = 0; b < s->r.n_backends; b++) {
        par_result *x = &s->res[c * s->r.n_backends + b];
        x->done = 1;
        x->verdict = b ? PAR_V_PASS : v;
        if (v == PAR_V_FAIL) snprintf(x->reason, sizeof x->reason, "3 elements over budget");
        if (x->verdict == PAR_V_PASS || x->verdict == PAR_V_FAIL) x->m.n = 8, x->m.max_ratio = 0.5;
    }
    return c;
}

static par_result *res(side *s, int c, int b) { return &s->res[c * s->r.n_backends + b]; }

static void set_samples(par_result *x, int n, double first, double step)
{
    x->t.n_samples = x->t.runs = n;
    for (int i = 0; i < n; i++) x->t.samples_ms[i] = first + step * i;
}

static const par_diff_item *find(const par_diff *d, par_diff_kind k, const char *id)
{
    for (int32_t i = 0; i < d->n_items; i++)
        if (d->items[i].kind == k && !strcmp(d->items[i].case_id, id)) return &d->items[i];
    return NULL;
}

static side A, B;

static void test_verdicts(void)
{
    side_init(&A, 2);
    side_init(&B, 2);
    const char *ids[] = {"pf", "fp", "pu", "up", "fc", "pp"};
    const par_verdict va[] = {PAR_V_PASS, PAR_V_FAIL, PAR_V_PASS, PAR_V_UNSUPPORTED, PAR_V_FAIL, PAR_V_PASS};
    const par_verdict vb[] = {PAR_V_FAIL, PAR_V_PASS, PAR_V_UNSUPPORTED, PAR_V_PASS, PAR_V_CRASH, PAR_V_PASS};
    for (int i = 0; i < 6; i++) {
        add_case(&A, ids[i], va[i]);
        add_case(&B, ids[i], vb[i]);
    }
    add_case(&A, "gone", PAR_V_PASS);
    add_case(&B, "added it's", PAR_V_TIMEOUT); /* failing in NEW, absent from BASE */
    /* a passing and a failing record of BASE not run in NEW */
    res(&B, 5, 1)->done = 0;
    res(&A, 4, 1)->verdict = PAR_V_FLAKY;
    res(&B, 4, 1)->done = 0;
    par_diff *d;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_NEW_FAILURE], 2);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_FIXED], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_COVERAGE_LOST], 2); /* pu, and pp on backend 1 not run */
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_COVERAGE_GAINED], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_CHANGED], 2); /* fc: FAIL -> CRASH, and FLAKY -> not run */
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_CASE_GONE], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_CASE_ADDED], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_BACKEND_GONE], 0);
    CU_ASSERT_EQUAL(d->records_base, 14);
    CU_ASSERT_EQUAL(d->records_new, 12);
    CU_ASSERT_EQUAL(d->records_both, 10);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_FAIL);
    /* worst first: the TIMEOUT before the FAIL, both before everything else */
    CU_ASSERT_EQUAL(d->items[0].kind, PAR_DIFF_NEW_FAILURE);
    CU_ASSERT_STRING_EQUAL(d->items[0].case_id, "added it's");
    CU_ASSERT_EQUAL(d->items[0].v_base, -1);
    CU_ASSERT_EQUAL(d->items[0].v_new, PAR_V_TIMEOUT);
    CU_ASSERT_STRING_EQUAL(d->items[0].repro, "build/parity run --case 'added it'\\''s' -b cpu");
    CU_ASSERT_STRING_EQUAL(d->items[1].case_id, "pf");
    CU_ASSERT_STRING_EQUAL(d->items[1].reason, "3 elements over budget");
    const par_diff_item *fx = find(d, PAR_DIFF_FIXED, "fp");
    CU_ASSERT_PTR_NOT_NULL(fx);
    if (fx) CU_ASSERT_STRING_EQUAL(fx->reason, "3 elements over budget"); /* BASE's reason: what was fixed */
    int not_run = 0;
    for (int32_t i = 0; i < d->n_items; i++) {
        const par_diff_item *it = &d->items[i];
        if (it->kind != PAR_DIFF_CHANGED || it->v_new != -1) continue;
        not_run++;
        CU_ASSERT_STRING_EQUAL(it->backend, "cpu[threads=2]");
        CU_ASSERT_EQUAL(it->v_base, PAR_V_FLAKY);
        CU_ASSERT_STRING_EQUAL(it->repro, "build/parity run --case 'fc' -b 'cpu[threads=2]'");
    }
    CU_ASSERT_EQUAL(not_run, 1);
    const par_diff_item *gone = find(d, PAR_DIFF_CASE_GONE, "gone");
    CU_ASSERT(gone && gone->repro[0] == 0 && gone->c == -1);
    for (int32_t i = 1; i < d->n_items; i++) CU_ASSERT(d->items[i - 1].kind <= d->items[i].kind);

    /* the terminal rendering: the gate line, a count line, the first item and its repro */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    par_diff_print(f, d, 0, 1);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "parity diff: FAIL (2 new failures)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n  coverage lost                 2  WARN\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "FAIL new failure            added it's  cpu  absent -> TIMEOUT"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "       repro: build/parity run --case 'added it'\\''s' -b cpu\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "... and 9 more (--max-items)"));
    free(text);
    par_diff_free(d);

    /* without the new failures: WARN; a report against itself: PASS with nothing listed */
    res(&B, 0, 0)->verdict = PAR_V_PASS;
    B.r.n_cases = 6; /* drops "added" */
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_WARN);
    par_diff_free(d);
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &A.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_PASS);
    CU_ASSERT_EQUAL(d->n_items, 0);
    par_diff_free(d);
}

static void test_backends(void)
{
    side_init(&A, 2);
    side_init(&B, 1);
    add_case(&A, "x", PAR_V_PASS);
    add_case(&B, "x", PAR_V_PASS);
    snprintf(B.be[0].label, sizeof B.be[0].label, "qnnpack");
    par_diff *d;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_BACKEND_GONE], 2);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_BACKEND_ADDED], 1);
    CU_ASSERT_EQUAL(d->records_both, 0);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_WARN);
    par_diff_free(d);
    /* a failing record of a backend absent from BASE is a new failure */
    res(&B, 0, 0)->verdict = PAR_V_CRASH;
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_NEW_FAILURE], 1);
    par_diff_free(d);
}

static void test_drift(void)
{
    side_init(&A, 1);
    side_init(&B, 1);
    /* base, new ratios; the defaults: factor 4, floor 0.01 */
    static const struct {
        const char *id;
        double a, b;
        int kind; /* -1: none */
    } t[] = {
        {"x4", 0.02, 0.08, PAR_DIFF_DRIFT_WORSE},   /* exactly the factor */
        {"x3.9", 0.02, 0.078, -1},                 /* just under */
        {"under floor", 0.001, 0.009, -1},         /* x9 but both below 0.01 */
        {"from zero", 0, 0.02, PAR_DIFF_DRIFT_WORSE},
        {"better", 0.5, 0.1, PAR_DIFF_DRIFT_BETTER},
        {"failing both", 2, 9, PAR_DIFF_DRIFT_WORSE},
        {"zero both", 0, 0, -1}, /* also with the floor at 0 (below) */
    };
    const int n = sizeof t / sizeof t[0];
    for (int i = 0; i < n; i++) {
        const par_verdict v = t[i].a > 1 ? PAR_V_FAIL : PAR_V_PASS;
        res(&A, add_case(&A, t[i].id, v), 0)->m.max_ratio = t[i].a;
        res(&B, add_case(&B, t[i].id, v), 0)->m.max_ratio = t[i].b;
    }
    /* not compared on one side (no elements): no drift whatever the ratio */
    res(&A, add_case(&A, "not compared", PAR_V_PASS), 0)->m.max_ratio = 0.02;
    par_result *nc = res(&B, add_case(&B, "not compared", PAR_V_PASS), 0);
    nc->m.max_ratio = 0.5;
    nc->m.n = 0;
    par_diff *d;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->drift_compared, n);
    for (int i = 0; i < n; i++) {
        const par_diff_item *w = find(d, PAR_DIFF_DRIFT_WORSE, t[i].id), *b = find(d, PAR_DIFF_DRIFT_BETTER, t[i].id);
        CU_ASSERT_EQUAL(w != NULL, t[i].kind == PAR_DIFF_DRIFT_WORSE);
        CU_ASSERT_EQUAL(b != NULL, t[i].kind == PAR_DIFF_DRIFT_BETTER);
    }
    const par_diff_item *x4 = find(d, PAR_DIFF_DRIFT_WORSE, "x4");
    CU_ASSERT(x4 && x4->ratio_base == 0.02 && x4->ratio_new == 0.08 && fabs(x4->effect - 4) < 1e-12);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_WARN);
    par_diff_free(d);
    /* a factor of 8 and the floor at 0: only the x9 under the old floor and the one from 0 remain */
    par_diff_opts o;
    par_diff_opts_default(&o);
    o.drift_factor = 8;
    o.drift_floor = 0;
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, &o, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_DRIFT_WORSE], 2);
    CU_ASSERT_PTR_NOT_NULL(find(d, PAR_DIFF_DRIFT_WORSE, "under floor"));
    CU_ASSERT_PTR_NOT_NULL(find(d, PAR_DIFF_DRIFT_WORSE, "from zero"));
    par_diff_free(d);
}

/* Latency. Records with 10 samples on each side: "fail" (every new sample 20% above every base sample), "warn" (10%
 * above), "same" (the same samples), "median only" (the median 20% up, the fastest run not), and "few" (4 samples).
 * For a complete separation of 10 and 10 the one-sided p is 1 / C(20, 10) = 1 / 184756 exactly; Holm over the 4
 * records judged multiplies the two smallest (tied) p-values by 4. */
static void test_latency(void)
{
    side_init(&A, 1);
    side_init(&B, 1);
    int c;
    c = add_case(&A, "fail", PAR_V_PASS), set_samples(res(&A, c, 0), 10, 1.0, 0.001);
    c = add_case(&B, "fail", PAR_V_PASS), set_samples(res(&B, c, 0), 10, 1.2, 0.001);
    c = add_case(&A, "warn", PAR_V_PASS), set_samples(res(&A, c, 0), 10, 1.0, 0.001);
    c = add_case(&B, "warn", PAR_V_PASS), set_samples(res(&B, c, 0), 10, 1.1, 0.001);
    c = add_case(&A, "same", PAR_V_PASS), set_samples(res(&A, c, 0), 10, 1.0, 0.001);
    c = add_case(&B, "same", PAR_V_PASS), set_samples(res(&B, c, 0), 10, 1.0, 0.001);
    c = add_case(&A, "median only", PAR_V_PASS), set_samples(res(&A, c, 0), 10, 1.0, 0.001);
    c = add_case(&B, "median only", PAR_V_PASS), set_samples(res(&B, c, 0), 10, 1.2, 0.001);
    res(&B, c, 0)->t.samples_ms[3] = 1.0005; /* the fastest run as fast as before */
    c = add_case(&A, "few", PAR_V_PASS), set_samples(res(&A, c, 0), 4, 1.0, 0.001);
    c = add_case(&B, "few", PAR_V_PASS), set_samples(res(&B, c, 0), 4, 2.0, 0.001);
    c = add_case(&A, "tiny", PAR_V_PASS), set_samples(res(&A, c, 0), 10, 0.001, 0.00001);
    c = add_case(&B, "tiny", PAR_V_PASS), set_samples(res(&B, c, 0), 10, 0.002, 0.00001);
    par_diff *d;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->latency_judged, 4);
    CU_ASSERT_EQUAL(d->latency_few, 1);
    CU_ASSERT_EQUAL(d->latency_below_floor, 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_FAIL], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_WARN], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_FASTER], 0);
    const par_diff_item *f = find(d, PAR_DIFF_LATENCY_FAIL, "fail"), *w = find(d, PAR_DIFF_LATENCY_WARN, "warn");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_DOUBLE_EQUAL(f->p, 1.0 / 184756, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(f->p_adj, 4.0 / 184756, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(w->p_adj, 4.0 / 184756, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(f->med_base, 1.0045, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f->med_new, 1.2045, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f->min_new, 1.2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(f->effect, 1.2045 / 1.0045, 1e-12);
    CU_ASSERT_EQUAL(f->n_base, 10);
    CU_ASSERT_PTR_NULL(find(d, PAR_DIFF_LATENCY_FAIL, "median only"));
    CU_ASSERT_PTR_NULL(find(d, PAR_DIFF_LATENCY_WARN, "median only"));
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_FAIL);
    par_diff_free(d);

    /* the other way round: faster, PASS; at alpha below 4 / 184756 nothing is significant any more */
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&B.r, &A.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_FASTER], 2);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_PASS);
    par_diff_free(d);
    par_diff_opts o;
    par_diff_opts_default(&o);
    o.alpha = 3.9 / 184756;
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, &o, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_FAIL] + d->counts[PAR_DIFF_LATENCY_WARN], 0);
    par_diff_free(d);
    /* fail threshold above 20%: the +20% record is a WARN */
    par_diff_opts_default(&o);
    o.latency_fail = 0.25;
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, &o, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_WARN], 2);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_WARN);
    par_diff_free(d);
}

/* A second timing (par_diff_confirm): a regression it shows again stays a FAIL; one it shows only a little slower, or
 * not at all, becomes "regression not reproduced" (WARN), and the gate follows. Three records +20% in the first
 * timing; in the second, "again" is +20% still, "gone" is as fast as the base, "half" is +8% (significant, below the
 * fail threshold). */
static void test_confirm(void)
{
    side_init(&A, 1);
    side_init(&B, 1);
    static side C;
    side_init(&C, 1);
    const char *names[3] = {"again", "gone", "half"};
    const double second[3] = {1.2, 1.0, 1.08};
    for (int i = 0; i < 3; i++) {
        int c = add_case(&A, names[i], PAR_V_PASS);
        set_samples(res(&A, c, 0), 10, 1.0, 0.001);
        c = add_case(&B, names[i], PAR_V_PASS);
        set_samples(res(&B, c, 0), 10, 1.2, 0.001);
        c = add_case(&C, names[i], PAR_V_PASS);
        set_samples(res(&C, c, 0), 10, second[i], 0.001);
    }
    par_diff *d, *again;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_FAIL], 3);
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &C.r, NULL, &again, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_diff_confirm(d, again), 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_FAIL], 1);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_UNCONFIRMED], 2);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_FAIL);
    const par_diff_item *kept = find(d, PAR_DIFF_LATENCY_FAIL, "again"), *gone = find(d, PAR_DIFF_LATENCY_UNCONFIRMED,
                                                                                     "gone"),
                        *half = find(d, PAR_DIFF_LATENCY_UNCONFIRMED, "half");
    CU_ASSERT_PTR_NOT_NULL_FATAL(kept);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gone);
    CU_ASSERT_PTR_NOT_NULL_FATAL(half);
    CU_ASSERT_DOUBLE_EQUAL(kept->confirm_effect, 1.2045 / 1.0045, 1e-12);
    CU_ASSERT_TRUE(isnan(gone->confirm_effect)); /* no significant change in the second timing */
    CU_ASSERT_DOUBLE_EQUAL(half->confirm_effect, 1.0845 / 1.0045, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(gone->effect, 1.2045 / 1.0045, 1e-12); /* the first timing's effect stays shown */
    /* the items are still worst first: the FAIL, then the WARNs */
    CU_ASSERT_EQUAL(d->items[0].kind, PAR_DIFF_LATENCY_FAIL);
    par_diff_free(again);
    /* a second timing with no regression at all: nothing stays, the gate is WARN */
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &A.r, NULL, &again, &msg), PAR_OK);
    CU_ASSERT_EQUAL(par_diff_confirm(d, again), 0);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_FAIL], 0);
    CU_ASSERT_EQUAL(d->counts[PAR_DIFF_LATENCY_UNCONFIRMED], 3);
    CU_ASSERT_EQUAL(par_diff_gate(d), PAR_GATE_WARN);
    par_diff_free(again);
    par_diff_free(d);
}

static void test_html(void)
{
    side_init(&A, 1);
    side_init(&B, 1);
    add_case(&A, "<b>&\"x\"", PAR_V_PASS);
    add_case(&B, "<b>&\"x\"", PAR_V_FAIL);
    snprintf(res(&B, 0, 0)->reason, sizeof res(&B, 0, 0)->reason, "a\x01<script>");
    par_diff *d;
    par_msg msg = {{0}};
    CU_ASSERT_EQUAL_FATAL(par_diff_compute(&A.r, &B.r, NULL, &d, &msg), PAR_OK);
    char dir[] = "/tmp/parity_test_diff_XXXXXX", path[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/diff.html", dir);
    CU_ASSERT_EQUAL(par_diff_write_html(d, path, &msg), PAR_OK);
    FILE *f = fopen(path, "r");
    char page[16384] = {0};
    if (f) {
        CU_ASSERT(fread(page, 1, sizeof page - 1, f) > 0);
        fclose(f);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "&lt;b&gt;&amp;&quot;x&quot;"));
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "a\xEF\xBF\xBD&lt;script&gt;")); /* U+FFFD for the control character */
    CU_ASSERT_PTR_NULL(strstr(page, "a\x01"));
    CU_ASSERT_PTR_NULL(strstr(page, "<b>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "<span class=\"gate vF\">FAIL</span>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(page, "</html>"));
    unlink(path);
    /* an unwritable path: the message names it */
    snprintf(path, sizeof path, "%s/no/such/diff.html", dir);
    CU_ASSERT_EQUAL(par_diff_write_html(d, path, &msg), PAR_ERROR);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, path));
    rmdir(dir);
    par_diff_free(d);
}

static void test_bad_options(void)
{
    side_init(&A, 1);
    par_diff_opts o;
    par_diff *d = (par_diff *)&o;
    par_msg msg = {{0}};
    par_diff_opts_default(&o);
    o.latency_fail = 0.01;
    CU_ASSERT_EQUAL(par_diff_compute(&A.r, &A.r, &o, &d, &msg), PAR_ERROR);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg.text, "--latency-fail"));
    par_diff_opts_default(&o);
    o.alpha = 0;
    CU_ASSERT_EQUAL(par_diff_compute(&A.r, &A.r, &o, &d, &msg), PAR_ERROR);
    par_diff_opts_default(&o);
    o.drift_factor = 1;
    CU_ASSERT_EQUAL(par_diff_compute(&A.r, &A.r, &o, &d, &msg), PAR_ERROR);
    par_diff_opts_default(&o);
    o.min_samples = 0;
    CU_ASSERT_EQUAL(par_diff_compute(&A.r, &A.r, &o, &d, &msg), PAR_ERROR);
    par_diff_free(NULL);
}

static const CU_TestInfo tests[] = {
    {"verdicts", test_verdicts},
    {"backends", test_backends},
    {"drift", test_drift},
    {"latency", test_latency},
    {"confirm", test_confirm},
    {"html", test_html},
    {"bad_options", test_bad_options},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("diff", tests)
