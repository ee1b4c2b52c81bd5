/*
 * exec.c - the worker's side of a job: executes one graph on one backend instance in a child process (forked by
 * the job's fork server, exec/server.c, or by the caller; or, with isolate = 0, in a thread of the caller, for
 * debuggers: no protection against crashes or hangs), drives it run by run over the job's socket (exec/xproto.h;
 * the supervision itself is exec/xsup.c), and decides every verdict from what it can check itself.
 *
 * Memory the backend child can reach (besides its own copy-on-write view of the caller):
 *   - the inputs: one memfd, written, sealed (F_SEAL_WRITE, SHRINK, GROW, SEAL) and mapped read-only before the
 *     fork; each input starts on a page with at least 64 spare bytes after it (XNNPACK's XNN_EXTRA_BYTES reads). A
 *     write faults; the child's handler reports the input and offset (XM_INPUT_WRITE): FAIL.
 *   - the outputs: one memfd mapped shared (by the worker and the child), its size sealed (F_SEAL_SHRINK, GROW),
 *         [guard][output 0][pad][guard][guard][output 1][pad][guard] ...
 *     every buffer on a 64-byte boundary between guard bytes filled with a position-dependent pattern.
 * No result record, no other job's buffer and no harness state is shared with the child.
 *
 * Conduct checks, by the worker, after EVERY run (the child waits for the next XC_RUN meanwhile):
 *   - the guards (an out-of-bounds write; one that flips bytes back on the next run is still caught);
 *   - unwritten elements: outputs are poisoned before every run, alternating 0xFF bytes (a NaN for f32 and f16,
 *     255 for qu8, -1 for qs8 and i32) on odd runs and 0x7F bytes (3.39e38 for f32, a NaN for f16, 127 for qu8
 *     and qs8) on even runs. An element that differs from run 1 and equals its run's poison on either side was left
 *     unwritten. At least two runs are made (an extra untimed one when warmup + repeat is 1).
 *   - other differences from run 1: FLAKY.
 * What the child reports (statuses, messages, timings, phases) is checked before use: enums in range (a status
 * outside par_status is named: "returned invalid status 77"), text terminated and cleaned (valid UTF-8, control
 * characters escaped), run times and device times (PAR_PROC_DEVICE_TIME) within what the worker itself measured (a
 * device time beyond it is an ERROR naming the backend). The backend's diagnostics (PAR_PROC_DIAGNOSTICS) are
 * recorded into par_exec_out, not decided here: the judge makes them a FAIL after the oracle has its metrics.
 *
 * Through a fork server the child also gets the graph, as a position-independent block in a sealed memfd
 * (exec/gblob.c). The child's stdout and stderr go to a pipe that the worker drains while it waits (xsup.c).
 *
 * This file must not judge output values numerically (the oracle does), retry, or sleep.
 */
#include "xsup.h"
#include "gblob.h"
#include "sandbox.h"

#include "core/requant.h"
#include "core/clock.h"
#include "reference/conv_winograd.h" /* par_algo_check */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ALIGN 64
#define GUARD_BYTES 256
#define POISON_ODD 0xFFu  /* runs 1, 3, 5, ... */
#define POISON_EVEN 0x7Fu /* runs 2, 4, 6, ... */

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
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
 * Run: the checks between runs
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct outs {
    int32_t n;
    uint8_t *base;
    size_t total;
    size_t *off, *size, *esz;
    uint8_t **first;             /* run 1's outputs, worker-private */
} outs;

/* Check the guards around every output; returns 0 when intact, else 1 with the verdict decided. */
static int check_guards(par_xsup *s, const outs *o)
{
    char ph[32];
    for (int32_t k = 0; k < o->n; k++) {
        size_t pre = o->off[k] - GUARD_BYTES, end = o->off[k] + o->size[k];
        size_t post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t i = o->off[k]; i-- > pre;) {
            if (o->base[i] != guard_byte(i)) {
                par_xdecide(s, PAR_V_FAIL, "out-of-bounds write before output %d (byte offset -%zu), found after %s",
                       (int)k, o->off[k] - i, par_xwhere(s, ph, sizeof ph));
                return 1;
            }
        }
        for (size_t i = end; i < post_end; i++) {
            if (o->base[i] != guard_byte(i)) {
                par_xdecide(s, PAR_V_FAIL,
                       "out-of-bounds write after output %d (byte offset %zu; the output has %zu bytes), "
                       "found after %s",
                       (int)k, i - o->off[k], o->size[k], par_xwhere(s, ph, sizeof ph));
                return 1;
            }
        }
    }
    return 0;
}

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

