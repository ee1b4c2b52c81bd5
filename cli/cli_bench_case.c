/*
 * cli_bench_case.c - one case of `parity bench` on every backend: a job per backend through its fork server
 * (exec/exec.h), the runs interleaved across backends with the order alternating every round, then the checks and
 * the table. The statistics are the median (the mean of the two middle samples for an even count) and nearest-rank
 * p10 / p90 of the timed runs; the device times and the per-node device times are kept as the executor validated
 * them.
 */
#include "bench.h"

#include "core/requant.h"
#include "oracle/oracle.h"
#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_be {
    const par_backend_inst *inst;
    par_exec_job *job;       /* open from begin to end */
    par_exec_out out;        /* the executor's result once the job ended */
    double *samples;         /* [repeat] the timed runs' times */
    int32_t n_samples;
    double *dev;             /* [repeat] device time of each timed run it measured (n_dev of them) */
    int32_t n_dev;
    double *node_ms;         /* [node_rows * n_nodes] per-node device times of the first timed runs (-1: none) */
    long node_rows;
    int32_t n_node_runs;
    const char *verdict;     /* "PASS", "FAIL", or the executor's verdict */
    const char *note;        /* the caller's note on this backend, "" when none */
} bench_be;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double pct(const double *s, int n, double q)
{
    int i = (int)ceil(q * n) - 1;
    return s[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static double median(const double *s, int n)
{
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

typedef struct node_time {
    int32_t node;
    double med;
} node_time;

static int cmp_node_time(const void *a, const void *b)
{
    const node_time *x = a, *y = b;
    if (x->med != y->med) return x->med < y->med ? 1 : -1;
    return x->node - y->node;
}

/* Per node: the median of its device times over the kept runs (a node not timed apart, -1, or with a value that is
 * not a time, is left out); printed most first, top BENCH_TOP_NODES unless all; into jnodes too. */
static void bench_print_nodes(const bench_be *x, const par_graph_desc *g, int all, json_object *jnodes)
{
    if (x->n_node_runs <= 0 || g->n_nodes <= 0) return;
    node_time *nt = calloc((size_t)g->n_nodes, sizeof *nt);
    double *v = calloc((size_t)x->n_node_runs, sizeof *v);
    int32_t n = 0;
    for (int32_t i = 0; nt && v && i < g->n_nodes; i++) {
        int32_t m = 0;
        for (int32_t k = 0; k < x->n_node_runs; k++) {
            double t = x->node_ms[(size_t)k * (size_t)g->n_nodes + (size_t)i];
            if (isfinite(t) && t >= 0) v[m++] = t;
        }
        if (!m) continue;
        qsort(v, (size_t)m, sizeof *v, cmp_d);
        nt[n++] = (node_time){i, median(v, m)};
    }
    if (n) {
        qsort(nt, (size_t)n, sizeof *nt, cmp_node_time);
        double sum = 0;
        for (int32_t i = 0; i < n; i++) sum += nt[i].med;
        int32_t shown = all || n <= BENCH_TOP_NODES ? n : BENCH_TOP_NODES;
        printf("%-24s   device time per node, median of %d runs (%d of %d nodes timed%s):\n", "", (int)x->n_node_runs,
               (int)n, (int)g->n_nodes, shown < n ? "; all with --nodes" : "");
        for (int32_t i = 0; i < n; i++) {
            const par_node *nd = &g->nodes[nt[i].node];
            if (i < shown)
                printf("%-24s     %5d %-28.28s %-16.16s %9.4f ms %5.1f%%\n", "", (int)nt[i].node, nd->name ? nd->name : "",
                       nd->op ? nd->op : "?", nt[i].med, sum > 0 ? 100.0 * nt[i].med / sum : 0.0);
            json_object *jn = json_object_new_object();
            json_object_object_add(jn, "node", json_object_new_int(nt[i].node));
            json_object_object_add(jn, "name", json_object_new_string(nd->name ? nd->name : ""));
            json_object_object_add(jn, "op", json_object_new_string(nd->op ? nd->op : ""));
            json_object_object_add(jn, "device_median_ms", json_object_new_double(nt[i].med));
            json_object_array_add(jnodes, jn);
        }
    }
    free(nt);
    free(v);
}


/* Start backend b's job on the case (through its fork server), with room for its samples. */
static void bench_begin(bench_be *x, const par_graph_desc *g, void **inputs, par_exec_server *srv, const bench_opts *o)
{
    x->verdict = "-";
    x->samples = calloc((size_t)o->repeat, sizeof *x->samples);
    x->dev = calloc((size_t)o->repeat, sizeof *x->dev);
    x->node_rows = o->repeat < BENCH_NODE_RUNS ? o->repeat : BENCH_NODE_RUNS;
    if (g->n_nodes > 0) x->node_ms = malloc(sizeof *x->node_ms * (size_t)(x->node_rows + 1) * (size_t)g->n_nodes);
    if (!srv || !x->samples || !x->dev || (g->n_nodes > 0 && !x->node_ms)) return; /* no job: the note says why */
    par_exec_opts eo = {.warmup = (int32_t)o->warmup, .repeat = (int32_t)o->repeat, .timeout_s = o->timeout_s,
                        .isolate = 1, .server = srv};
    x->job = par_exec_begin(x->inst, g, (const void *const *)inputs, &eo);
}

/* Round r of the interleaved runs for one backend: the run's time, device time and per-node device times kept when
 * it is a timed run. A job whose verdict is decided makes no more runs. */
static void bench_step(bench_be *x, const par_graph_desc *g, long r, const bench_opts *o)
{
    if (!x->job) return;
    long k = r - o->warmup; /* timed run number, 0-based */
    par_exec_run_info ri = {0};
    /* the first BENCH_NODE_RUNS timed runs keep their per-node times; the others go to the scratch row */
    if (x->node_ms) ri.node_ms = x->node_ms + (size_t)(k >= 0 && k < x->node_rows ? k : x->node_rows) * (size_t)g->n_nodes;
    if (!par_exec_step(x->job, o->timeout_s, &ri) || k < 0) return;
    x->samples[x->n_samples++] = ri.ms;
    if (ri.dev_measured) x->dev[x->n_dev++] = ri.dev_ms;
    if (ri.dev_measured && k < x->node_rows) x->n_node_runs = (int32_t)k + 1;
}

/* The check of a job that ran: its outputs against the reference in the precision profile it declares (the probe's
 * answers and its per-node declarations; one reference per distinct profile, refs[] caching them), and its
 * diagnostics. Returns 1 when it fails. */
static int bench_check(bench_be *x, const par_graph_desc *g, void **inputs,
                       par_ref_result *refs[PAR_ARITH_N_KINDS][PAR_REQUANT_N_SCHEMES][4])
{
    par_prec p = par_prec_of_backend(x->inst);
    unsigned a = (unsigned)x->inst->arith < PAR_ARITH_N_KINDS ? (unsigned)x->inst->arith : 0;
    par_ref_result *own = NULL; /* a backend with per-node declarations gets a reference of its own */
    par_ref_result **ref = &refs[a][p.requant][(p.requant_exact ? 1 : 0) | (p.flush > 0 ? 2 : 0)];
    if (x->out.algo || x->out.requant) {
        p.algo = x->out.algo;
        p.requant_node = x->out.requant;
        ref = &own;
    }
    par_msg msg = {{0}};
    if (!*ref) par_ref_run(g, &p, (const void *const *)inputs, ref, &msg);
    if (!*ref) {
        x->verdict = "ERROR";
        fprintf(stderr, "parity bench: %s: the reference: %s\n", x->inst->label, msg.text);
        return 1;
    }
    int64_t bad = 0;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        par_metrics m;
        bad += par_oracle_compare(&(*ref)->values[g->outputs[k]], x->out.outputs[k], &m);
    }
    par_ref_result_destroy(own);
    x->verdict = bad || x->out.n_diag ? "FAIL" : "PASS";
    return bad || x->out.n_diag;
}

/* One backend's row of the table and its JSON object. */
static void bench_row(const bench_be *x, const par_graph_desc *g, const bench_opts *o, double base, json_object *jbs)
{
    json_object *jb = json_object_new_object();
    json_object_object_add(jb, "backend", json_object_new_string(x->inst->label));
    if (x->n_samples == o->repeat && x->out.verdict == PAR_V_PASS) {
        double med = median(x->samples, x->n_samples), p10 = pct(x->samples, x->n_samples, 0.1);
        double p90 = pct(x->samples, x->n_samples, 0.9);
        char devs[32] = "-";
        if (x->n_dev > 0) snprintf(devs, sizeof devs, "%.3f", median(x->dev, x->n_dev));
        printf("%-24s %11.3f %11.3f %9.3f %9.3f %8.2fx %6s %11s\n", x->inst->label, x->out.t.prepare_ms, med, p10, p90,
               med / base, x->verdict, devs);
        json_object_object_add(jb, "prepare_ms", json_object_new_double(x->out.t.prepare_ms));
        json_object_object_add(jb, "median_ms", json_object_new_double(med));
        json_object_object_add(jb, "p10_ms", json_object_new_double(p10));
        json_object_object_add(jb, "p90_ms", json_object_new_double(p90));
        json_object_object_add(jb, "ratio", json_object_new_double(med / base));
        json_object_object_add(jb, "check", json_object_new_string(x->verdict));
        if (x->n_dev > 0) {
            json_object_object_add(jb, "device_runs", json_object_new_int(x->n_dev));
            json_object_object_add(jb, "device_median_ms", json_object_new_double(median(x->dev, x->n_dev)));
            json_object_object_add(jb, "device_p10_ms", json_object_new_double(pct(x->dev, x->n_dev, 0.1)));
            json_object_object_add(jb, "device_p90_ms", json_object_new_double(pct(x->dev, x->n_dev, 0.9)));
        }
        if (x->out.n_diag) {
            printf("%-24s   diagnostic: %s%s\n", "", x->out.diag, x->out.n_diag > 1 ? " (and more)" : "");
            json_object_object_add(jb, "diagnostic", json_object_new_string(x->out.diag));
            json_object_object_add(jb, "diagnostics", json_object_new_int(x->out.n_diag));
        }
        if (x->note[0]) printf("%-24s   note: %s\n", "", x->note);
        if (x->n_node_runs > 0) {
            json_object *jn = json_object_new_array();
            bench_print_nodes(x, g, o->all_nodes, jn);
            json_object_object_add(jb, "nodes", jn);
        }
    } else {
        /* no job (its note says why), or the executor's verdict: UNSUPPORTED, ERROR, CRASH, TIMEOUT, FLAKY, FAIL */
        char why[PAR_REASON_LEN + 32];
        if (!x->job && x->note[0]) snprintf(why, sizeof why, "%s", x->note);
        else snprintf(why, sizeof why, "%s: %s", par_verdict_name(x->out.verdict), x->out.reason);
        printf("%-24s %s\n", x->inst->label, why);
        json_object_object_add(jb, "check", json_object_new_string(x->job ? par_verdict_name(x->out.verdict) : "-"));
        json_object_object_add(jb, "error", json_object_new_string(why));
    }
    json_object_array_add(jbs, jb);
}

static void bench_free(bench_be *x)
{
    par_exec_out_free(&x->out);
    free(x->samples);
    free(x->dev);
    free(x->node_ms);
}

int par_bench_case(const par_case *c, const par_backends *bs, par_exec_server *const *servers, char notes[][PAR_MSG_LEN],
                   const bench_opts *o, json_object *jcases)
{
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    void **inputs = NULL;
    par_msg msg = {{0}};
    if (par_case_make_inputs(c, &inputs, &msg) != PAR_OK) {
        fprintf(stderr, "parity bench: %s: %s\n", c->id, msg.text);
        return PAR_EXIT_INTERNAL;
    }
    bench_be *bb = calloc((size_t)bs->n, sizeof *bb);
    if (!bb) {
        par_case_free_inputs(c, inputs);
        return PAR_EXIT_INTERNAL;
    }
    for (int32_t b = 0; b < bs->n; b++) {
        bb[b].inst = &bs->inst[b];
        bb[b].note = notes[b];
        bench_begin(&bb[b], g, inputs, servers[b], o);
    }
    /* warm-up, then the timed runs, interleaved; the order alternates every round */
    for (long r = 0; r < o->warmup + o->repeat; r++)
        for (int32_t k = 0; k < bs->n; k++) bench_step(&bb[r % 2 ? bs->n - 1 - k : k], g, r, o);
    int rc = PAR_EXIT_OK;
    par_ref_result *refs[PAR_ARITH_N_KINDS][PAR_REQUANT_N_SCHEMES][4] = {{{NULL}}};
    for (int32_t b = 0; b < bs->n; b++) {
        bench_be *x = &bb[b];
        if (!x->job) continue;
        par_exec_end(x->job, &x->out);
        if (x->out.verdict == PAR_V_PASS) {
            if (bench_check(x, g, inputs, refs)) rc = PAR_EXIT_FAIL;
        } else if (x->out.verdict != PAR_V_UNSUPPORTED) {
            rc = PAR_EXIT_FAIL;
        }
    }
    for (int k = 0; k < PAR_ARITH_N_KINDS; k++)
        for (int j = 0; j < PAR_REQUANT_N_SCHEMES; j++)
            for (int f = 0; f < 4; f++) par_ref_result_destroy(refs[k][j][f]);

    char thr[48];
    if (o->threads) snprintf(thr, sizeof thr, "%ld thread%s", o->threads, o->threads == 1 ? "" : "s");
    else snprintf(thr, sizeof thr, "backends' default threads");
    printf("\n%s  (%ld timed runs after %ld warm-up, interleaved, %s)\n", c->id, o->repeat, o->warmup, thr);
    printf("%-24s %11s %11s %9s %9s %9s %6s %11s\n", "backend", "prepare ms", "median ms", "p10 ms", "p90 ms", "ratio",
           "check", "device ms");
    json_object *jc = json_object_new_object(), *jbs = json_object_new_array();
    json_object_object_add(jc, "case", json_object_new_string(c->id));
    double base = 0;
    for (int32_t b = 0; b < bs->n; b++) {
        bench_be *x = &bb[b];
        if (x->n_samples == o->repeat && x->out.verdict == PAR_V_PASS) {
            qsort(x->samples, (size_t)x->n_samples, sizeof *x->samples, cmp_d);
            qsort(x->dev, (size_t)x->n_dev, sizeof *x->dev, cmp_d);
            if (base == 0) base = median(x->samples, x->n_samples); /* the first backend that ran */
        }
        bench_row(x, g, o, base, jbs);
        bench_free(x);
    }
    json_object_object_add(jc, "backends", jbs);
    json_object_array_add(jcases, jc);
    free(bb);
    par_case_free_inputs(c, inputs);
    return rc;
}
