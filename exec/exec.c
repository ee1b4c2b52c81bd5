/*
 * exec.c - executes one graph on one backend instance and checks the backend's conduct: in a child process with a
 * time limit (isolate = 1) or in process (isolate = 0, for debuggers; no protection against crashes or hangs).
 *
 * Memory: before the fork the parent maps one shared anonymous region:
 *
 *     [status header][guard][output 0][pad][guard][guard][output 1][pad][guard] ...
 *
 * Every output buffer starts on a 64-byte boundary and is surrounded by guard bytes (GUARD_BYTES on each side, plus
 * the padding up to the next 64-byte boundary after the buffer), filled with a position-dependent pattern. The child
 * binds the backend's outputs straight to these buffers, so the parent checks the guards after the child is gone:
 * a write anywhere in them is an out-of-bounds write, whatever else happened.
 *
 * Conduct checks in the child:
 *   - unwritten elements: before every run the outputs are poisoned, alternating two byte patterns: 0xFF bytes
 *     (a NaN for f32 and f16, 255 for qu8, -1 for qs8 and i32) on odd runs and 0x7F bytes (3.39e38 for f32, a NaN
 *     for f16, 127 for qu8 and qs8) on even runs. A correct backend writes the same bits on every run, so an element
 *     that differs between run 1 and run r and equals the poison of its run on either side was left unwritten. At
 *     least two runs are always made (an extra untimed one when warmup + repeat is 1) so that this always shows.
 *   - other differences between runs: FLAKY.
 *   - inputs: the backend is bound to private copies of the inputs; a copy that differs from the caller's data
 *     after the runs means the backend wrote into an input.
 * The child records the phase it has reached in the header before each phase, so a crash or a hang names it.
 *
 * The parent waits without polling loops: the child holds the write end of a pipe, which closes when it dies (or
 * receives one byte just before it exits normally); the parent poll()s the read end with the remaining time.
 *
 * This file must not judge output values numerically (the oracle does), retry, sleep, or run atexit handlers in
 * the child.
 */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ALIGN 64
#define GUARD_BYTES 256
#define POISON_ODD 0xFFu  /* runs 1, 3, 5, ... */
#define POISON_EVEN 0x7Fu /* runs 2, 4, 6, ... */
#define DESCRIBE_LEN 512

enum phase {
    PH_START, PH_INIT, PH_KNOBS, PH_SUPPORTS, PH_PREPARE, PH_BIND, PH_RUN, PH_RELEASE, PH_DESTROY, PH_DESCRIBE,
    PH_DONE, PH_COUNT
};
static const char *const phase_names[PH_COUNT] = {"start", "init", "knobs", "supports", "prepare", "bind", "run",
                                                  "release", "destroy", "describe", "done"};

/* The status header at the start of the shared region: written by the child, read by the parent after the child
 * is gone (waitpid orders the accesses). phase and done are volatile so that their stores are not moved across the
 * backend's calls, which may never return. */
