/*
 * runner.c - runs the selected cases on every backend instance: worker processes share the cases (case i goes to
 * worker i mod J), each case runs on each backend through exec.c (isolated), the oracle judges, and the records go
 * to memory shared with the parent. The parent draws the progress bar, prints the summary and writes the report.
 * A worker that dies (a harness bug) costs its unfinished cases an ERROR each and the run exit code 3, nothing more.
 */
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oracle/oracle.h"
#include "core/requant.h"
#include "reports/report.h"
#include "cases/sweep.h"

typedef struct shared_state {
    atomic_long done;       /* case x backend records finished */
    atomic_long bad;        /* records not PASS/UNSUPPORTED */
    atomic_int internal;    /* a reference or harness failure happened */
} shared_state;

typedef struct run_ctx {
    const par_case_set *set;
    const par_run_config *cfg;
    par_result *results;
    shared_state *st;
    int32_t worker, n_workers;
} run_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fmt_coords(const par_metrics *m, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int32_t k = 0; k < m->worst_rank && used < len; k++) {
        int w = snprintf(buf + used, len - used, "%s%lld", k ? "," : "[", (long long)m->worst_coords[k]);
        if (w < 0) return;
        used += (size_t)w;
    }
    if (used < len) snprintf(buf + used, len - used, m->worst_rank ? "]" : "[]");
}

/* The requantization scheme a backend declares (PAR_PROC_REQUANT; fp32 when absent), asked once per worker process
 * and backend instance, only when a case has quantized values: init, knobs (the scheme may depend on them),
 * get_proc, destroy, in this process. par_exec_probe has already run the same init and destroy in isolation. */
#define MAX_CACHED_BACKENDS 64
static int requant_known[MAX_CACHED_BACKENDS];
static par_requant requant_cache[MAX_CACHED_BACKENDS];
static int requant_exact_cache[MAX_CACHED_BACKENDS];

/* The scheme, and in *exact whether the backend promises it bit-exactly (PAR_PROC_REQUANT_EXACT). */
static par_requant backend_requant(const par_backend_inst *inst, int32_t b, int *exact)
{
    if (b >= 0 && b < MAX_CACHED_BACKENDS && requant_known[b]) {
        *exact = requant_exact_cache[b];
        return requant_cache[b];
    }
    par_requant r = PAR_REQUANT_FP32;
    int ex = 0;
    const par_backend *be = inst->be;
    void *ctx = NULL;
    par_msg m = {{0}};
    /* only a backend the probe found usable (its init returned in time in a child) is initialized here */
    if (be && inst->usable && be->get_proc && (!be->init || be->init(&ctx, &m) == PAR_OK)) {
        par_set_knob_fn set = (par_set_knob_fn)be->get_proc(ctx, PAR_PROC_SET_KNOB);
        for (int32_t k = 0; set && k < inst->n_knobs; k++) set(ctx, inst->knob_key[k], inst->knob_val[k], &m);
        par_prec declared = par_prec_of_backend(be, ctx);
        r = declared.requant;
        ex = declared.requant_exact;
        if (be->destroy) be->destroy(ctx);
    }
    if (b >= 0 && b < MAX_CACHED_BACKENDS) {
        requant_known[b] = 1;
        requant_cache[b] = r;
        requant_exact_cache[b] = ex;
    }
    *exact = ex;
    return r;
}

static int has_quant(const par_graph_desc *g)
{
    for (int32_t i = 0; i < g->n_values; i++)
        if (g->values[i].dtype == PAR_DTYPE_QU8 || g->values[i].dtype == PAR_DTYPE_QS8) return 1;
    return 0;
}