/* Compare run r's output k (poisoned with pcur) with run 1's (poisoned with POISON_ODD). 0 when bit-identical, else
 * 1 with the verdict decided. */
static int compare_runs(par_xsup *s, const outs *o, int32_t k, int32_t run, uint8_t pcur)
{
    const uint8_t *first = o->first[k], *cur = o->base + o->off[k];
    size_t size = o->size[k], esz = o->esz[k];
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
        par_xdecide(s, PAR_V_FAIL, "output %d element %lld never written (%lld element%s in all)", (int)k,
               (long long)first_unw, (long long)n_unw, n_unw == 1 ? "" : "s");
    } else {
        char ha[40], hb[40];
        elem_hex(first + (size_t)first_diff * esz, esz, ha, sizeof ha);
        elem_hex(cur + (size_t)first_diff * esz, esz, hb, sizeof hb);
        par_xdecide(s, PAR_V_FLAKY, "run %d differs from run 1 at output %d element %lld (bits %s vs %s)", (int)run,
               (int)k, (long long)first_diff, hb, ha);
    }
    return 1;
}

static void fill_timing(par_timing *t, double *ms, int32_t n)
{
    t->runs = n;
    if (n <= 0) return;
    t->n_samples = n < PAR_TIMING_SAMPLES ? n : PAR_TIMING_SAMPLES;
    memcpy(t->samples_ms, ms, (size_t)t->n_samples * sizeof *ms);
    par_timing_quantiles(t, ms, n);
}

static size_t value_bytes(const par_value *v)
{
    return (size_t)v->numel * par_dtype_size(v->dtype);
}

/* A job between par_exec_begin and par_exec_end: the child, its buffers and what it has declared and measured. */
struct par_exec_job {
    par_exec_opts opt;
    par_xsup s;
    int started;                 /* par_xstart was called: par_xfinish must be */
    int ready;                   /* the child reported XM_READY: runs may be made */
    outs o;
    void **obuf;
    size_t *in_off;
    const void **in_ptr;
    uint8_t *in_base;
    size_t in_total;
    int32_t *algo, *rq;          /* the nodes' declared algorithms and schemes (XM_ALGO, XM_REQUANT) */
    uint8_t *tapped;             /* opt.n_taps: 1 where the backend gives tap i (XM_TAP names those it does not) */
    double prepare_ms;
    int32_t runs;                /* runs made */
    double *ms, *dev;            /* [opt.repeat] the timed runs' times and device times */
    int32_t n_timed, n_dev;
    par_xjob xj;
};

/* One XM_NODES: per-node device times of the run, each kept in node_ms (when the caller wants them) if it is a time
 * the run can have taken; a batch outside the graph's nodes is a malformed report. */
static int take_node_times(par_xsup *s, const par_xmsg *m, double *node_ms, double wall_ms)
{
    int32_t n_nodes = s->g->n_nodes;
    if (m->index < 0 || m->offset < 1 || m->offset > XM_NODE_BATCH || m->index > n_nodes - m->offset) {
        par_xdecide(s, PAR_V_CRASH, "the backend child sent per-node device times for nodes %d + %lld of %d",
                    (int)m->index, (long long)m->offset, (int)n_nodes);
        return -1;
    }
    for (int32_t i = 0; node_ms && i < (int32_t)m->offset; i++) {
        double t = m->node_ms[i];
        node_ms[m->index + i] = isfinite(t) && t >= 0 && t <= wall_ms ? t : -1;
    }
    return 0;
}