typedef struct shared_hdr {
    volatile int32_t phase;
    volatile int32_t done;
    int32_t verdict;
    int32_t usable;
    par_timing t;
    char reason[PAR_REASON_LEN];
    char describe[DESCRIBE_LEN];
} shared_hdr;

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* snprintf into a fixed buffer through va_list (messages are cut at the buffer's end, never overrun it). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void fmt(char *dst, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, len, f, ap);
    va_end(ap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_result(shared_hdr *h, par_verdict v, const char *f, ...)
{
    va_list ap;
    h->verdict = (int32_t)v;
    va_start(ap, f);
    vsnprintf(h->reason, sizeof h->reason, f, ap);
    va_end(ap);
}

/* A backend's message, terminated and never empty. */
static const char *msg_text(par_msg *m)
{
    m->text[PAR_MSG_LEN - 1] = '\0';
    return m->text[0] ? m->text : "(no message)";
}

/* Guard byte at offset o of the region: a hash of the position, so that consecutive bytes differ and a uniform
 * write (zeros, a repeated value) always changes some of them. The values 0x00, 0x7F, 0x80 and 0xFF (the commonest
 * bytes a stray write stores, and the poisons) never appear. */
static uint8_t guard_byte(size_t o)
{
    uint32_t x = (uint32_t)o * 2654435761u;
    uint8_t b = (uint8_t)(x >> 24);
    if (b == 0x00 || b == 0x7F || b == 0x80 || b == 0xFF) b ^= 0x35;
    return b;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Supervision: run a body in a child process (or in process), wait for it with a time limit.
 * ------------------------------------------------------------------------------------------------------------- */

typedef void (*body_fn)(void *arg, shared_hdr *h);

static void child_reset_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE, SIGTERM, SIGINT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    /* Default actions, so that a fault kills the child with its signal even when the harness (or a sanitizer
     * runtime) installed handlers. */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Wait for the pipe to report the child's end (a byte or end of file) until the deadline. Returns 1 when it did,
 * 0 on time-out. deadline < 0: no limit. */
static int wait_pipe(int fd, double deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline >= 0) {
            double rem = deadline - now_s();
            if (rem <= 0) return 0;
            double m = rem * 1000.0 + 1.0; /* round up: never wake before the deadline, then loop once more */
            ms = m > 2e9 ? 2000000000 : (int)m;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            return 1; /* cannot wait on the pipe: fall back to waitpid, which blocks until the child ends */
        }
        if (r == 0) continue; /* re-check the deadline */
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        return 1; /* a byte (normal end) or end of file (the child is gone) */
    }
}

static const char *phase_name(int32_t ph)
{
    return (ph >= 0 && ph < PH_COUNT) ? phase_names[ph] : "an unknown phase";
}

/* Runs body. Returns 1 when the body finished and h holds its result; 0 when it did not, with *v and reason set
 * (CRASH, TIMEOUT, or ERROR when the child could not be started). */
static int supervise(body_fn body, void *arg, shared_hdr *h, double timeout_s, int isolate, par_verdict *v,
                     char *reason, size_t reason_len)
{
    h->phase = PH_START;
    h->done = 0;
    if (!isolate) {
        body(arg, h);
        return 1;
    }

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *v = PAR_V_ERROR;
        fmt(reason, reason_len, "cannot create a pipe for the child: %s", strerror(errno));
        return 0;
    }
    /* Flush before forking so that buffered output is not written twice (the child flushes its own). */
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        *v = PAR_V_ERROR;
        fmt(reason, reason_len, "cannot fork the child: %s", strerror(e));
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        setpgid(0, 0); /* own process group: a time-out kills whatever the backend forked too */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* if the harness dies, the child does not outlive it */
        if (getppid() != parent) _exit(127);
        child_reset_signals();
        body(arg, h);
        fflush(stdout);
        fflush(stderr);
        char c = 1;
        ssize_t wr = write(fds[1], &c, 1);
        (void)wr;
        _exit(0);
    }
    close(fds[1]);
    setpgid(pid, pid); /* both sides set it, so it holds before either proceeds */

    double deadline = timeout_s > 0 ? now_s() + timeout_s : -1.0;
    int ended = wait_pipe(fds[0], deadline);
    close(fds[0]);

    siginfo_t si;
    memset(&si, 0, sizeof si);
    int timed_out = 0;
    if (!ended) {
        /* The pipe can stay open after the child's death when the backend forked a process that inherited it:
         * look at the child itself before declaring a time-out. */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid) timed_out = 1;
    }
    if (timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    } else {
        /* Wait without reaping, then kill what the backend may have left in the group: the zombie keeps the group
         * id from being reused until it is reaped. */
        while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR) {}
        kill(-pid, SIGKILL);
    }
    int status = 0;
    pid_t w;
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    if (w != pid) {
        *v = PAR_V_ERROR;
        fmt(reason, reason_len, "cannot wait for the child: %s", strerror(errno));
        return 0;
    }
    if (timed_out) {
        *v = PAR_V_TIMEOUT;
        fmt(reason, reason_len, "no result after %g s (during %s)", timeout_s, phase_name(h->phase));
        return 0;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *sn = strsignal(sig);
        *v = PAR_V_CRASH;
        fmt(reason, reason_len, "killed by signal %d (%s) during %s", sig, sn ? sn : "unknown signal",
            phase_name(h->phase));
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        *v = PAR_V_CRASH;
        fmt(reason, reason_len, "exited with status %d during %s", WEXITSTATUS(status), phase_name(h->phase));
        return 0;
    }
    if (!h->done) {
        *v = PAR_V_CRASH;
        fmt(reason, reason_len, "exited with status 0 during %s, before reporting a result", phase_name(h->phase));
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Child side: the backend's life cycle.
 * ------------------------------------------------------------------------------------------------------------- */

/* Apply the instance's knobs. Returns 0, or -1 with the result set. */
static int apply_knobs(const par_backend_inst *inst, void *ctx, shared_hdr *h)
{
    if (inst->n_knobs <= 0) return 0;
    par_set_knob_fn set = NULL;
    if (inst->be->get_proc) set = (par_set_knob_fn)inst->be->get_proc(ctx, PAR_PROC_SET_KNOB);
    for (int32_t i = 0; i < inst->n_knobs && i < PAR_MAX_KNOBS; i++) {
        if (!set) {
            set_result(h, PAR_V_ERROR, "knob '%s': backend '%s' has no knobs (no %s)", inst->knob_key[i],
                       inst->be->name ? inst->be->name : "?", PAR_PROC_SET_KNOB);
            return -1;
        }
        par_msg m;
        m.text[0] = '\0';
        par_status st = set(ctx, inst->knob_key[i], inst->knob_val[i], &m);
        if (st != PAR_OK) {
            set_result(h, PAR_V_ERROR, "knob '%s=%s': %s", inst->knob_key[i], inst->knob_val[i], msg_text(&m));
            return -1;
        }
    }
    return 0;
}

typedef struct probe_job {
    const par_backend_inst *inst;
} probe_job;

static void probe_body(void *arg, shared_hdr *h)
{
    const probe_job *j = arg;
    const par_backend *be = j->inst->be;
    void *ctx = NULL;
    par_msg m;
    m.text[0] = '\0';
    h->usable = 0;
    h->describe[0] = '\0';
    h->phase = PH_INIT;
    par_status st = be->init ? be->init(&ctx, &m) : PAR_OK;
    if (st != PAR_OK) {
        set_result(h, st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "%s%s",
                   st == PAR_UNSUPPORTED ? "" : "init failed: ", msg_text(&m));
        h->phase = PH_DONE;
        h->done = 1;
        return;
    }
    h->phase = PH_KNOBS;
    if (apply_knobs(j->inst, ctx, h) == 0) {
        h->phase = PH_DESCRIBE;
        par_describe_fn d = be->get_proc ? (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE) : NULL;
        if (d) {
            d(ctx, h->describe, sizeof h->describe);
            h->describe[sizeof h->describe - 1] = '\0';
        }
        h->usable = 1;
        set_result(h, PAR_V_PASS, "%s", "");
    }
    h->phase = PH_DESTROY;
    if (be->destroy) be->destroy(ctx);
    h->phase = PH_DONE;
    h->done = 1;
}

typedef struct run_job {
    const par_backend_inst *inst;
    const par_graph_desc *g;
    const void *const *inputs;
    const par_exec_opts *o;
    int32_t n_out;
    void **out_buf;         /* in the shared region */
    const size_t *out_size;
} run_job;

static int is_fill(const uint8_t *p, size_t n, uint8_t b)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != b) return 0;
    return 1;
}