/* Judge a backend's outputs against the reference. */
static void judge(const par_graph_desc *g, const par_ref_result *ref, const par_exec_out *out, par_result *r)
{
    par_metrics_init(&r->m);
    int64_t bad = 0;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        par_metrics m;
        bad += par_oracle_compare(&ref->values[g->outputs[k]], out->outputs[k], &m);
        par_metrics_merge(&r->m, &m, k);
    }
    if (bad == 0) {
        r->verdict = PAR_V_PASS;
        r->reason[0] = 0;
        if (r->m.quant && r->m.n_labelled > 0)
            snprintf(r->reason, sizeof r->reason,
                     "labelled: %lld of %lld integers off the declared scheme by steps another scheme, a tie or the "
                     "inputs' budget explains (histogram -2:%lld -1:%lld +1:%lld +2:%lld; bias %.3g, bound %.3g)",
                     (long long)r->m.n_labelled, (long long)r->m.n, (long long)r->m.hist[PAR_HIST_ZERO - 2],
                     (long long)r->m.hist[PAR_HIST_ZERO - 1], (long long)r->m.hist[PAR_HIST_ZERO + 1],
                     (long long)r->m.hist[PAR_HIST_ZERO + 2], r->m.bias, r->m.bias_bound);
        return;
    }
    const par_metrics *m = &r->m;
    char coords[96];
    fmt_coords(m, coords, sizeof coords);
    const char *oname = g->values[g->outputs[m->worst_output]].name;
    r->verdict = PAR_V_FAIL;
    if (m->quant && m->bias_over && m->n_over == 0)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': bias %.4g steps exceeds %.4g, what rounding can cause (every element of %lld within "
                 "its range; %lld labelled)",
                 oname, m->bias, m->bias_bound, (long long)m->n, (long long)m->n_labelled);
    else if (m->quant)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld of %lld integers outside their range%s; worst %s: got %.0f, want %.0f (+%.0f "
                 "allowed on that side)",
                 oname, (long long)m->n_over, (long long)m->n, m->bias_over ? ", and a bias beyond rounding" : "",
                 coords, m->worst_got, m->worst_ref, m->worst_budget);
    else if (m->n_nonfinite)
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld non-finite and %lld over budget of %lld; worst %s: got %.9g, want %.9g +- %.3g",
                 oname, (long long)m->n_nonfinite, (long long)m->n_over, (long long)m->n, coords, m->worst_got,
                 m->worst_ref, m->worst_budget);
    else
        snprintf(r->reason, sizeof r->reason,
                 "output '%s': %lld of %lld elements over budget; worst %s: got %.9g, want %.9g +- %.3g (%.3g x budget)",
                 oname, (long long)m->n_over, (long long)m->n, coords, m->worst_got, m->worst_ref, m->worst_budget,
                 m->max_ratio);
}

