/*
 * runner.c - schedules the selected cases on worker processes and collects their records. The workers take the
 * cases as they become free: each claims a case in a claim table the parent maps shared before forking them (one
 * compare-and-swap per case and round), the loaded cases first, most expensive first (par_case_cost: the longest
 * jobs start first and the short ones fill in behind them), then the suite cases in walk order. Each worker judges
 * the cases it claimed (runner/judge.c: every backend runs isolated in a child of the worker) and sends each
 * finished record to the parent over its own pipe. The parent keeps the records in its own memory (no process it
 * forked can write them), checks every record it reads (par_result_check; the case and backend indices against the
 * range, and the claim table: the case must be the worker's) before storing it, draws the progress bar, and hands
 * the records to the report writer and the summary (reports/), which cli/cli_run.c calls.
 *
 * Workers die with the parent (PR_SET_PDEATHSIG, then a getppid check), and their backend children with them. On
 * SIGINT or SIGTERM the parent kills its workers, keeps what finished and marks the run interrupted. A worker that
 * dies (a harness bug) costs its unfinished records an ERROR each and the run exit code 3, nothing more; so does one
 * the parent kills because it was stopped for 2 s or sent nothing past its deadline (worker_silence_s): every wait
 * of the parent on its workers has a deadline.
 *
 * This file must not judge, print the summary, or write the report.
 */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases/sweep.h"
#include "case_mem.h"
#include "judge.h"
#include "refcache.h"
#include "core/clock.h"

#define RECORD_MAGIC 0x70617231u /* "par1" */

/* One record on a worker's pipe. */
typedef struct wire_rec {
    uint32_t magic;
    int32_t c, b;
    int32_t round;            /* 0 .. rounds - 1 */
    par_result r;
} wire_rec;

/* Who runs what: claim[round * n + case] is 0 until worker w claims that case for that round (then w + 1); shared
 * between the parent and its workers (MAP_SHARED), written only by compare-and-swap. order: the loaded cases, most
 * expensive first. */
typedef struct sched {
    int32_t *claim;
    size_t claim_bytes;
    int32_t *order;
    int32_t n_order;
} sched;

typedef struct run_ctx {
    const par_case_set *set;
    const sched *sc;
    const par_run_config *cfg;
    int32_t worker, n_workers;
    int fd;                   /* the pipe to the parent; -1: in process (no-isolate), records go to results */
    par_result *results;      /* in process only */
    int internal;
    int32_t round;            /* the round being run */
} run_ctx;

static volatile sig_atomic_t got_signal;

static int in_process; /* --no-isolate: the backends run in this process */

/* With --no-isolate a backend call that never returns (a constructor that hangs, a run that loops) would keep an
 * interrupted run from ever reaching its report: 2 s after the signal the process ends without one. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "parity: interrupted, and a backend call running in this process (--no-isolate) did not "
                            "return within 2 s: exiting without a report\n";
    ssize_t w = write(STDERR_FILENO, m, sizeof m - 1);
    (void)w;
    _exit(got_signal == SIGINT ? 130 : 143);
}

static void on_signal(int sig)
{
    got_signal = sig;
    if (in_process) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sigaction(SIGALRM, &sa, NULL);
        alarm(2);
    }
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *q = p;
    while (n > 0) {
        ssize_t w = write(fd, q, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        q += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Round `round` (>= 1) of a record into the record of the earlier rounds: its timed runs appended (up to
 * PAR_TIMING_SAMPLES; the quantiles are then those of the kept runs; the device's times likewise), and its verdict, reason, metrics and output
 * when it is worse than the worst so far (the reason then says which round). prepare_ms stays the first round's. */