static void elem_hex(const uint8_t *p, size_t esz, char *buf, size_t len)
{
    /* little-endian element bits, most significant byte first */
    size_t o = 0;
    o += (size_t)snprintf(buf, len, "0x");
    for (size_t i = esz; i-- > 0 && o + 3 <= len;) o += (size_t)snprintf(buf + o, len - o, "%02x", p[i]);
}

/* Compare run r's output k (cur, poisoned with pcur) with run 1's (first, poisoned with POISON_ODD). Returns 0 when
 * bit-identical, else 1 with the result set. */
static int compare_runs(shared_hdr *h, int32_t k, int32_t run, const uint8_t *first, const uint8_t *cur, size_t size,
                        size_t esz, uint8_t pcur)
{
    if (memcmp(first, cur, size) == 0) return 0;
    int64_t n = (int64_t)(size / esz), first_unw = -1, n_unw = 0, first_diff = -1;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *a = first + (size_t)i * esz, *b = cur + (size_t)i * esz;
        if (memcmp(a, b, esz) == 0) continue;
        if (first_diff < 0) first_diff = i;
        if (is_fill(a, esz, POISON_ODD) || is_fill(b, esz, pcur)) {
            if (first_unw < 0) first_unw = i;
            n_unw++;
        }
    }
    if (first_unw >= 0) {
        set_result(h, PAR_V_FAIL, "output %d element %lld never written (%lld element%s in all)", (int)k,
                   (long long)first_unw, (long long)n_unw, n_unw == 1 ? "" : "s");
    } else {
        char ha[40], hb[40];
        elem_hex(first + (size_t)first_diff * esz, esz, ha, sizeof ha);
        elem_hex(cur + (size_t)first_diff * esz, esz, hb, sizeof hb);
        set_result(h, PAR_V_FLAKY, "run %d differs from run 1 at output %d element %lld (bits %s vs %s)", (int)run,
                   (int)k, (long long)first_diff, hb, ha);
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between closest ranks of a sorted array. */
static double quantile(const double *s, int32_t n, double q)
{
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)pos;
    if (lo >= n - 1) return s[n - 1];
    double f = pos - (double)lo;
    return s[lo] + f * (s[lo + 1] - s[lo]);
}