static void process_case(run_ctx *rc, int32_t ci, par_case *c)
{
    const par_run_config *cfg = rc->cfg;
    const par_graph_desc *g = par_graph_desc_of(c->graph);
    void **inputs = NULL;
    par_msg msg = {{0}};
    /* references per (arith, requant, strict): the scheme only matters for graphs with quantized values */
    par_ref_result *refs[3][PAR_REQUANT_N_SCHEMES][2] = {{{NULL}}};
    const int quant = has_quant(g);
    par_status ist = par_case_make_inputs(c, &inputs, &msg);
    for (int32_t b = 0; b < cfg->n_backends; b++) {
        par_result *r = &rc->results[(size_t)ci * (size_t)cfg->n_backends + (size_t)b];
        const par_backend_inst *inst = &cfg->backends[b];
        memset(r, 0, sizeof *r);
        par_metrics_init(&r->m);
        if (ist != PAR_OK) {
            r->verdict = PAR_V_ERROR;
            snprintf(r->reason, sizeof r->reason, "inputs: %s", msg.text);
            atomic_store(&rc->st->internal, 1);
        } else {
            unsigned a = (unsigned)inst->be->arith < 3 ? (unsigned)inst->be->arith : 0;
            int exact = 0;
            unsigned q = quant ? (unsigned)backend_requant(inst, b, &exact) : 0;
            par_ref_result **ref = &refs[a][q][exact];
            if (!*ref) {
                par_prec p = par_prec_for((par_arith)a);
                p.requant = (par_requant)q;
                p.requant_exact = exact;
                par_msg rm = {{0}};
                par_status rs = par_ref_run(g, &p, (const void *const *)inputs, ref, &rm);
                if (rs != PAR_OK) {
                    r->verdict = rs == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR;
                    snprintf(r->reason, sizeof r->reason, "%s", rm.text);
                    if (rs != PAR_UNSUPPORTED) atomic_store(&rc->st->internal, 1);
                }
            }
            if (*ref) {
                par_exec_opts o = cfg->exec;
                if (c->repeat > 0) o.repeat = c->repeat;
                if (c->timeout_s > 0) o.timeout_s = c->timeout_s;
                par_exec_out out;
                memset(&out, 0, sizeof out);
                par_exec_run(inst, g, (const void *const *)inputs, &o, &out);
                r->t = out.t;
                if (out.verdict == PAR_V_PASS) {
                    judge(g, *ref, &out, r);
                } else {
                    r->verdict = out.verdict;
                    snprintf(r->reason, sizeof r->reason, "%s", out.reason);
                }
                par_exec_out_free(&out);
            }
        }
        r->done = 1;
        if (r->verdict != PAR_V_PASS && r->verdict != PAR_V_UNSUPPORTED) atomic_fetch_add(&rc->st->bad, 1);
        atomic_fetch_add(&rc->st->done, 1);
    }
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < PAR_REQUANT_N_SCHEMES; j++) {
            par_ref_result_destroy(refs[k][j][0]);
            par_ref_result_destroy(refs[k][j][1]);
        }
    if (inputs) par_case_free_inputs(c, inputs);
}

/* Suite cases are built while walking the suite once per worker. */
typedef struct walk_ctx {
    run_ctx *rc;
    const char *suite;
    const int64_t *walk_index; /* sorted walk indices of the selected cases of this suite */
    const int32_t *slot;       /* their positions in the case set */
    int32_t n;
    int32_t cursor;
} walk_ctx;

