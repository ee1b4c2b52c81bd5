/*
 * xproto.h - the protocol between a worker (exec.c) and the backend child it runs a job in (child.c); private to
 * exec/. One SOCK_SEQPACKET socket pair per job: the child reports, the worker commands. Everything the child sends
 * is data that the worker checks (types, ranges, termination, UTF-8) before it uses it; nothing the child says is a
 * verdict by itself.
 *
 *   child -> worker   XM_PHASE (each phase as it starts), XM_ALGO (after prepare, one per node whose declared
 *                     algorithm, PAR_PROC_NODE_ALGO, is not PAR_ALGO_DIRECT: index the node, algo the value as the
 *                     backend returned it), XM_REQUANT (then, one per quantized node whose declared scheme,
 *                     PAR_PROC_NODE_REQUANT, is not the backend-wide one: index the node, requant the value as the
 *                     backend returned it), XM_NOTE (then, once: the backend's note on how it prepared the graph,
 *                     PAR_PROC_NOTE, when it returned nonzero), XM_TAP (then, with taps, one per tap the backend
 *                     did not give through PAR_PROC_NODE_OUTPUTS: index the tap), XM_DIAG (then, and after each run before its XM_RUN: a defect the
 *                     backend's own checking reported, PAR_PROC_DIAGNOSTICS, when it returned nonzero; index 0 after
 *                     prepare, else the run; text as the backend wrote it), XM_READY (after bind), XM_RUN (after
 *                     each run, with the device's time of the run when PAR_PROC_DEVICE_TIME measured it; then it
 *                     waits; before it, XM_NODES: the per-node device times of the run, XM_NODE_BATCH nodes a
 *                     message from node `index`, `offset` of them, as the backend returned them), XM_PROBE (the
 *                     probe's answers), XM_MICRO (a micro-benchmark's value, unit in text), XM_INPUT_WRITE (from the
 *                     fault handler), XM_END (last; its phase and status say where and how the job ended, its
 *                     `keep` 1 when the child, kept across jobs, has kept the backend's context for the next job)
 *   worker -> child   XC_RUN (run once more), XC_END (release, destroy, exit)
 *
 * This header must not be included outside exec/.
 */
#ifndef PAR_XPROTO_H
#define PAR_XPROTO_H

#include "exec.h"
#include <sys/types.h>

enum xphase {
    PH_START, PH_INIT, PH_KNOBS, PH_SUPPORTS, PH_PREPARE, PH_BIND, PH_RUN, PH_RELEASE, PH_DESTROY, PH_DESCRIBE,
    PH_DONE, PH_ALGO, PH_REQUANT, PH_COUNT
};

enum xmsg_type { XM_PHASE = 1, XM_READY, XM_RUN, XM_PROBE, XM_INPUT_WRITE, XM_END, XM_ALGO, XM_REQUANT, XM_DIAG,
                 XM_NOTE, XM_NODES, XM_MICRO, XM_TAP, XM_TYPE_END };
enum xcmd { XC_RUN = 'R', XC_END = 'E' };

#define PAR_DESCRIBE_LEN 512
#define XM_NODE_BATCH 32 /* per-node device times in one XM_NODES */

typedef struct par_xmsg {
    int32_t type;          /* enum xmsg_type */
    int32_t phase;         /* enum xphase */
    int32_t status;        /* the backend's par_status, as it returned it */
    int32_t index;         /* XM_RUN: run number (1-based); XM_DIAG: the run before it (0: prepare); knobs: knob
                            * index; supports, XM_ALGO, XM_REQUANT: node; input writes: input; XM_TAP: tap */
    int64_t offset;        /* XM_INPUT_WRITE: byte offset of the faulting address within the input; XM_NODES: how
                            * many of node_ms are set */
    double ms;             /* XM_READY: prepare time; XM_RUN: run time; XM_MICRO: the value */
    int32_t requant;       /* XM_PROBE; XM_REQUANT: the par_requant declared for node `index`, unchecked */
    int32_t requant_exact; /* XM_PROBE */
    int32_t algo;          /* XM_ALGO: the par_algo the backend declared for node `index`, unchecked */
    uint32_t arith_flags;  /* XM_PROBE: PAR_PROC_ARITH_FLAGS, as the backend returned it (validated by the worker) */
    int32_t arith;         /* XM_PROBE: PAR_PROC_ARITH's answer, else the table's arith (validated by the worker) */
    int32_t dev_measured;  /* XM_RUN: 1 when PAR_PROC_DEVICE_TIME measured the run (then dev_ms), else 0 */
    double dev_ms;         /* XM_RUN: the device's time of the run, as the backend returned it (checked) */
    int32_t keep;          /* XM_END: 1 when the child stays for the next job (PAR_PROC_REUSE), else 0 */
    double node_ms[XM_NODE_BATCH]; /* XM_NODES: device times of nodes index .. index + offset - 1 (-1: not timed) */
    char text[PAR_DESCRIBE_LEN > PAR_MSG_LEN ? PAR_DESCRIBE_LEN : PAR_MSG_LEN]; /* message, describe or
                                                                                 * diagnostic text */
} par_xmsg;