static void fill_timing(par_timing *t, double *ms, int32_t n)
{
    t->runs = n;
    if (n <= 0) return;
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    t->run_min_ms = ms[0];
    t->run_median_ms = quantile(ms, n, 0.5);
    t->run_p10_ms = quantile(ms, n, 0.1);
    t->run_p90_ms = quantile(ms, n, 0.9);
}

static size_t value_bytes(const par_value *v)
{
    return (size_t)v->numel * par_dtype_size(v->dtype);
}

/* Did the backend write into an input? The bound copies are compared with the caller's data after every run (a
 * write that the next run undoes would escape a check at the end). Returns 0, or 1 with the result set. */
static int check_inputs(const run_job *j, const void *const *in_copy, int32_t run, shared_hdr *h)
{
    const par_graph_desc *g = j->g;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        size_t sz = value_bytes(&g->values[g->inputs[i]]);
        if (memcmp(in_copy[i], j->inputs[i], sz) == 0) continue;
        size_t esz = par_dtype_size(g->values[g->inputs[i]].dtype), b = 0;
        const uint8_t *a = in_copy[i], *c = j->inputs[i];
        while (b < sz && a[b] == c[b]) b++;
        set_result(h, PAR_V_FAIL, "backend wrote into input %d (element %zu first, during run %d)", (int)i, b / esz,
                   (int)run);
        return 1;
    }
    return 0;
}

/* The runs, with the conduct checks. Returns 0 when all went well; else the result is set. A write into an input
 * is checked first: it would explain differences between runs. */
static int do_runs(const run_job *j, void *ctx, void *prep, const void *const *in_copy, shared_hdr *h,
                   uint8_t **first)
{
    const par_backend *be = j->inst->be;
    const par_exec_opts *o = j->o;
    int32_t n_runs = o->warmup + o->repeat;
    if (n_runs < 2) n_runs = 2; /* the second run is what shows unwritten elements */
    double *ms = malloc(sizeof(double) * (size_t)o->repeat);
    if (!ms) {
        set_result(h, PAR_V_ERROR, "out of memory for %d timings", (int)o->repeat);
        return -1;
    }
    int32_t n_timed = 0, rc = 0;
    for (int32_t r = 0; r < n_runs && rc == 0; r++) {
        uint8_t poison = (r % 2 == 0) ? POISON_ODD : POISON_EVEN;
        for (int32_t k = 0; k < j->n_out; k++) memset(j->out_buf[k], poison, j->out_size[k]);
        par_msg m;
        m.text[0] = '\0';
        h->phase = PH_RUN;
        double t0 = now_s();
        par_status st = be->run(ctx, prep, &m);
        double t1 = now_s();
        if (st != PAR_OK) {
            set_result(h, st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "run %d failed: %s", (int)r + 1,
                       msg_text(&m));
            rc = -1;
            break;
        }
        if (r >= o->warmup && n_timed < o->repeat) ms[n_timed++] = (t1 - t0) * 1e3;
        if (check_inputs(j, in_copy, r + 1, h)) {
            rc = -1;
            break;
        }
        for (int32_t k = 0; k < j->n_out; k++) {
            if (r == 0) {
                memcpy(first[k], j->out_buf[k], j->out_size[k]);
                continue;
            }
            size_t esz = par_dtype_size(j->g->values[j->g->outputs[k]].dtype);
            if (compare_runs(h, k, r + 1, first[k], j->out_buf[k], j->out_size[k], esz, poison)) {
                rc = -1;
                break;
            }
        }
    }
    fill_timing(&h->t, ms, n_timed);
    free(ms);
    return rc;
}

