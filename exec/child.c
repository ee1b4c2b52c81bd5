/*
 * child.c - the backend child's side of a job (exec/xproto.h): the backend's life cycle, one phase at a time,
 * reported over the job's socket. A probe is init, knobs, ready (PAR_PROC_READY, when the backend has it),
 * describe, requantization scheme and promise, arithmetic flags and arithmetic, destroy; a run is init, knobs,
 * ready, supports, prepare, the nodes' declared algorithms and schemes, the backend's diagnostics, the node values it
 * gives (taps, PAR_PROC_NODE_OUTPUTS), bind, then one run per XC_RUN command, each followed by the device's time of
 * the run and the backend's diagnostics (the worker checks the buffers between runs and re-poisons the outputs), then release
 * and destroy.
 *
 * This file runs in the process (or thread, with --no-isolate) where the backend's code runs, so it holds no
 * verdict: it reports what the backend returned and how long it took, and the worker decides. It must not touch the
 * output buffers (the worker poisons and checks them), retry, or exit the process (the caller does, with _exit).
 */
#include "xproto.h"
#include "core/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void xsend(int sock, const par_xmsg *m)
{
    ssize_t r;
    while ((r = send(sock, m, sizeof *m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
}

static void send_phase(const par_xjob *j, int32_t ph)
{
    par_xmsg m;
    memset(&m, 0, sizeof m);
    m.type = XM_PHASE;
    m.phase = ph;
    xsend(j->sock, &m);
}

static void send_end(const par_xjob *j, int32_t ph, par_status st, int32_t index, const par_msg *msg, int keep)
{
    par_xmsg m;
    memset(&m, 0, sizeof m);
    m.type = XM_END;
    m.phase = ph;
    m.status = (int32_t)st;
    m.index = index;
    m.keep = keep;
    if (msg) memcpy(m.text, msg->text, sizeof msg->text); /* as the backend left it: the worker terminates it */
    if (j->isolated) { /* what the backend wrote and never flushed, before the worker may end this process */
        fflush(stdout);
        fflush(stderr);
    }
    xsend(j->sock, &m);
}

/* ---- the fault handler: a write into the sealed input mapping ------------------------------------------------ */

static const par_xjob *fault_job;
static int32_t fault_phase;
static char fault_stack[16384];

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    const par_xjob *j = fault_job;
    const uint8_t *a = si ? (const uint8_t *)si->si_addr : NULL;
    if (j && a && j->in_base && a >= j->in_base && a < j->in_base + j->in_len) {
        int32_t k = 0;
        size_t off = (size_t)(a - j->in_base);
        for (int32_t i = 0; i < j->n_in; i++)
            if (off >= j->in_off[i]) k = i;
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_INPUT_WRITE;
        m.phase = fault_phase;
        m.index = k;
        m.offset = (int64_t)(off - j->in_off[k]);
        send(j->sock, &m, sizeof m, MSG_NOSIGNAL); /* async-signal-safe */
        _exit(0);
    }
    /* Any other fault: die of it, so that the worker reports the signal. */
    signal(sig, SIG_DFL);
    (void)uc;
}

void par_xchild_install_fault_handler(const par_xjob *j)
{
    fault_job = j;
    stack_t ss = {.ss_sp = fault_stack, .ss_size = sizeof fault_stack, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

static void phase(const par_xjob *j, int32_t ph)
{
    fault_phase = ph;
    send_phase(j, ph);
}

/* ---- the life cycle ------------------------------------------------------------------------------------------ */

static void probe_main(const par_xjob *j, void *ctx)
{
    const par_backend *be = j->inst->be;
    par_xmsg m;
    memset(&m, 0, sizeof m);
    m.type = XM_PROBE;
    phase(j, PH_DESCRIBE);
    if (be->get_proc) {
        par_describe_fn d = (par_describe_fn)be->get_proc(ctx, PAR_PROC_DESCRIBE);
        if (d) d(ctx, m.text, sizeof m.text);
        par_requant_fn rq = (par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT);
        par_requant_exact_fn ex = (par_requant_exact_fn)be->get_proc(ctx, PAR_PROC_REQUANT_EXACT);
        m.requant = rq ? (int32_t)rq(ctx) : (int32_t)PAR_REQUANT_FP32;
        m.requant_exact = ex ? (ex(ctx) != 0) : 0;
        par_arith_flags_fn af = (par_arith_flags_fn)be->get_proc(ctx, PAR_PROC_ARITH_FLAGS);
        m.arith_flags = af ? af(ctx) : 0u;
    }
    par_arith_fn ar = be->get_proc ? (par_arith_fn)be->get_proc(ctx, PAR_PROC_ARITH) : NULL;
    m.arith = ar ? (int32_t)ar(ctx) : (int32_t)be->arith;
    xsend(j->sock, &m);
}

/* A micro-benchmark (PAR_PROC_MICROBENCH): one XM_MICRO with its status, value and unit (or message), as the backend
 * returned them (the worker checks them). A backend without the proc answers PAR_UNSUPPORTED. */
static void micro_main(const par_xjob *j, void *ctx)
{
    const par_backend *be = j->inst->be;
    par_microbench_fn mb = be->get_proc ? (par_microbench_fn)be->get_proc(ctx, PAR_PROC_MICROBENCH) : NULL;
    par_xmsg m;
    memset(&m, 0, sizeof m);
    m.type = XM_MICRO;
    m.phase = PH_RUN;
    phase(j, PH_RUN);
    if (!mb) {
        m.status = (int32_t)PAR_UNSUPPORTED;
        snprintf(m.text, sizeof m.text, "no micro-benchmarks (%s)", PAR_PROC_MICROBENCH);
    } else {
        par_msg msg;
        msg.text[0] = '\0';
        char unit[32] = "";
        double v = 0;
        m.status = (int32_t)mb(ctx, j->micro, &v, unit, sizeof unit, &msg);
        m.ms = v;
        unit[sizeof unit - 1] = '\0';
        if (m.status == PAR_OK) snprintf(m.text, sizeof m.text, "%s", unit);
        else memcpy(m.text, msg.text, sizeof msg.text);
    }
    xsend(j->sock, &m);
}

/* The per-node device times of a run, XM_NODE_BATCH nodes a message, when the backend timed any node. */
static void send_node_times(const par_xjob *j, const double *node_ms, int32_t n_nodes)
{
    int any = 0;
    for (int32_t i = 0; i < n_nodes && !any; i++) any = node_ms[i] >= 0;
    for (int32_t i = 0; any && i < n_nodes; i += XM_NODE_BATCH) {
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_NODES;
        m.phase = PH_RUN;
        m.index = i;
        m.offset = n_nodes - i < XM_NODE_BATCH ? n_nodes - i : XM_NODE_BATCH;
        memcpy(m.node_ms, node_ms + i, sizeof *node_ms * (size_t)m.offset);
        xsend(j->sock, &m);
    }
}

/* The backend's diagnostics (PAR_PROC_DIAGNOSTICS) after prepare (run 0) or after run r: one XM_DIAG with the text
 * as the backend wrote it, when it returned nonzero (the worker cleans and bounds the text). */
static void send_diag(const par_xjob *j, par_diagnostics_fn fn, void *ctx, void *prep, int32_t r)
{
    if (!fn) return;
    par_xmsg m;
    memset(&m, 0, sizeof m);
    if (fn(ctx, prep, m.text, sizeof m.text) == 0) return;
    m.text[sizeof m.text - 1] = '\0';
    m.type = XM_DIAG;
    m.phase = r ? PH_RUN : PH_PREPARE;
    m.index = r;
    xsend(j->sock, &m);
}

/* The backend's note on how it prepared the graph (PAR_PROC_NOTE), once after prepare: one XM_NOTE when it returned
 * nonzero (the worker cleans and bounds the text). */
static void send_note(const par_xjob *j, void *ctx, void *prep)
{
    const par_backend *be = j->inst->be;
    par_note_fn fn = be->get_proc ? (par_note_fn)be->get_proc(ctx, PAR_PROC_NOTE) : NULL;
    if (!fn) return;
    par_xmsg m;
    memset(&m, 0, sizeof m);
    if (fn(ctx, prep, m.text, sizeof m.text) == 0) return;
    m.text[sizeof m.text - 1] = '\0';
    m.type = XM_NOTE;
    m.phase = PH_PREPARE;
    xsend(j->sock, &m);
}

/* The runs, one per XC_RUN command; returns when told to end (or the worker is gone). After each run: the device's
 * time of it (PAR_PROC_DEVICE_TIME) and of each node it timed (XM_NODES), then the diagnostics. */
static void run_loop(const par_xjob *j, void *ctx, void *prep, par_diagnostics_fn diag)
{
    const par_backend *be = j->inst->be;
    par_device_time_fn dt = be->get_proc ? (par_device_time_fn)be->get_proc(ctx, PAR_PROC_DEVICE_TIME) : NULL;
    int32_t n_nodes = j->g->n_nodes > 0 ? j->g->n_nodes : 1;
    double *node_ms = dt ? malloc(sizeof *node_ms * (size_t)n_nodes) : NULL;
    if (!node_ms) dt = NULL; /* out of memory: the device time is not reported */
    for (int32_t r = 1;; r++) {
        char c = 0;
        ssize_t n;
        while ((n = recv(j->sock, &c, 1, 0)) < 0 && errno == EINTR) {}
        if (n != 1 || c != XC_RUN) break;
        fault_phase = PH_RUN;
        par_msg msg;
        msg.text[0] = '\0';
        double t0 = 1e3 * par_now_s();
        par_status st = be->run(ctx, prep, &msg);
        double t1 = 1e3 * par_now_s();
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_RUN;
        m.phase = PH_RUN;
        m.status = (int32_t)st;
        m.index = r;
        m.ms = t1 - t0;
        memcpy(m.text, msg.text, sizeof msg.text);
        if (st == PAR_OK && dt) {
            double total = -1;
            for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = -1;
            if (dt(ctx, prep, &total, node_ms, j->g->n_nodes) != 0) {
                m.dev_measured = 1;
                m.dev_ms = total;
                send_node_times(j, node_ms, j->g->n_nodes);
            }
        }
        send_diag(j, diag, ctx, prep, r);
        xsend(j->sock, &m);
    }
    free(node_ms);
}

/* After prepare: the algorithm of every node (PAR_PROC_NODE_ALGO), one XM_ALGO per node that is not direct, as the
 * backend returned it (the worker validates it). Nothing is sent when the backend has no such proc. */
static void send_algos(const par_xjob *j, void *ctx, void *prep)
{
    const par_backend *be = j->inst->be;
    par_node_algo_fn fn = be->get_proc ? (par_node_algo_fn)be->get_proc(ctx, PAR_PROC_NODE_ALGO) : NULL;
    if (!fn) return;
    phase(j, PH_ALGO);
    for (int32_t i = 0; i < j->g->n_nodes; i++) {
        int32_t a = (int32_t)fn(ctx, prep, i);
        if (a == (int32_t)PAR_ALGO_DIRECT) continue;
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_ALGO;
        m.phase = PH_ALGO;
        m.index = i;
        m.algo = a;
        xsend(j->sock, &m);
    }
}

/* Then the scheme of every quantized node (PAR_PROC_NODE_REQUANT), one XM_REQUANT per node whose scheme is not the
 * backend-wide one (PAR_PROC_REQUANT, fp32 when absent), as the backend returned it (the worker validates it). */
static void send_requants(const par_xjob *j, void *ctx, void *prep)
{
    const par_backend *be = j->inst->be;
    par_node_requant_fn fn = be->get_proc ? (par_node_requant_fn)be->get_proc(ctx, PAR_PROC_NODE_REQUANT) : NULL;
    if (!fn) return;
    par_requant_fn wide = (par_requant_fn)be->get_proc(ctx, PAR_PROC_REQUANT);
    const int32_t base = wide ? (int32_t)wide(ctx) : (int32_t)PAR_REQUANT_FP32;
    phase(j, PH_REQUANT);
    for (int32_t i = 0; i < j->g->n_nodes; i++) {
        if (!par_x_node_quantized(j->g, i)) continue;
        int32_t r = (int32_t)fn(ctx, prep, i);
        if (r == base) continue;
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_REQUANT;
        m.phase = PH_REQUANT;
        m.index = i;
        m.requant = r;
        xsend(j->sock, &m);
    }
}

/* With taps (par_exec_opts.n_taps): the backend's PAR_PROC_NODE_OUTPUTS, given the last n_taps output buffers, then
 * one XM_TAP per tap it did not give. A backend without the proc is UNSUPPORTED (the caller has another way). */
static par_status send_taps(const par_xjob *j, void *ctx, void *prep, par_msg *msg)
{
    const par_backend *be = j->inst->be;
    par_node_outputs_fn fn = be->get_proc ? (par_node_outputs_fn)be->get_proc(ctx, PAR_PROC_NODE_OUTPUTS) : NULL;
    if (!fn)
        return par_msgf(msg, PAR_UNSUPPORTED, "backend '%s' gives no node outputs (%s)", be->name ? be->name : "?",
                        PAR_PROC_NODE_OUTPUTS);
    const int32_t n = j->n_taps, at = j->g->n_outputs - n;
    uint8_t *given = calloc((size_t)n, 1);
    if (!given) return par_msgf(msg, PAR_ERROR, "out of memory for %d taps", (int)n);
    par_status st = fn(ctx, prep, n, j->g->outputs + at, j->out + at, given, msg);
    for (int32_t i = 0; st == PAR_OK && i < n; i++) {
        if (given[i]) continue;
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_TAP;
        m.phase = PH_BIND;
        m.index = i;
        xsend(j->sock, &m);
    }
    free(given);
    return st;
}

void par_xchild_main(const par_xjob *j)
{
    const par_backend *be = j->inst->be;
    const par_graph_desc *g = j->g;
    par_graph_desc view; /* with taps: the graph the backend sees, without them among its outputs */
    void *ctx = NULL, *prep = NULL;
    par_msg msg;
    msg.text[0] = '\0';
    int32_t end_phase = PH_DONE, end_index = 0;
    par_status end_st = PAR_OK;

    par_status st = PAR_OK;
    if (j->kept_ctx && *j->kept_ctx) { /* a kept child's later job: the context of its first, knobs applied */
        ctx = *j->kept_ctx;
        *j->kept_ctx = NULL;
        goto job;
    }
    phase(j, PH_INIT);
    st = par_plugin_enter(be, &msg); /* a plugin opens here (or in its fork server): never in the harness */
    if (st == PAR_OK) st = be->init ? be->init(&ctx, &msg) : PAR_OK;
    if (st != PAR_OK) {
        send_end(j, PH_INIT, st, 0, &msg, 0);
        return;
    }
    phase(j, PH_KNOBS);
    int32_t bad = par_backend_apply_knobs(j->inst, ctx, &st, &msg);
    if (bad >= 0) {
        end_phase = PH_KNOBS, end_st = st, end_index = bad;
        goto out;
    }
    par_ready_fn ready = be->get_proc ? (par_ready_fn)be->get_proc(ctx, PAR_PROC_READY) : NULL;
    if (ready) { /* usable with these knobs? (ended as init would be) */
        msg.text[0] = '\0';
        st = ready(ctx, &msg);
        if (st != PAR_OK) {
            end_phase = PH_INIT, end_st = st == PAR_UNSUPPORTED ? PAR_UNSUPPORTED : PAR_ERROR;
            goto out;
        }
    }
    if (!g) {
        if (j->micro) micro_main(j, ctx);
        else probe_main(j, ctx);
        goto out;
    }
job:
    if (j->n_taps > 0) {
        view = *g;
        view.n_outputs -= j->n_taps;
        g = &view;
    }
    phase(j, PH_SUPPORTS);
    for (int32_t i = 0; be->supports && i < g->n_nodes; i++) {
        msg.text[0] = '\0';
        st = be->supports(ctx, g, i, &msg);
        if (st != PAR_OK) {
            end_phase = PH_SUPPORTS, end_st = st, end_index = i;
            goto out;
        }
    }
    phase(j, PH_PREPARE);
    msg.text[0] = '\0';
    double t0 = 1e3 * par_now_s();
    st = be->prepare ? be->prepare(ctx, g, &prep, &msg) : PAR_OK;
    double prep_ms = 1e3 * par_now_s() - t0;
    if (st != PAR_OK) {
        prep = NULL;
        end_phase = PH_PREPARE, end_st = st;
        goto out;
    }
    send_algos(j, ctx, prep);
    send_requants(j, ctx, prep);
    send_note(j, ctx, prep);
    par_diagnostics_fn diag = be->get_proc ? (par_diagnostics_fn)be->get_proc(ctx, PAR_PROC_DIAGNOSTICS) : NULL;
    send_diag(j, diag, ctx, prep, 0);
    phase(j, PH_BIND);
    msg.text[0] = '\0';
    if (j->n_taps > 0 && (st = send_taps(j, ctx, prep, &msg)) != PAR_OK) {
        end_phase = PH_BIND, end_st = st;
        goto out;
    }
    st = be->bind ? be->bind(ctx, prep, (const void *const *)j->in, j->out, &msg) : PAR_OK;
    if (st != PAR_OK) {
        end_phase = PH_BIND, end_st = st;
        goto out;
    }
    if (!be->run) {
        end_phase = PH_RUN, end_st = PAR_ERROR;
        snprintf(msg.text, sizeof msg.text, "backend '%s' has no run()", be->name ? be->name : "?");
        goto out;
    }
    {
        par_xmsg m;
        memset(&m, 0, sizeof m);
        m.type = XM_READY;
        m.phase = PH_BIND;
        m.ms = prep_ms;
        xsend(j->sock, &m);
    }
    run_loop(j, ctx, prep, diag);
    msg.text[0] = '\0';
out:
    if (prep) {
        phase(j, PH_RELEASE);
        if (be->release) be->release(ctx, prep);
    }
    /* Kept for the next job only after a clean end (all runs made, or a node or graph the backend does not support)
     * and when the backend, asked now, says the context may serve it (PAR_PROC_REUSE). */
    int keep = 0;
    if (ctx && j->kept_ctx && g && (end_phase == PH_DONE || end_st == PAR_UNSUPPORTED) &&
        (end_phase == PH_DONE || end_phase == PH_SUPPORTS || end_phase == PH_PREPARE)) {
        par_reuse_fn reuse = be->get_proc ? (par_reuse_fn)be->get_proc(ctx, PAR_PROC_REUSE) : NULL;
        keep = reuse && reuse(ctx) != 0;
    }
    if (keep) {
        *j->kept_ctx = ctx;
    } else if (ctx) {
        phase(j, PH_DESTROY);
        if (be->destroy) be->destroy(ctx);
    }
    send_end(j, end_phase, end_st, end_index, end_phase == PH_DONE ? NULL : &msg, keep);
}