int par_exec_step(par_exec_job *j, double timeout_s, par_exec_run_info *ri)
{
    par_xsup *s = &j->s;
    if (ri) ri->ms = 0, ri->dev_measured = 0, ri->dev_ms = 0;
    if (!j->ready || s->decided) return 0;
    for (int32_t i = 0; ri && ri->node_ms && i < s->g->n_nodes; i++) ri->node_ms[i] = -1;
    const outs *o = &j->o;
    const int32_t r = j->runs++;
    uint8_t poison = (r % 2 == 0) ? POISON_ODD : POISON_EVEN;
    for (int32_t k = 0; k < o->n; k++) memset(o->base + o->off[k], poison, o->size[k]);
    s->phase = PH_RUN;
    s->run = r + 1;
    double t0 = par_now_s();
    if (timeout_s > 0 && s->isolated) s->deadline = t0 + timeout_s;
    par_xsend_cmd(s, XC_RUN);
    par_xmsg m;
    int got = par_xawait(s, &m);
    while (got && m.type == XM_NODES)
        got = take_node_times(s, &m, ri ? ri->node_ms : NULL, (par_now_s() - t0) * 1e3) == 0 && par_xawait(s, &m);
    if (!got) return 0;
    double wall_ms = (par_now_s() - t0) * 1e3;
    if (m.type == XM_END) {
        par_xdecide(s, PAR_V_CRASH, "the backend child ended during run %d without reporting it", (int)r + 1);
        return 0;
    }
    if (m.type != XM_RUN || m.index != r + 1) {
        par_xdecide(s, PAR_V_CRASH, "the backend child sent an unexpected report during run %d (type %d, run %d)",
                    (int)r + 1, (int)m.type, (int)m.index);
        return 0;
    }
    if (m.status != PAR_OK) {
        char txt[PAR_MSG_LEN];
        if (m.status == PAR_UNSUPPORTED || m.status == PAR_ERROR)
            par_xdecide(s, m.status == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "run %d failed: %s",
                        (int)r + 1, par_xmsg_text(&m, txt, sizeof txt));
        else
            par_xdecide(s, PAR_V_ERROR, "run %d returned invalid status %d", (int)r + 1, (int)m.status);
        return 0;
    }
    /* the child's clock is data: keep it within what the worker saw */
    double run_ms = (isfinite(m.ms) && m.ms >= 0 && m.ms <= wall_ms) ? m.ms : wall_ms;
    /* So is the device's: a time of the run on its device cannot exceed what the worker waited for the run */
    if (m.dev_measured && !(isfinite(m.dev_ms) && m.dev_ms >= 0 && m.dev_ms <= wall_ms)) {
        par_xdecide(s, PAR_V_ERROR, "backend '%s' reports a device time of %g ms for run %d, which took %.3g ms "
                    "(%s: not a time the run can have taken)", s->inst->label, m.dev_ms, (int)r + 1, wall_ms,
                    PAR_PROC_DEVICE_TIME);
        return 0;
    }
    if (r >= j->opt.warmup && j->n_timed < j->opt.repeat) {
        if (m.dev_measured) j->dev[j->n_dev++] = m.dev_ms;
        j->ms[j->n_timed++] = run_ms;
    }
    if (ri) {
        ri->ms = run_ms;
        ri->dev_measured = m.dev_measured != 0;
        ri->dev_ms = m.dev_measured ? m.dev_ms : 0;
    }
    if (check_guards(s, o)) return 0;
    const int32_t tap0 = o->n - j->opt.n_taps;
    for (int32_t k = 0; k < o->n; k++) {
        if (k >= tap0 && !j->tapped[k - tap0]) continue; /* a tap the backend does not give: poison, unwritten */
        if (r == 0) memcpy(o->first[k], o->base + o->off[k], o->size[k]);
        else if (compare_runs(s, o, k, r + 1, poison)) return 0;
    }
    return 1;
}
/* Checks the graph view and options before anything is forked. Returns 0 or -1 with reason set. */
static int check_args(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                      const par_exec_opts *o, char *reason, size_t len)
{
    if (!inst || !inst->be) {
        par_xfmt(reason, len, "%s", "no backend (the instance is not resolved)");
        return -1;
    }
    if (!g || g->n_outputs <= 0 || !g->outputs || g->n_inputs < 0 || (g->n_inputs > 0 && (!g->inputs || !inputs))) {
        par_xfmt(reason, len, "%s", "graph: no outputs, or inputs missing");
        return -1;
    }
    if (o->n_taps < 0 || o->n_taps >= g->n_outputs) {
        par_xfmt(reason, len, "exec options: %d taps of %d outputs leave the graph no output", (int)o->n_taps,
                 (int)g->n_outputs);
        return -1;
    }
    if (o->warmup < 0 || o->repeat < 1) {
        par_xfmt(reason, len, "exec options: warmup %d must be >= 0 and repeat %d >= 1", (int)o->warmup, (int)o->repeat);
        return -1;
    }
    for (int32_t k = 0; k < g->n_outputs + g->n_inputs; k++) {
        int out = k < g->n_outputs;
        int32_t idx = out ? g->outputs[k] : g->inputs[k - g->n_outputs];
        int32_t pos = out ? k : k - g->n_outputs;
        if (idx < 0 || idx >= g->n_values) {
            par_xfmt(reason, len, "graph %s %d: value index %d out of range", out ? "output" : "input", (int)pos, (int)idx);
            return -1;
        }
        const par_value *v = &g->values[idx];
        if (par_dtype_size(v->dtype) == 0 || v->numel < 1 || v->numel > (int64_t)1 << 40) {
            par_xfmt(reason, len, "graph %s %d ('%s'): bad dtype or element count %lld", out ? "output" : "input",
                (int)pos, v->name ? v->name : "?", (long long)v->numel);
            return -1;
        }
        if (!out && !inputs[pos]) {
            par_xfmt(reason, len, "graph input %d ('%s'): no data", (int)pos, v->name ? v->name : "?");
            return -1;
        }
    }
    return 0;
}