static void run_body(void *arg, shared_hdr *h)
{
    const run_job *j = arg;
    const par_backend *be = j->inst->be;
    const par_graph_desc *g = j->g;
    void *ctx = NULL, *prep = NULL;
    int32_t n_in = g->n_inputs;
    void **in_copy = calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *in_copy);
    uint8_t **first = calloc((size_t)j->n_out, sizeof *first);
    par_msg m;
    m.text[0] = '\0';
    memset(&h->t, 0, sizeof h->t);
    set_result(h, PAR_V_PASS, "%s", "");
    if (!in_copy || !first) {
        set_result(h, PAR_V_ERROR, "%s", "out of memory");
        goto out;
    }
    /* Private, 64-byte aligned copies of the inputs with 64 spare bytes, so that backends that read a little past
     * the end of a buffer (XNNPACK's XNN_EXTRA_BYTES) stay inside the allocation. */
    for (int32_t i = 0; i < n_in; i++) {
        size_t sz = value_bytes(&g->values[g->inputs[i]]);
        in_copy[i] = aligned_alloc(ALIGN, align_up(sz, ALIGN) + ALIGN);
        if (!in_copy[i]) {
            set_result(h, PAR_V_ERROR, "out of memory for input %d (%zu bytes)", (int)i, sz);
            goto out;
        }
        memcpy(in_copy[i], j->inputs[i], sz);
    }
    for (int32_t k = 0; k < j->n_out; k++) {
        first[k] = malloc(j->out_size[k]);
        if (!first[k]) {
            set_result(h, PAR_V_ERROR, "out of memory for output %d (%zu bytes)", (int)k, j->out_size[k]);
            goto out;
        }
    }

    h->phase = PH_INIT;
    par_status st = be->init ? be->init(&ctx, &m) : PAR_OK;
    if (st != PAR_OK) {
        ctx = NULL;
        if (st == PAR_UNSUPPORTED) set_result(h, PAR_V_UNSUPPORTED, "%s", msg_text(&m));
        else set_result(h, PAR_V_ERROR, "init failed: %s", msg_text(&m));
        goto out;
    }
    h->phase = PH_KNOBS;
    if (apply_knobs(j->inst, ctx, h) != 0) goto out;

    h->phase = PH_SUPPORTS;
    if (be->supports) {
        for (int32_t i = 0; i < g->n_nodes; i++) {
            m.text[0] = '\0';
            st = be->supports(ctx, g, i, &m);
            if (st != PAR_OK) {
                const par_node *n = &g->nodes[i];
                set_result(h, st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "node '%s' (%s): %s",
                           n->name ? n->name : "?", n->op ? n->op : "?", msg_text(&m));
                goto out;
            }
        }
    }

    h->phase = PH_PREPARE;
    m.text[0] = '\0';
    double t0 = now_s();
    st = be->prepare ? be->prepare(ctx, g, &prep, &m) : PAR_OK;
    h->t.prepare_ms = (now_s() - t0) * 1e3;
    if (st != PAR_OK) {
        prep = NULL;
        set_result(h, st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "prepare failed: %s", msg_text(&m));
        goto out;
    }

    h->phase = PH_BIND;
    m.text[0] = '\0';
    st = be->bind ? be->bind(ctx, prep, (const void *const *)in_copy, (void *const *)j->out_buf, &m) : PAR_OK;
    if (st != PAR_OK) {
        set_result(h, st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "bind failed: %s", msg_text(&m));
        goto out;
    }

    if (!be->run) {
        set_result(h, PAR_V_ERROR, "backend '%s' has no run()", be->name ? be->name : "?");
    } else {
        do_runs(j, ctx, prep, (const void *const *)in_copy, h, first);
    }