static void add_round(par_result *into, const par_result *more, int32_t round, int32_t rounds)
{
    par_timing t = into->t;
    if (par_verdict_severity(more->verdict) > par_verdict_severity(into->verdict)) {
        *into = *more;
        char why[PAR_REASON_LEN];
        snprintf(why, sizeof why, "round %d of %d: %s", (int)round + 1, (int)rounds, more->reason);
        memcpy(into->reason, why, sizeof why);
    }
    int32_t n = t.n_samples;
    for (int32_t i = 0; i < more->t.n_samples && n < PAR_TIMING_SAMPLES; i++) t.samples_ms[n++] = more->t.samples_ms[i];
    t.n_samples = n;
    t.runs += more->t.runs;
    double s[PAR_TIMING_SAMPLES];
    memcpy(s, t.samples_ms, (size_t)n * sizeof *s);
    par_timing_quantiles(&t, s, n);
    /* the device's times (PAR_PROC_DEVICE_TIME) the same way */
    int32_t nd = t.device_n_samples;
    for (int32_t i = 0; i < more->t.device_n_samples && nd < PAR_TIMING_SAMPLES; i++)
        t.device_samples_ms[nd++] = more->t.device_samples_ms[i];
    t.device_n_samples = nd;
    t.device_n += more->t.device_n;
    memcpy(s, t.device_samples_ms, (size_t)nd * sizeof *s);
    par_timing_device_quantiles(&t, s, nd);
    into->t = t;
}

static void emit(void *user, int32_t ci, int32_t b, const par_result *r)
{
    run_ctx *rc = user;
    if (rc->fd < 0) {
        par_result *into = &rc->results[(size_t)ci * (size_t)rc->cfg->n_backends + (size_t)b];
        if (rc->round == 0) *into = *r;
        else add_round(into, r, rc->round, rc->cfg->rounds);
        return;
    }
    static wire_rec w; /* one per worker process */
    w.magic = RECORD_MAGIC;
    w.c = ci;
    w.b = b;
    w.round = rc->round;
    w.r = *r;
    if (write_all(rc->fd, &w, sizeof w) != 0) _exit(3); /* the parent is gone */
}