/* The inputs in a sealed memfd mapped read-only; *base MAP_FAILED on failure (reason set). */
static void map_inputs(const par_graph_desc *g, const void *const *inputs, size_t *off, const void **ptr,
                       uint8_t **base, size_t *total, int *fd_out, char *reason, size_t len)
{
    *fd_out = -1;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), t = 0;
    *base = MAP_FAILED;
    for (int32_t i = 0; i < g->n_inputs; i++) {
        off[i] = t;
        t += align_up(value_bytes(&g->values[g->inputs[i]]) + ALIGN, page);
    }
    *total = t;
    if (t == 0) return;
    int fd = memfd_create("parity-inputs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        par_xfmt(reason, len, "cannot create the input memfd: %s", strerror(errno));
        return;
    }
    int ok = ftruncate(fd, (off_t)t) == 0;
    for (int32_t i = 0; ok && i < g->n_inputs; i++) {
        size_t sz = value_bytes(&g->values[g->inputs[i]]), done = 0;
        while (ok && done < sz) {
            ssize_t w = pwrite(fd, (const uint8_t *)inputs[i] + done, sz - done, (off_t)(off[i] + done));
            if (w < 0 && errno == EINTR) continue;
            ok = w > 0;
            done += w > 0 ? (size_t)w : 0;
        }
    }
    ok = ok && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
    if (ok) *base = mmap(NULL, t, PROT_READ, MAP_SHARED, fd, 0);
    if (!ok || *base == MAP_FAILED) {
        par_xfmt(reason, len, "cannot write, seal or map the inputs: %s", strerror(errno));
        *base = MAP_FAILED;
        close(fd);
    } else {
        *fd_out = fd; /* for a fork server */
    }
    for (int32_t i = 0; *base != MAP_FAILED && i < g->n_inputs; i++) ptr[i] = *base + off[i];
}