out:
    if (prep) {
        h->phase = PH_RELEASE;
        if (be->release) be->release(ctx, prep);
    }
    if (ctx) {
        h->phase = PH_DESTROY;
        if (be->destroy) be->destroy(ctx);
    }
    if (first)
        for (int32_t k = 0; k < j->n_out; k++) free(first[k]);
    free(first);
    if (in_copy)
        for (int32_t i = 0; i < n_in; i++) free(in_copy[i]);
    free(in_copy);
    h->phase = PH_DONE;
    h->done = 1;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Parent side.
 * ------------------------------------------------------------------------------------------------------------- */

void par_exec_probe(par_backend_inst *inst, double timeout_s)
{
    if (!inst) return;
    inst->usable = 0;
    inst->describe[0] = '\0';
    if (!inst->be) {
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "backend '%s' is not resolved", inst->label);
        return;
    }
    shared_hdr *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) {
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "cannot map shared memory: %s", strerror(errno));
        return;
    }
    probe_job job = {.inst = inst};
    par_verdict v = PAR_V_ERROR;
    char reason[PAR_REASON_LEN];
    if (supervise(probe_body, &job, h, timeout_s, 1, &v, reason, sizeof reason)) {
        h->reason[sizeof h->reason - 1] = '\0';
        h->describe[sizeof h->describe - 1] = '\0';
        inst->usable = h->usable ? 1 : 0;
        fmt(inst->describe, sizeof inst->describe, "%s", h->describe);
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "%s", inst->usable ? "" : h->reason);
    } else {
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "%s", reason);
    }
    munmap(h, sizeof *h);
}

/* Check the guards around every output; returns 0 when intact, else 1 with reason set. */
static int check_guards(const uint8_t *base, int32_t n_out, const size_t *buf_off, const size_t *size,
                        char *reason, size_t len)
{
    for (int32_t k = 0; k < n_out; k++) {
        size_t pre = buf_off[k] - GUARD_BYTES, end = buf_off[k] + size[k];
        size_t post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t o = buf_off[k]; o-- > pre;) {
            if (base[o] != guard_byte(o)) {
                fmt(reason, len, "out-of-bounds write before output %d (byte offset -%zu)", (int)k, buf_off[k] - o);
                return 1;
            }
        }
        for (size_t o = end; o < post_end; o++) {
            if (base[o] != guard_byte(o)) {
                fmt(reason, len, "out-of-bounds write after output %d (byte offset %zu; the output has %zu bytes)",
                    (int)k, o - buf_off[k], size[k]);
                return 1;
            }
        }
    }
    return 0;
}

/* Checks the graph view and options before anything is forked. Returns 0 or -1 with reason set. */
static int check_args(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                      const par_exec_opts *o, char *reason, size_t len)
{
    if (!inst || !inst->be) {
        fmt(reason, len, "%s", "no backend (the instance is not resolved)");
        return -1;
    }
    if (!g || g->n_outputs <= 0 || !g->outputs || g->n_inputs < 0 || (g->n_inputs > 0 && (!g->inputs || !inputs))) {
        fmt(reason, len, "%s", "graph: no outputs, or inputs missing");
        return -1;
    }
    if (o->warmup < 0 || o->repeat < 1) {
        fmt(reason, len, "exec options: warmup %d must be >= 0 and repeat %d >= 1", (int)o->warmup, (int)o->repeat);
        return -1;
    }
    for (int32_t k = 0; k < g->n_outputs + g->n_inputs; k++) {
        int out = k < g->n_outputs;
        int32_t idx = out ? g->outputs[k] : g->inputs[k - g->n_outputs];
        int32_t pos = out ? k : k - g->n_outputs;
        if (idx < 0 || idx >= g->n_values) {
            fmt(reason, len, "graph %s %d: value index %d out of range", out ? "output" : "input", (int)pos, (int)idx);
            return -1;
        }
        const par_value *v = &g->values[idx];
        if (par_dtype_size(v->dtype) == 0 || v->numel < 1 || v->numel > (int64_t)1 << 40) {
            fmt(reason, len, "graph %s %d ('%s'): bad dtype or element count %lld", out ? "output" : "input",
                (int)pos, v->name ? v->name : "?", (long long)v->numel);
            return -1;
        }
        if (!out && !inputs[pos]) {
            fmt(reason, len, "graph input %d ('%s'): no data", (int)pos, v->name ? v->name : "?");
            return -1;
        }
    }
    return 0;
}