static int32_t find_slot(walk_ctx *w, int64_t index)
{
    int32_t lo = 0, hi = w->n - 1;
    while (lo <= hi) {
        int32_t mid = (lo + hi) / 2;
        if (w->walk_index[mid] == index) return w->slot[mid];
        if (w->walk_index[mid] < index) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int walk_want(void *user, int64_t index, const char *id, const char *op)
{
    walk_ctx *w = user;
    int32_t s = find_slot(w, index);
    return s >= 0 && s % w->rc->n_workers == w->rc->worker;
}

static void walk_build(void *user, int64_t index, par_case *c)
{
    walk_ctx *w = user;
    int32_t s = find_slot(w, index);
    if (s >= 0) process_case(w->rc, s, c);
    par_case_destroy(c);
}

static void walk_error(void *user, const char *id, const par_msg *msg)
{
    walk_ctx *w = user;
    run_ctx *rc = w->rc;
    for (int32_t i = 0; i < rc->set->n; i++) {
        if (strcmp(rc->set->cases[i].id, id) != 0) continue;
        for (int32_t b = 0; b < rc->cfg->n_backends; b++) {
            par_result *r = &rc->results[(size_t)i * (size_t)rc->cfg->n_backends + (size_t)b];
            memset(r, 0, sizeof *r);
            r->verdict = PAR_V_ERROR;
            snprintf(r->reason, sizeof r->reason, "case could not be built: %s", msg->text);
            r->done = 1;
            atomic_fetch_add(&rc->st->bad, 1);
            atomic_fetch_add(&rc->st->done, 1);
        }
    }
    atomic_store(&rc->st->internal, 1);
}

static int cmp_i64_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static void worker_main(run_ctx *rc)
{
    const par_case_set *set = rc->set;
    for (int32_t i = 0; i < set->n; i++) {
        if (i % rc->n_workers != rc->worker || !set->cases[i].loaded) continue;
        process_case(rc, i, set->cases[i].loaded);
    }
    /* one walk per distinct suite */
    const char *done_suites[8];
    int n_done = 0;
    for (int32_t i = 0; i < set->n; i++) {
        const char *suite = set->cases[i].suite;
        if (!suite) continue;
        int seen = 0;
        for (int k = 0; k < n_done; k++)
            if (strcmp(done_suites[k], suite) == 0) seen = 1;
        if (seen || n_done == 8) continue;
        done_suites[n_done++] = suite;
        int32_t n = 0;
        for (int32_t k = 0; k < set->n; k++)
            if (set->cases[k].suite && strcmp(set->cases[k].suite, suite) == 0) n++;
        int64_t *pairs = malloc(sizeof(int64_t) * 2 * (size_t)n);
        int64_t *widx = malloc(sizeof(int64_t) * (size_t)n);
        int32_t *slot = malloc(sizeof(int32_t) * (size_t)n);
        if (!pairs || !widx || !slot) {
            free(pairs);
            free(widx);
            free(slot);
            atomic_store(&rc->st->internal, 1);
            return;
        }
        int32_t j = 0;
        for (int32_t k = 0; k < set->n; k++)
            if (set->cases[k].suite && strcmp(set->cases[k].suite, suite) == 0) {
                pairs[2 * j] = set->cases[k].walk_index;
                pairs[2 * j + 1] = k;
                j++;
            }
        qsort(pairs, (size_t)n, sizeof(int64_t) * 2, cmp_i64_pair);
        for (int32_t k = 0; k < n; k++) {
            widx[k] = pairs[2 * k];
            slot[k] = (int32_t)pairs[2 * k + 1];
        }
        walk_ctx w = {.rc = rc, .suite = suite, .walk_index = widx, .slot = slot, .n = n};
        par_sweep_visit v = {.want = walk_want, .build = walk_build, .error = walk_error, .user = &w,
                             .seed = set->seed};
        par_sweep_walk(suite, &v);
        free(pairs);
        free(widx);
        free(slot);
    }
}

static void draw_progress(const shared_state *st, long total, double t0, int final)
{
    long done = atomic_load(&st->done), bad = atomic_load(&st->bad);
    int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %ld/%ld  %ld not passing  %.1fs%s", bar, done, total, bad, now_s() - t0,
            final ? "\n" : "");
    fflush(stderr);
}

/* ---- summary ---------------------------------------------------------------------------------------------- */

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

static int severity(par_verdict v)
{
    switch (v) {
    case PAR_V_CRASH: return 6;
    case PAR_V_TIMEOUT: return 5;
    case PAR_V_FAIL: return 4;
    case PAR_V_FLAKY: return 3;
    case PAR_V_ERROR: return 2;
    default: return 0;
    }
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

static void print_summary(const par_case_set *set, const par_run_config *cfg, const par_result *res,
                          const par_report *rep, double wall)
{
    int32_t nb = cfg->n_backends;
    const char *reset = cfg->color ? "\033[0m" : "";
    printf("\nparity: %d case%s x %d backend%s in %.1f s (seed %llu)\n", (int)set->n, set->n == 1 ? "" : "s",
           (int)nb, nb == 1 ? "" : "s", wall, (unsigned long long)set->seed);
    printf("%-24s %6s %6s %6s %6s %6s %7s %6s   %s\n", "backend", "PASS", "FAIL", "UNSUP", "ERROR", "CRASH",
           "TIMEOUT", "FLAKY", "error/budget p50 p99 max");
    double *ratios = malloc(sizeof(double) * (size_t)(set->n ? set->n : 1));
    for (int32_t b = 0; b < nb; b++) {
        long cnt[PAR_V_COUNT] = {0};
        int64_t nr = 0;
        for (int32_t c = 0; c < set->n; c++) {
            const par_result *r = &res[(size_t)c * (size_t)nb + (size_t)b];
            if (!r->done) continue;
            cnt[r->verdict]++;
            if (ratios && (r->verdict == PAR_V_PASS || r->verdict == PAR_V_FAIL) && r->m.n > 0)
                ratios[nr++] = r->m.max_ratio;
        }
        if (ratios) qsort(ratios, (size_t)nr, sizeof *ratios, cmp_double);
        printf("%-24s %6ld %6ld %6ld %6ld %6ld %7ld %6ld   ", cfg->backends[b].label, cnt[PAR_V_PASS],
               cnt[PAR_V_FAIL], cnt[PAR_V_UNSUPPORTED], cnt[PAR_V_ERROR], cnt[PAR_V_CRASH], cnt[PAR_V_TIMEOUT],
               cnt[PAR_V_FLAKY]);
        if (nr && ratios)
            printf("%.2g %.2g %.2g\n", quantile(ratios, nr, 0.5), quantile(ratios, nr, 0.99), ratios[nr - 1]);
        else
            printf("-\n");
    }
    free(ratios);

    /* failures, worst first, each ending with its repro command */
    int64_t nf = 0;
    fail_ref *fails = malloc(sizeof *fails * (size_t)(set->n * nb + 1));
    for (int32_t c = 0; c < set->n && fails; c++)
        for (int32_t b = 0; b < nb; b++) {
            const par_result *r = &res[(size_t)c * (size_t)nb + (size_t)b];
            if (r->done && severity(r->verdict) > 0)
                fails[nf++] = (fail_ref){c, b, severity(r->verdict), r->m.max_ratio};
        }
    if (nf && fails) {
        qsort(fails, (size_t)nf, sizeof *fails, cmp_fail);
        int64_t shown = nf < cfg->max_failures_shown ? nf : cfg->max_failures_shown;
        printf("\n%lld not passing%s:\n", (long long)nf, shown < nf ? " (worst first)" : "");
        for (int64_t i = 0; i < shown; i++) {
            const par_result *r = &res[(size_t)fails[i].c * (size_t)nb + (size_t)fails[i].b];
            char repro[1024];
            par_report_repro(rep, fails[i].c, fails[i].b, repro, sizeof repro);
            printf("%s%-7s%s %s %s: %s -- repro: %s\n", vcolor(r->verdict, cfg->color), par_verdict_name(r->verdict),
                   reset, cfg->backends[fails[i].b].label, set->cases[fails[i].c].id, r->reason, repro);
        }
        if (shown < nf) printf("... and %lld more in the report\n", (long long)(nf - shown));
    }
    free(fails);
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(buf, 0777);
        *p = '/';
    }
    return (mkdir(buf, 0777) == 0 || errno == EEXIST) ? 0 : -1;
}

int par_run_cases(const par_case_set *set, const par_run_config *cfg)
{
    int32_t nb = cfg->n_backends;
    size_t n_rec = (size_t)set->n * (size_t)nb;
    size_t bytes = sizeof(shared_state) + sizeof(par_result) * (n_rec ? n_rec : 1);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        fprintf(stderr, "parity: cannot map %zu bytes for results\n", bytes);
        return 3;
    }
    shared_state *st = mem;
    par_result *res = (par_result *)((char *)mem + sizeof(shared_state));
    double t0 = now_s();
    int32_t jobs = cfg->jobs < 1 ? 1 : cfg->jobs;
    if (jobs > set->n) jobs = set->n > 0 ? set->n : 1;
    int tty = cfg->progress && isatty(STDERR_FILENO);
    int internal = 0;

    fflush(stdout);
    fflush(stderr);
    if (!cfg->exec.isolate) {
        run_ctx rc = {.set = set, .cfg = cfg, .results = res, .st = st, .worker = 0, .n_workers = 1};
        worker_main(&rc);
    } else {
        pid_t *pids = calloc((size_t)jobs, sizeof *pids);
        for (int32_t w = 0; w < jobs && pids; w++) {
            pid_t pid = fork();
            if (pid == 0) {
                run_ctx rc = {.set = set, .cfg = cfg, .results = res, .st = st, .worker = w, .n_workers = jobs};
                worker_main(&rc);
                fflush(stdout);
                _exit(0);
            }
            if (pid < 0) {
                fprintf(stderr, "parity: fork failed for worker %d\n", (int)w);
                internal = 1;
                break;
            }
            pids[w] = pid;
        }
        int alive = 0;
        for (int32_t w = 0; w < jobs && pids; w++) alive += pids[w] > 0;
        while (alive > 0) {
            int status;
            pid_t p = tty ? waitpid(-1, &status, WNOHANG) : waitpid(-1, &status, 0);
            if (p == 0) {
                draw_progress(st, (long)n_rec, t0, 0);
                struct timespec ts = {0, 100 * 1000 * 1000};
                nanosleep(&ts, NULL);
                continue;
            }
            if (p < 0) {
                if (errno == EINTR) continue;
                break;
            }
            for (int32_t w = 0; w < jobs; w++)
                if (pids[w] == p) {
                    alive--;
                    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        fprintf(stderr, "parity: internal error: worker %d died (%s %d)\n", (int)w,
                                WIFSIGNALED(status) ? "signal" : "status",
                                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                        internal = 1;
                    }
                }
        }
        free(pids);
    }
    if (tty) draw_progress(st, (long)n_rec, t0, 1);
    double wall = now_s() - t0;

    /* records a dead worker left unfinished */
    for (size_t i = 0; i < n_rec; i++)
        if (!res[i].done) {
            res[i].done = 1;
            res[i].verdict = PAR_V_ERROR;
            snprintf(res[i].reason, sizeof res[i].reason, "harness worker died before this case ran");
            internal = 1;
        }
    if (atomic_load(&st->internal)) internal = 1;

    par_report_case *rcases = calloc((size_t)(set->n ? set->n : 1), sizeof *rcases);
    int rc_code = 0;
    for (size_t i = 0; i < n_rec; i++)
        if (severity(res[i].verdict) > 0) rc_code = 1;
    if (internal) rc_code = 3;
    if (!rcases) {
        munmap(mem, bytes);
        return 3;
    }
    for (int32_t c = 0; c < set->n; c++) {
        snprintf(rcases[c].id, sizeof rcases[c].id, "%s", set->cases[c].id);
        snprintf(rcases[c].origin, sizeof rcases[c].origin, "%s", set->cases[c].origin);
        snprintf(rcases[c].ops, sizeof rcases[c].ops, "%s", set->cases[c].ops);
    }
    par_report rep = {.command_line = cfg->command_line,
                      .seed = set->seed,
                      .repeat = cfg->exec.repeat,
                      .warmup = cfg->exec.warmup,
                      .jobs = jobs,
                      .timeout_s = cfg->exec.timeout_s,
                      .wall_s = wall,
                      .parity_exe = cfg->exe,
                      .n_backends = nb,
                      .backends = cfg->backends,
                      .n_cases = set->n,
                      .cases = rcases,
                      .results = res};
    print_summary(set, cfg, res, &rep, wall);
    if (cfg->out_dir) {
        char path[4096];
        par_msg msg = {{0}};
        snprintf(path, sizeof path, "%s/report.json", cfg->out_dir);
        if (mkdir_p(cfg->out_dir) != 0 || par_report_write_json(&rep, path, &msg) != PAR_OK) {
            fprintf(stderr, "parity: cannot write the report %s: %s\n", path, msg.text[0] ? msg.text : strerror(errno));
            rc_code = 3;
        } else {
            printf("report: %s\n", path);
        }
    }
    free(rcases);
    munmap(mem, bytes);
    return rc_code;
}