/* The graph block of a job for a fork server's child: a sealed memfd. Returns 0 or -1 with reason set. */
static int make_blob(par_xsup *s, const par_graph_desc *g, const size_t *in_off, const size_t *out_off,
                     int32_t n_taps, char *reason, size_t len)
{
    size_t n = par_gblob_size(g, in_off, out_off);
    uint8_t *b = calloc(1, n);
    s->blob_fd = memfd_create("parity-graph", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int ok = b && s->blob_fd >= 0;
    if (ok) par_gblob_write(g, in_off, out_off, b);
    if (ok) ((par_gblob_hdr *)b)->n_taps = n_taps;
    size_t done = 0;
    while (ok && done < n) {
        ssize_t w = write(s->blob_fd, b + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        done += w > 0 ? (size_t)w : 0;
    }
    ok = ok && fcntl(s->blob_fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0;
    free(b);
    if (!ok) {
        par_xfmt(reason, len, "cannot write the graph for the fork server: %s", strerror(errno));
        return -1;
    }
    s->blob_len = n;
    return 0;
}

/* One XM_ALGO: the algorithm the backend declared for a node, checked against the node (par_algo_check) and kept in
 * *algo (allocated on the first, every other node direct). A bad declaration decides the job: ERROR, naming the
 * backend, the node and the value. */
static void take_algo(par_xsup *s, const par_graph_desc *g, const par_xmsg *m, int32_t **algo)
{
    par_msg msg;
    const char *be = s->inst->label;
    if (par_algo_check(g, m->index, m->algo, &msg) != PAR_OK) {
        par_xdecide(s, PAR_V_ERROR, "backend '%s': %s (%s)", be, msg.text, PAR_PROC_NODE_ALGO);
        return;
    }
    if (!*algo) {
        *algo = calloc((size_t)g->n_nodes, sizeof **algo); /* PAR_ALGO_DIRECT is 0 */
        if (!*algo) {
            par_xdecide(s, PAR_V_ERROR, "%s", "out of memory for the nodes' algorithms");
            return;
        }
    }
    (*algo)[m->index] = m->algo;
}

/* One XM_REQUANT: the scheme the backend declared for a node, checked (a par_requant value, a quantized node) and
 * kept in *rq (allocated on the first, -1 for every other node: the backend-wide scheme). A bad declaration decides
 * the job: ERROR, naming the backend, the node and the value. */
/* Whether scheme r may be declared for node i of g (a node of the graph, a par_requant value, a quantized output):
 * PAR_OK, or PAR_ERROR with the reason naming the backend be, the node and the value. */
static par_status requant_decl_check(const par_graph_desc *g, int32_t i, int32_t r, const char *be, par_msg *msg)
{
    if (i < 0 || i >= g->n_nodes)
        return par_msgf(msg, PAR_ERROR, "backend '%s': declared requantization scheme %d for node %d, not a node of "
                        "the graph (%s)", be, (int)r, (int)i, PAR_PROC_NODE_REQUANT);
    const par_node *n = &g->nodes[i];
    const char *name = n->name ? n->name : "", *op = n->op ? n->op : "?";
    if (r < 0 || r >= PAR_REQUANT_N_SCHEMES)
        return par_msgf(msg, PAR_ERROR, "backend '%s': node %d '%s' (%s): declared requantization scheme %d, not a "
                        "par_requant value (0..%d) (%s)", be, (int)i, name, op, (int)r, PAR_REQUANT_N_SCHEMES - 1,
                        PAR_PROC_NODE_REQUANT);
    if (!par_x_node_quantized(g, i))
        return par_msgf(msg, PAR_ERROR, "backend '%s': node %d '%s' (%s): declared requantization scheme %d (%s), but "
                        "its output is not quantized (%s)", be, (int)i, name, op, (int)r,
                        par_requant_name((par_requant)r), PAR_PROC_NODE_REQUANT);
    return PAR_OK;
}

static void take_requant(par_xsup *s, const par_graph_desc *g, const par_xmsg *m, int32_t **rq)
{
    const int32_t i = m->index;
    par_msg msg;
    if (requant_decl_check(g, i, m->requant, s->inst->label, &msg) != PAR_OK) {
        par_xdecide(s, PAR_V_ERROR, "%s", msg.text);
        return;
    }
    if (!*rq) {
        *rq = malloc(sizeof **rq * (size_t)g->n_nodes);
        if (!*rq) {
            par_xdecide(s, PAR_V_ERROR, "%s", "out of memory for the nodes' schemes");
            return;
        }
        for (int32_t k = 0; k < g->n_nodes; k++) (*rq)[k] = -1;
    }
    (*rq)[i] = m->requant;
}

/* The job's buffers: the guarded output mapping (a memfd, so that a fork server's child can map it too; its size
 * sealed, so that no child can truncate it, through its descriptor or /proc/self/map_files, under the worker's
 * mapping: the worker would die of SIGBUS) and the sealed inputs. 0, or -1 with the verdict decided. */
static int job_buffers(par_exec_job *j, const par_graph_desc *g, const void *const *inputs)
{
    par_xsup *s = &j->s;
    outs *o = &j->o;
    int32_t n_out = g->n_outputs, n_in = g->n_inputs;
    o->n = n_out;
    o->off = calloc((size_t)n_out, sizeof *o->off);
    o->size = calloc((size_t)n_out, sizeof *o->size);
    o->esz = calloc((size_t)n_out, sizeof *o->esz);
    o->first = calloc((size_t)n_out, sizeof *o->first);
    j->obuf = calloc((size_t)n_out, sizeof *j->obuf);
    j->in_off = calloc((size_t)(n_in ? n_in : 1), sizeof *j->in_off);
    j->in_ptr = calloc((size_t)(n_in ? n_in : 1), sizeof *j->in_ptr);
    j->ms = malloc(sizeof(double) * (size_t)j->opt.repeat * 2);
    if (j->opt.n_taps > 0 && (j->tapped = malloc((size_t)j->opt.n_taps)) != NULL)
        memset(j->tapped, 1, (size_t)j->opt.n_taps);
    if (j->opt.n_taps > 0 && !j->tapped) {
        par_xdecide(s, PAR_V_ERROR, "%s", "out of memory");
        return -1;
    }
    j->dev = j->ms ? j->ms + j->opt.repeat : NULL;
    if (!o->off || !o->size || !o->esz || !o->first || !j->obuf || !j->in_off || !j->in_ptr || !j->ms) {
        par_xdecide(s, PAR_V_ERROR, "%s", "out of memory");
        return -1;
    }
    size_t off = GUARD_BYTES;
    for (int32_t k = 0; k < n_out; k++) {
        const par_value *v = &g->values[g->outputs[k]];
        o->size[k] = value_bytes(v);
        o->esz[k] = par_dtype_size(v->dtype);
        o->off[k] = off;
        off = align_up(off + o->size[k], ALIGN) + 2 * GUARD_BYTES;
        if (!(o->first[k] = malloc(o->size[k]))) {
            par_xdecide(s, PAR_V_ERROR, "out of memory for output %d (%zu bytes)", (int)k, o->size[k]);
            return -1;
        }
    }
    o->total = off - GUARD_BYTES;
    s->out_fd = memfd_create("parity-outputs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (s->out_fd < 0 || ftruncate(s->out_fd, (off_t)o->total) != 0 ||
        fcntl(s->out_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        par_xdecide(s, PAR_V_ERROR, "cannot create the output memfd: %s", strerror(errno));
        return -1;
    }
    o->base = mmap(NULL, o->total, PROT_READ | PROT_WRITE, MAP_SHARED, s->out_fd, 0);
    if (o->base == MAP_FAILED) {
        par_xdecide(s, PAR_V_ERROR, "cannot map %zu bytes of shared memory: %s", o->total, strerror(errno));
        return -1;
    }
    for (int32_t k = 0; k < n_out; k++) {
        j->obuf[k] = o->base + o->off[k];
        size_t end = o->off[k] + o->size[k], post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t i = o->off[k] - GUARD_BYTES; i < o->off[k]; i++) o->base[i] = guard_byte(i);
        for (size_t i = end; i < post_end; i++) o->base[i] = guard_byte(i);
    }
    char reason[PAR_REASON_LEN] = "";
    map_inputs(g, inputs, j->in_off, j->in_ptr, &j->in_base, &j->in_total, &s->in_fd, reason, sizeof reason);
    if (j->in_total > 0 && j->in_base == MAP_FAILED) {
        par_xdecide(s, PAR_V_ERROR, "%s", reason);
        return -1;
    }
    return 0;
}

/* Until the child is ready to run: its declarations (XM_ALGO, XM_REQUANT), then XM_READY with the prepare time. */
static void job_until_ready(par_exec_job *j)
{
    par_xsup *s = &j->s;
    par_xmsg m;
    int got = par_xawait(s, &m);
    while (got && (m.type == XM_ALGO || m.type == XM_REQUANT || m.type == XM_TAP) && !s->decided) {
        if (m.type == XM_ALGO) take_algo(s, s->g, &m, &j->algo);
        else if (m.type == XM_REQUANT) take_requant(s, s->g, &m, &j->rq);
        else if (m.index >= 0 && m.index < j->opt.n_taps) j->tapped[m.index] = 0;
        else par_xdecide(s, PAR_V_CRASH, "the backend child named tap %d of %d", (int)m.index, (int)j->opt.n_taps);
        if (!s->decided) got = par_xawait(s, &m);
    }
    if (!got || s->decided) return;
    if (m.type == XM_END) {
        par_xdecide_end(s, &m);
    } else if (m.type != XM_READY) {
        par_xdecide(s, PAR_V_CRASH, "the backend child sent an unexpected report before its runs (type %d)",
                    (int)m.type);
    } else {
        j->prepare_ms = isfinite(m.ms) && m.ms >= 0 ? m.ms : 0.0;
        j->ready = 1;
    }
}

par_exec_job *par_exec_begin(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                             const par_exec_opts *opts)
{
    static const par_exec_opts defaults = {.warmup = 0, .repeat = 1, .timeout_s = 10.0, .isolate = 1};
    par_exec_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->opt = opts ? *opts : defaults;
    j->o.base = j->in_base = MAP_FAILED;
    par_xsup *s = &j->s;
    s->pidfd = s->sock = s->outfd = s->thread_sock = -1;
    s->srv_fd = s->blob_fd = s->out_fd = s->in_fd = -1;
    s->inst = inst;
    s->g = g;
    s->v = PAR_V_PASS;
    char reason[PAR_REASON_LEN];
    if (check_args(inst, g, inputs, &j->opt, reason, sizeof reason) != 0) {
        s->g = NULL;
        par_xdecide(s, PAR_V_ERROR, "%s", reason);
        return j;
    }
    if (job_buffers(j, g, inputs) != 0) return j;
    if (par_exec_server_lost(j->opt.server)) j->opt.server = NULL; /* fork from here (par_exec_server_lose) */
    const par_exec_opts *opt = &j->opt;
    if (opt->isolate && opt->server) {
        s->srv_fd = par_exec_server_fd(opt->server);
        s->cg = par_exec_server_cgroup(opt->server);
        if (make_blob(s, g, j->in_off, j->o.off, j->opt.n_taps, reason, sizeof reason) != 0) {
            par_xdecide(s, PAR_V_ERROR, "%s", reason);
            return j;
        }
        s->out_len = j->o.total;
        s->in_len = j->in_total;
    }
    s->isolated = opt->isolate != 0;
    s->timeout_s = opt->timeout_s;
    s->mem_limit = s->isolated ? opt->mem_limit : 0;
    /* the kernel's limit on the job's cgroup, a quarter above the polled one: a backstop for what grows faster
     * than the worker polls */
    if (opt->server && s->mem_limit > 0) par_exec_server_limit(opt->server, s->mem_limit + s->mem_limit / 4);
    /* xj lives in the job: a child thread (isolate = 0) reads it for as long as it runs */
    j->xj = (par_xjob){.inst = inst, .g = g, .in = j->in_ptr, .out = j->obuf,
                       .in_base = j->in_total ? j->in_base : NULL, .in_len = j->in_total, .in_off = j->in_off,
                       .n_in = g->n_inputs, .n_taps = j->opt.n_taps};
    j->started = 1;
    if (par_xstart(s, &j->xj) == 0) job_until_ready(j);
    return j;
}

double par_exec_prepare_ms(const par_exec_job *j)
{
    return j ? j->prepare_ms : 0;
}

void par_exec_end(par_exec_job *j, par_exec_out *out)
{
    memset(out, 0, sizeof *out);
    out->verdict = PAR_V_ERROR;
    if (!j) {
        par_xfmt(out->reason, sizeof out->reason, "%s", "out of memory for the job");
        return;
    }
    par_xsup *s = &j->s;
    if (j->ready && !s->decided) {
        while (j->runs < 2 && par_exec_step(j, 0, NULL)) {} /* the second run is what shows unwritten elements */
        if (!s->decided) {
            par_xmsg m;
            par_xsend_cmd(s, XC_END);
            while (par_xawait(s, &m) && m.type != XM_END) {}
            if (!s->decided) check_guards(s, &j->o); /* release and destroy may write too */
        }
    }
    if (j->started) par_xfinish(s);
    if (s->srv_lost) par_exec_server_lose(j->opt.server);
    out->t.prepare_ms = j->prepare_ms;
    fill_timing(&out->t, j->ms, j->n_timed);
    out->t.device_n = j->n_dev;
    out->t.device_n_samples = j->n_dev < PAR_TIMING_SAMPLES ? j->n_dev : PAR_TIMING_SAMPLES;
    if (j->n_dev > 0) memcpy(out->t.device_samples_ms, j->dev, (size_t)out->t.device_n_samples * sizeof *j->dev);
    par_timing_device_quantiles(&out->t, j->dev, j->n_dev);
    out->n_diag = s->n_diag;
    out->diag_run = s->diag_run;
    memcpy(out->diag, s->diag, sizeof out->diag);
    memcpy(out->note, s->note, sizeof out->note);
    out->output_bytes = s->out_total;
    par_xoutput_tail(s, out->output, sizeof out->output);
    out->verdict = s->decided ? s->v : PAR_V_PASS;
    if (s->decided) par_xfmt(out->reason, sizeof out->reason, "%s", s->reason);
    const outs *o = &j->o;
    if (out->verdict == PAR_V_PASS) {
        out->algo = j->algo, out->n_algo = j->algo ? s->g->n_nodes : 0;
        out->requant = j->rq, out->n_requant = j->rq ? s->g->n_nodes : 0;
        j->algo = j->rq = NULL;
        out->tapped = j->tapped, out->n_taps = j->tapped ? j->opt.n_taps : 0;
        j->tapped = NULL;
        /* Every run gave run 1's bits: hand over the worker's copies of run 1. */
        out->outputs = calloc((size_t)o->n, sizeof *out->outputs);
        if (!out->outputs) {
            out->verdict = PAR_V_ERROR;
            par_xfmt(out->reason, sizeof out->reason, "%s", "out of memory copying the outputs");
        } else {
            out->n_outputs = o->n;
            for (int32_t k = 0; k < o->n; k++) out->outputs[k] = o->first[k], o->first[k] = NULL;
        }
    }
    free(j->algo);
    free(j->rq);
    free(j->tapped);
    if (s->out_fd >= 0) close(s->out_fd);
    if (s->in_fd >= 0) close(s->in_fd);
    if (s->blob_fd >= 0) close(s->blob_fd);
    if (o->base != MAP_FAILED) munmap(o->base, o->total);
    if (j->in_base != MAP_FAILED) munmap(j->in_base, j->in_total);
    for (int32_t k = 0; o->first && k < o->n; k++) free(o->first[k]);
    free(o->first);
    free(o->off);
    free(o->size);
    free(o->esz);
    free(j->obuf);
    free(j->in_off);
    free(j->in_ptr);
    free(j->ms);
    free(j);
}

void par_exec_run(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                  const par_exec_opts *opts, par_exec_out *out)
{
    par_exec_job *j = par_exec_begin(inst, g, inputs, opts);
    int32_t n_runs = j ? j->opt.warmup + j->opt.repeat : 0;
    for (int32_t r = 0; r < n_runs && par_exec_step(j, 0, NULL); r++) {}
    par_exec_end(j, out);
}
void par_exec_out_free(par_exec_out *out)
{
    if (!out) return;
    if (out->outputs)
        for (int32_t k = 0; k < out->n_outputs; k++) free(out->outputs[k]);
    free(out->outputs);
    out->outputs = NULL;
    out->n_outputs = 0;
    free(out->algo);
    out->algo = NULL;
    out->n_algo = 0;
    free(out->requant);
    out->requant = NULL;
    out->n_requant = 0;
    free(out->tapped);
    out->tapped = NULL;
    out->n_taps = 0;
}