void par_exec_run(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                  const par_exec_opts *opts, par_exec_out *out)
{
    static const par_exec_opts defaults = {.warmup = 0, .repeat = 1, .timeout_s = 10.0, .isolate = 1};
    const par_exec_opts *o = opts ? opts : &defaults;
    memset(out, 0, sizeof *out);
    out->verdict = PAR_V_ERROR;
    if (check_args(inst, g, inputs, o, out->reason, sizeof out->reason) != 0) return;

    int32_t n_out = g->n_outputs;
    size_t *size = calloc((size_t)n_out, sizeof *size);
    size_t *buf_off = calloc((size_t)n_out, sizeof *buf_off);
    void **buf = calloc((size_t)n_out, sizeof *buf);
    uint8_t *base = MAP_FAILED;
    size_t total = 0;
    if (!size || !buf_off || !buf) {
        fmt(out->reason, sizeof out->reason, "%s", "out of memory");
        goto done;
    }
    size_t off = align_up(sizeof(shared_hdr), ALIGN) + GUARD_BYTES;
    for (int32_t k = 0; k < n_out; k++) {
        size[k] = value_bytes(&g->values[g->outputs[k]]);
        buf_off[k] = off;
        off = align_up(off + size[k], ALIGN) + 2 * GUARD_BYTES;
    }
    total = off - GUARD_BYTES;
    base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        fmt(out->reason, sizeof out->reason, "cannot map %zu bytes of shared memory: %s", total, strerror(errno));
        goto done;
    }
    for (int32_t k = 0; k < n_out; k++) {
        buf[k] = base + buf_off[k];
        size_t end = buf_off[k] + size[k], post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t i = buf_off[k] - GUARD_BYTES; i < buf_off[k]; i++) base[i] = guard_byte(i);
        for (size_t i = end; i < post_end; i++) base[i] = guard_byte(i);
    }

    shared_hdr *h = (shared_hdr *)base;
    run_job job = {.inst = inst, .g = g, .inputs = inputs, .o = o, .n_out = n_out, .out_buf = buf, .out_size = size};
    par_verdict v = PAR_V_ERROR;
    if (!supervise(run_body, &job, h, o->timeout_s, o->isolate, &v, out->reason, sizeof out->reason)) {
        out->verdict = v;
        out->t = h->t;
        goto done;
    }
    h->reason[sizeof h->reason - 1] = '\0';
    out->t = h->t;
    if (check_guards(base, n_out, buf_off, size, out->reason, sizeof out->reason)) {
        out->verdict = PAR_V_FAIL;
        goto done;
    }
    out->verdict = (h->verdict >= 0 && h->verdict < PAR_V_COUNT) ? (par_verdict)h->verdict : PAR_V_ERROR;
    fmt(out->reason, sizeof out->reason, "%s", h->reason);
    if (out->verdict != PAR_V_PASS) goto done;

    /* All runs gave run 1's bits, so the buffers hold run 1's outputs. */
    out->outputs = calloc((size_t)n_out, sizeof *out->outputs);
    if (!out->outputs) goto oom;
    out->n_outputs = n_out;
    for (int32_t k = 0; k < n_out; k++) {
        out->outputs[k] = malloc(size[k]);
        if (!out->outputs[k]) goto oom;
        memcpy(out->outputs[k], buf[k], size[k]);
    }
    goto done;
oom:
    par_exec_out_free(out);
    out->verdict = PAR_V_ERROR;
    fmt(out->reason, sizeof out->reason, "%s", "out of memory copying the outputs");
done:
    if (base != MAP_FAILED) munmap(base, total);
    free(size);
    free(buf_off);
    free(buf);
}

void par_exec_out_free(par_exec_out *out)
{
    if (!out) return;
    if (out->outputs)
        for (int32_t k = 0; k < out->n_outputs; k++) free(out->outputs[k]);
    free(out->outputs);
    out->outputs = NULL;
    out->n_outputs = 0;
}