/* What the child needs: the instance, the graph (its own copy-on-write view after fork), the input and output
 * buffers (the sealed read-only input mapping and the shared output mapping), and its end of the socket. */
typedef struct par_xjob {
    const par_backend_inst *inst;
    const par_graph_desc *g;   /* NULL for a probe or a micro-benchmark */
    const char *micro;         /* a micro-benchmark's name (PAR_PROC_MICROBENCH), NULL for a probe or a run */
    const void *const *in;     /* n_inputs pointers into the read-only input mapping */
    void *const *out;          /* n_outputs pointers into the shared output mapping */
    int32_t n_taps;            /* the last n_taps of them are taps (par_exec_opts.n_taps) */
    const uint8_t *in_base;    /* the input mapping, for the fault handler */
    size_t in_len;
    const size_t *in_off;      /* offset of each input in the mapping */
    int32_t n_in;
    int sock;
    int isolated;              /* 1: a child process (fault handler installed); 0: a thread of the caller */
    /* A child kept across jobs (exec/server.c): the backend context it keeps, NULL before its first job (in: the one
     * to use instead of init and knobs; out: the one kept, NULL when destroyed). NULL: a child of one job. */
    void **kept_ctx;
} par_xjob;

/* Worker -> fork server (exec/server.c): a job, with its file descriptors in this order: the graph block memfd,
 * the output memfd, the child's end of the job socket, the output pipe's write end, and the input memfd when
 * in_len > 0. Server -> worker: PAR_SRV_STARTED with the child's pid (and its companion's in `code`, 0: none) as the
 * server sees them, and pidfds of both (SCM_RIGHTS; the worker's pids come from them), then PAR_SRV_ENDED with how it ended
 * (si_code, si_status of waitid), or PAR_SRV_FAILED with an errno. Once, before any job, PAR_SRV_READY when its warm
 * start has ended (par_exec_servers_ready waits for it; a worker skips it when nobody did). */
#define PAR_SRV_MAGIC 0x7061726au
/* Worker -> fork server, no descriptors, no reply: end the child kept across jobs (its job's verdict was neither
 * PASS nor UNSUPPORTED); the next job starts a fresh one. Sent before any later job, so the server acts on it first. */
#define PAR_SRV_MAGIC_DROP 0x70617244u
void par_exec_server_drop_fd(int srv_fd);
enum { PAR_SRV_STARTED = 1, PAR_SRV_ENDED = 2, PAR_SRV_FAILED = 3, PAR_SRV_READY = 4 };

typedef struct par_srv_req {
    uint32_t magic;
    uint32_t keep; /* set by the server for its child: 1 when the child may stay for another job */
    size_t blob_len, out_len, in_len;
} par_srv_req;

typedef struct par_srv_rep {
    int32_t kind, pid, code, status;
} par_srv_rep;

/* The fork server's companion (exec/companion.c, PAR_PROC_COMPANION): set up from the instance's knobs once,
 * started (or restarted) before each job, its pid reported to the worker with the child's (PAR_SRV_STARTED's
 * `code`), judged after each job (kept after a clean end only), stopped when the server ends. */
void par_comp_setup(const par_backend_inst *inst);
pid_t par_comp_ensure(void);
pid_t par_comp_pid(void);
void par_comp_after_job(int32_t *code, int32_t *status);
void par_comp_stop(void);

/* A quantized node: one with a qu8 or qs8 output (the nodes PAR_PROC_NODE_REQUANT is asked for). */
static inline int par_x_node_quantized(const par_graph_desc *g, int32_t node)
{
    if (node < 0 || node >= g->n_nodes) return 0;
    const par_node *n = &g->nodes[node];
    for (int32_t k = 0; k < n->n_outputs; k++) {
        int32_t v = n->outputs[k];
        if (v >= 0 && v < g->n_values && par_dtype_is_quant(g->values[v].dtype))
            return 1;
    }
    return 0;
}

/* Kill and reap every child of the calling thread (orphans adopted as subreaper included) until none remain but
 * `spare` and `spare2` (0: none; the fork server's companion and its kept backend child). */
void par_x_reap_all(pid_t spare, pid_t spare2);

/* The child's side of a job: runs the backend's life cycle, reporting over j->sock. Returns when done. */
void par_xchild_main(const par_xjob *j);
/* In a child process: install the handler that reports a write into the input mapping (SIGSEGV/SIGBUS). */
void par_xchild_install_fault_handler(const par_xjob *j);

#endif