/* Suite cases are built while walking the suite once per worker. */
typedef struct walk_ctx {
    run_ctx *rc;
    const int64_t *walk_index; /* sorted walk indices of the selected cases of this suite */
    const int32_t *slot;       /* their positions in the case set */
    int32_t n;
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

/* Claim case i for this worker and round: 1 when it is now this worker's to run. */
static int claim(run_ctx *rc, int32_t i)
{
    int32_t *slot = &rc->sc->claim[(size_t)rc->round * (size_t)rc->set->n + (size_t)i], free_ = 0;
    return __atomic_compare_exchange_n(slot, &free_, rc->worker + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static int claimed_by(const sched *sc, const par_case_set *set, int32_t round, int32_t i)
{
    return __atomic_load_n(&sc->claim[(size_t)round * (size_t)set->n + (size_t)i], __ATOMIC_ACQUIRE) - 1;
}

static int walk_want(void *user, int64_t index, const char *id, const char *op)
{
    walk_ctx *w = user;
    int32_t s = find_slot(w, index);
    return s >= 0 && claim(w->rc, s);
}

static void walk_build(void *user, int64_t index, par_case *c)
{
    walk_ctx *w = user;
    int32_t s = find_slot(w, index);
    if (s >= 0 && !got_signal) w->rc->internal |= par_judge_case(w->rc->cfg, w->rc->worker, s, c, emit, w->rc);
    par_case_destroy(c);
}

static void walk_error(void *user, const char *id, const par_msg *msg)
{
    walk_ctx *w = user;
    run_ctx *rc = w->rc;
    for (int32_t i = 0; i < rc->set->n; i++)
        if (strcmp(rc->set->cases[i].id, id) == 0 &&
            (claimed_by(rc->sc, rc->set, rc->round, i) == rc->worker || claim(rc, i)))
            par_judge_unbuilt(rc->cfg, i, msg->text, emit, rc);
    rc->internal = 1;
}

static int cmp_i64_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static void worker_round(run_ctx *rc);

static void worker_main(run_ctx *rc)
{
    int32_t rounds = rc->cfg->rounds > 1 ? rc->cfg->rounds : 1;
    for (rc->round = 0; rc->round < rounds && !got_signal; rc->round++) worker_round(rc);
}

static void worker_round(run_ctx *rc)
{
    const par_case_set *set = rc->set;
    for (int32_t k = 0; k < rc->sc->n_order && !got_signal; k++) {
        int32_t i = rc->sc->order[k];
        if (claim(rc, i)) rc->internal |= par_judge_case(rc->cfg, rc->worker, i, set->cases[i].loaded, emit, rc);
    }
    /* one walk per distinct suite */
    const char *done_suites[8];
    int n_done = 0;
    for (int32_t i = 0; i < set->n && !got_signal; i++) {
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
            rc->internal = 1;
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
        walk_ctx w = {.rc = rc, .walk_index = widx, .slot = slot, .n = n};
        par_sweep_visit v = {.want = walk_want, .build = walk_build, .error = walk_error, .user = &w,
                             .seed = set->seed};
        par_sweep_walk(suite, &v);
        free(pairs);
        free(widx);
        free(slot);
    }
}

static void draw_progress(long done, long bad, long total, double t0, int final)
{
    int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %ld/%ld  %ld not passing  %.1fs%s", bar, done, total, bad, par_now_s() - t0,
            final ? "\n" : "");
    fflush(stderr);
}

/* Off a terminal (a CI job, `make run | tee`), a line every interval instead of the bar, so a long run is seen to
 * move: records done, the rate and the time left at that rate. The interval is 10 s, or PARITY_PROGRESS_S. */
static double progress_interval_s(void)
{
    const char *e = getenv("PARITY_PROGRESS_S");
    char *end;
    double v = e && *e ? strtod(e, &end) : 10;
    return e && *e && *end == 0 && v > 0 && v <= 3600 ? v : 10;
}

static void progress_line(long done, long bad, long total, double t0)
{
    double el = par_now_s() - t0, rate = el > 0 ? (double)done / el : 0;
    fprintf(stderr, "parity: %ld/%ld records (%.0f%%), %ld not passing, %.1f records/s, %.0f s elapsed", done, total,
            total ? 100.0 * (double)done / (double)total : 100.0, bad, rate, el);
    if (rate > 0 && done < total) fprintf(stderr, ", about %.0f s left", (double)(total - done) / rate);
    fprintf(stderr, "\n");
    fflush(stderr);
}

/* ---- the parent's side: reading and checking records ---------------------------------------------------------- */

typedef struct wstate {
    pid_t pid;
    int fd;
    size_t have;
    wire_rec *buf;
    double last;          /* when it last sent something (or started) */
    double stopped_since; /* when it was first seen stopped (0: running) */
    char why[160];        /* why the parent killed it ("" when it did not) */
} wstate;

typedef struct collect {
    const par_case_set *set;
    const sched *sc;
    int32_t nb, jobs, rounds;
    par_result *res;
    long done, bad;
    int internal;
} collect;

/* Check and store one record from worker w. */
static void store(collect *cl, int32_t w, wire_rec *x)
{
    char why[128] = "";
    int chk = par_result_check(&x->r, why, sizeof why);
    if (x->magic != RECORD_MAGIC || x->c < 0 || x->c >= cl->set->n || x->b < 0 || x->b >= cl->nb ||
        chk < 0 || x->r.done != 1 || x->round < 0 || x->round >= cl->rounds ||
        claimed_by(cl->sc, cl->set, x->round, x->c) != w) {
        fprintf(stderr, "parity: internal error: worker %d sent an invalid record (%s); discarded\n", (int)w,
                chk < 0 ? why : "magic, case, backend or round out of range, or not its case");
        cl->internal = 1;
        return;
    }
    par_result *r = &cl->res[(size_t)x->c * (size_t)cl->nb + (size_t)x->b];
    if (x->round > 0) { /* a later round of a record the worker sent before: its rounds come in order */
        int was_bad = r->done && r->verdict != PAR_V_PASS && r->verdict != PAR_V_UNSUPPORTED;
        if (!r->done) {
            fprintf(stderr, "parity: internal error: worker %d sent round %d of record (%d, %d) before its first; "
                            "discarded\n", (int)w, (int)x->round + 1, (int)x->c, (int)x->b);
            cl->internal = 1;
            return;
        }
        add_round(r, &x->r, x->round, cl->rounds);
        cl->done++;
        if (!was_bad && r->verdict != PAR_V_PASS && r->verdict != PAR_V_UNSUPPORTED) cl->bad++;
        return;
    }
    if (r->done) {
        fprintf(stderr, "parity: internal error: worker %d sent record (%d, %d) twice; kept the first\n", (int)w,
                (int)x->c, (int)x->b);
        cl->internal = 1;
        return;
    }
    *r = x->r;
    cl->done++;
    if (r->verdict != PAR_V_PASS && r->verdict != PAR_V_UNSUPPORTED) cl->bad++;
}

/* Read what worker w has sent; returns 0 at its end of file. */
static int drain(collect *cl, wstate *ws, int32_t w)
{
    for (;;) {
        ssize_t n = read(ws->fd, (char *)ws->buf + ws->have, sizeof *ws->buf - ws->have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
        if (n <= 0) return 0;
        ws->have += (size_t)n;
        if (ws->have == sizeof *ws->buf) {
            store(cl, w, ws->buf);
            ws->have = 0;
        }
    }
}

/* How long a worker may send nothing: one case's jobs on every backend, each up to its timeout and the fork
 * server's grace, plus an allowance for the case's reference and oracle (PARITY_WORKER_SILENCE_S sets it; without a
 * job timeout, none). A worker stopped (SIGSTOP, state T) for WORKER_STOP_S while the parent runs is killed too. */
#define WORKER_STOP_S 2.0
#define WORKER_REF_ALLOWANCE_S 300.0
static double worker_silence_s(const par_run_config *cfg)
{
    const char *env = getenv("PARITY_WORKER_SILENCE_S");
    char *end = NULL;
    double v = env ? strtod(env, &end) : 0;
    if (env && end != env && !*end && v > 0 && v < 1e7) return v;
    if (cfg->exec.timeout_s <= 0) return 0;
    int32_t rounds = cfg->rounds > 1 ? cfg->rounds : 1;
    return (double)cfg->n_backends * rounds * (cfg->exec.timeout_s + 3.0) + WORKER_REF_ALLOWANCE_S;
}

/* 1 when pid is stopped by a signal (state T in /proc/PID/stat; a debugger's tracing stop, t, is not). */
static int is_stopped(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *r = strrchr(buf, ')');
    return r && r[1] == ' ' && r[2] == 'T';
}

/* Kill the workers that are stopped or silent past their deadline; their end of file follows. */
static void check_workers(wstate *ws, int32_t jobs, double silence_s)
{
    double now = par_now_s();
    for (int32_t w = 0; w < jobs; w++) {
        if (ws[w].pid <= 0 || ws[w].fd < 0 || ws[w].why[0]) continue;
        if (!is_stopped(ws[w].pid)) ws[w].stopped_since = 0;
        else if (!ws[w].stopped_since) ws[w].stopped_since = now;
        if (ws[w].stopped_since && now - ws[w].stopped_since >= WORKER_STOP_S)
            snprintf(ws[w].why, sizeof ws[w].why, "harness worker %d was stopped (SIGSTOP) for %.0f s; killed",
                     (int)w, WORKER_STOP_S);
        else if (silence_s > 0 && now - ws[w].last >= silence_s)
            snprintf(ws[w].why, sizeof ws[w].why, "harness worker %d sent nothing for %.0f s; killed", (int)w,
                     silence_s);
        else
            continue;
        fprintf(stderr, "parity: %s\n", ws[w].why);
        kill(ws[w].pid, SIGKILL);
    }
}

static void kill_workers(wstate *ws, int32_t jobs)
{
    for (int32_t w = 0; w < jobs; w++)
        if (ws[w].pid > 0) kill(ws[w].pid, SIGKILL);
}

/* One worker process per job, each writing its records to a pipe of its own (ws[w].fd, non-blocking); a worker
 * that cannot be started is an internal error and the ones before it run on. */
static void start_workers(wstate *ws, wire_rec *bufs, int32_t jobs, const par_case_set *set, const sched *sc,
                          const par_run_config *cfg, collect *cl)
{
    const int32_t nb = cfg->n_backends;
    pid_t parent = getpid();
    for (int32_t w = 0; w < jobs; w++) {
        int p[2];
        ws[w].fd = -1;
        ws[w].buf = &bufs[w];
        if (pipe2(p, O_CLOEXEC) != 0) {
            fprintf(stderr, "parity: cannot create a pipe for worker %d\n", (int)w);
            cl->internal = 1;
            break;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            for (int32_t k = 0; k < w; k++) close(ws[k].fd);
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* workers die with the parent */
            if (getppid() != parent) _exit(3);
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            /* a worker talks only to its own fork servers */
            for (int32_t k = 0; cfg->servers && k < cfg->max_workers * nb; k++)
                if (k / nb != w) par_exec_server_forget(cfg->servers[k]);
            run_ctx rc = {.set = set, .sc = sc, .cfg = cfg, .worker = w, .n_workers = jobs, .fd = p[1]};
            worker_main(&rc);
            fflush(stdout);
            _exit(rc.internal ? 4 : 0);
        }
        close(p[1]);
        if (pid < 0) {
            fprintf(stderr, "parity: fork failed for worker %d\n", (int)w);
            close(p[0]);
            cl->internal = 1;
            break;
        }
        ws[w].pid = pid;
        ws[w].fd = p[0];
        ws[w].last = par_now_s();
        fcntl(p[0], F_SETFL, O_NONBLOCK);
    }
}

/* The worker that claimed case c in some round (the latest), or -1. */
static int32_t claimed_by_any(const collect *cl, int32_t c)
{
    int32_t by = -1;
    for (int32_t r = 0; r < cl->rounds; r++) {
        int32_t w = claimed_by(cl->sc, cl->set, r, c);
        if (w >= 0) by = w;
    }
    return by;
}

/* Waits for every worker; the records of a worker killed here (ws[w].why) or dead say so. */
static void reap_workers(wstate *ws, int32_t jobs, int32_t nb, par_run_result *out, size_t n_rec, collect *cl)
{
    for (int32_t w = 0; w < jobs; w++) {
        if (ws[w].pid <= 0) continue;
        int status;
        while (waitpid(ws[w].pid, &status, 0) < 0 && errno == EINTR) {}
        if (got_signal) continue;
        for (size_t i = 0; ws[w].why[0] && i < n_rec; i++) /* the cases it claimed, in any round */
            if (!out->results[i].done && claimed_by_any(cl, (int32_t)(i / (size_t)nb)) == w) {
                out->results[i].done = 1;
                out->results[i].verdict = PAR_V_ERROR;
                snprintf(out->results[i].reason, sizeof out->results[i].reason, "%s", ws[w].why);
                cl->internal = 1;
            }
        if (ws[w].why[0]) { /* killed here: its records say why */
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
            cl->internal = 1; /* a reference or harness failure, already in its records */
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "parity: internal error: worker %d died (%s %d)\n", (int)w,
                    WIFSIGNALED(status) ? "signal" : "status",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            cl->internal = 1;
        }
        if (ws[w].fd >= 0) close(ws[w].fd);
    }
    /* the cases no worker claimed: the workers that would have taken them were killed (the first one's reason) */
    int32_t k = 0;
    while (k < jobs && !ws[k].why[0]) k++;
    for (size_t i = 0; !got_signal && k < jobs && i < n_rec; i++)
        if (!out->results[i].done && claimed_by_any(cl, (int32_t)(i / (size_t)nb)) < 0) {
            out->results[i].done = 1;
            out->results[i].verdict = PAR_V_ERROR;
            snprintf(out->results[i].reason, sizeof out->results[i].reason, "not run: %s", ws[k].why);
            cl->internal = 1;
        }
}

/* The loaded cases' order, most expensive first (ties in selection order). */
static const double *cost_key;
static int cmp_cost_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (cost_key[x] != cost_key[y]) return cost_key[x] < cost_key[y] ? 1 : -1;
    return (x > y) - (x < y);
}

static int sched_init(sched *sc, const par_case_set *set, int32_t rounds)
{
    memset(sc, 0, sizeof *sc);
    sc->claim_bytes = sizeof(int32_t) * (size_t)(set->n > 0 ? set->n : 1) * (size_t)rounds;
    void *m = mmap(NULL, sc->claim_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1;
    sc->claim = m; /* zero: nothing claimed */
    sc->order = malloc(sizeof(int32_t) * (size_t)(set->n > 0 ? set->n : 1));
    double *cost = malloc(sizeof(double) * (size_t)(set->n > 0 ? set->n : 1));
    if (!sc->order || !cost) {
        free(cost);
        free(sc->order);
        munmap(sc->claim, sc->claim_bytes);
        return -1;
    }
    for (int32_t i = 0; i < set->n; i++)
        if (set->cases[i].loaded) {
            cost[i] = par_case_cost(par_graph_desc_of(set->cases[i].loaded->graph));
            sc->order[sc->n_order++] = i;
        }
    cost_key = cost;
    qsort(sc->order, (size_t)sc->n_order, sizeof *sc->order, cmp_cost_desc);
    cost_key = NULL;
    free(cost);
    return 0;
}

static void sched_free(sched *sc)
{
    munmap(sc->claim, sc->claim_bytes);
    free(sc->order);
}

int par_run_cases(const par_case_set *set, const par_run_config *cfg, par_run_result *out)
{
    int32_t nb = cfg->n_backends;
    size_t n_rec = (size_t)set->n * (size_t)nb;
    memset(out, 0, sizeof *out);
    out->results = calloc(n_rec ? n_rec : 1, sizeof *out->results);
    if (!out->results) {
        fprintf(stderr, "parity: cannot allocate %zu records\n", n_rec);
        return 3;
    }
    double t0 = par_now_s();
    int32_t jobs = cfg->jobs < 1 ? 1 : cfg->jobs;
    if (jobs > set->n) jobs = set->n > 0 ? set->n : 1;
    if (cfg->servers && jobs > cfg->max_workers) jobs = cfg->max_workers;
    out->jobs = jobs;
    int tty = cfg->progress && isatty(STDERR_FILENO);
    const int lines = cfg->progress && !tty;
    const double line_every = lines ? progress_interval_s() : 0;
    double next_line = lines ? par_now_s() + line_every : 0;
    const int32_t rounds = cfg->rounds > 1 ? cfg->rounds : 1;
    sched sc;
    if (sched_init(&sc, set, rounds) != 0) {
        fprintf(stderr, "parity: cannot allocate the claim table of %d cases\n", (int)set->n);
        free(out->results);
        out->results = NULL;
        return 3;
    }
    collect cl = {.set = set, .sc = &sc, .nb = nb, .jobs = jobs, .rounds = rounds, .res = out->results};

    got_signal = 0;
    in_process = !cfg->exec.isolate;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    fflush(stdout);
    fflush(stderr);
    if (!cfg->exec.isolate) {
        run_ctx rc = {.set = set, .sc = &sc, .cfg = cfg, .worker = 0, .n_workers = 1, .fd = -1,
                      .results = out->results};
        worker_main(&rc);
        alarm(0); /* every backend call returned: the report can be written */
        cl.internal |= rc.internal;
        for (size_t i = 0; i < n_rec; i++)
            if (out->results[i].done) cl.done++;
    } else {
        wstate *ws = calloc((size_t)jobs, sizeof *ws);
        wire_rec *bufs = calloc((size_t)jobs, sizeof *bufs);
        if (!ws || !bufs) {
            free(ws);
            free(bufs);
            free(out->results);
            out->results = NULL;
            sched_free(&sc);
            return 3;
        }
        (void)par_refcache_dir(); /* its one warning, if the cache folder is unusable, printed once, before the fork */
        start_workers(ws, bufs, jobs, set, &sc, cfg, &cl);
        /* Only the workers talk to the servers: a server whose worker dies then sees its socket hang up and ends
         * the job's child. */
        for (int32_t k = 0; cfg->servers && !cfg->keep_servers && k < cfg->max_workers * nb; k++)
            par_exec_server_forget(cfg->servers[k]);
        struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
        const double silence_s = worker_silence_s(cfg);
        double next_check = par_now_s() + 1.0;
        for (;;) {
            int open_fds = 0;
            for (int32_t w = 0; w < jobs; w++) {
                pf[w].fd = ws[w].fd;
                pf[w].events = POLLIN;
                pf[w].revents = 0;
                open_fds += ws[w].fd >= 0;
            }
            if (!open_fds || got_signal) break;
            int wait_ms = tty ? 100 : lines ? (int)(line_every * 1000 / 4 + 1) : 1000;
            int r = poll(pf, (nfds_t)jobs, wait_ms < 1000 ? wait_ms : 1000); /* a deadline on every worker */
            if (r < 0 && errno != EINTR) break;
            for (int32_t w = 0; r > 0 && w < jobs; w++) {
                if (ws[w].fd < 0 || !(pf[w].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ws[w].last = par_now_s();
                if (!drain(&cl, &ws[w], w)) {
                    if (ws[w].have) {
                        fprintf(stderr, "parity: internal error: worker %d ended within a record\n", (int)w);
                        cl.internal = 1;
                    }
                    close(ws[w].fd);
                    ws[w].fd = -1;
                }
            }
            if (par_now_s() >= next_check) {
                check_workers(ws, jobs, silence_s);
                next_check = par_now_s() + 1.0;
            }
            if (tty) draw_progress(cl.done, cl.bad, (long)(n_rec * (size_t)rounds), t0, 0);
            if (lines && par_now_s() >= next_line) {
                progress_line(cl.done, cl.bad, (long)(n_rec * (size_t)rounds), t0);
                next_line = par_now_s() + line_every;
            }
        }
        if (got_signal) kill_workers(ws, jobs);
        reap_workers(ws, jobs, nb, out, n_rec, &cl);
        free(pf);
        free(ws);
        free(bufs);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    /* the caller's own handler learns of the interruption (a campaign stops between batches) */
    if (got_signal) {
        const struct sigaction *old = got_signal == SIGINT ? &old_int : &old_term;
        if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
            old->sa_handler(got_signal);
    }
    if (tty) draw_progress(cl.done, cl.bad, (long)(n_rec * (size_t)rounds), t0, 1);
    out->wall_s = par_now_s() - t0;
    out->interrupted_by = got_signal;

    /* records a dead worker left unfinished (an interrupted run leaves them out instead) */
    if (!got_signal)
        for (size_t i = 0; i < n_rec; i++)
            if (!out->results[i].done) {
                out->results[i].done = 1;
                out->results[i].verdict = PAR_V_ERROR;
                snprintf(out->results[i].reason, sizeof out->results[i].reason,
                         "harness worker died before this case ran");
                cl.internal = 1;
            }
    sched_free(&sc);
    out->internal = cl.internal;
    int rc_code = 0;
    for (size_t i = 0; i < n_rec; i++) {
        par_verdict v = out->results[i].verdict;
        if (out->results[i].done && v != PAR_V_PASS && v != PAR_V_UNSUPPORTED) rc_code = 1;
    }
    if (cl.internal) rc_code = 3;
    if (got_signal) rc_code = 128 + got_signal;
    return rc_code;
}

int par_run_servers_start(par_run_config *cfg, par_msg *msg)
{
    int32_t jobs = cfg->jobs < 1 ? 1 : cfg->jobs, nb = cfg->n_backends;
    cfg->servers = NULL;
    cfg->max_workers = 0;
    if (!cfg->exec.isolate || nb <= 0) return 0;
    /* --rounds R promises R processes per record (its latency sampled across them): no child kept across jobs */
    if (cfg->rounds > 1) setenv("PARITY_KEEP_CHILD", "0", 1);
    par_exec_server **sv = calloc((size_t)jobs * (size_t)nb, sizeof *sv);
    if (!sv) {
        par_msgf(msg, PAR_ERROR, "fork servers: out of memory");
        return -1;
    }
    for (int32_t k = 0; k < jobs * nb; k++) {
        sv[k] = par_exec_server_start(&cfg->backends[k % nb], msg);
        if (!sv[k]) {
            for (int32_t i = 0; i < k; i++) par_exec_server_stop(sv[i]);
            free(sv);
            return -1;
        }
    }
    if (par_exec_servers_ready(sv, jobs * nb, cfg->exec.timeout_s, msg) != PAR_OK) {
        for (int32_t i = 0; i < jobs * nb; i++) par_exec_server_stop(sv[i]);
        free(sv);
        return -2;
    }
    cfg->servers = sv;
    cfg->max_workers = jobs;
    return 0;
}

void par_run_servers_stop(par_run_config *cfg)
{
    if (!cfg->servers) return;
    for (int32_t k = 0; k < cfg->max_workers * cfg->n_backends; k++) par_exec_server_stop(cfg->servers[k]);
    free(cfg->servers);
    cfg->servers = NULL;
}

void par_run_result_free(par_run_result *r)
{
    if (!r) return;
    free(r->results);
    r->results = NULL;
}
