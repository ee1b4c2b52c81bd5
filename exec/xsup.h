/*
 * xsup.h - supervision of one job's backend child, shared by exec.c (probe, run and the checks between runs) and
 * xsup.c (start, wait, end). Private to exec/.
 */
#ifndef PAR_XSUP_H
#define PAR_XSUP_H

#include "xproto.h"
#include "core/clock.h"

#include <pthread.h>
#include <sys/types.h>

#define RSS_POLL_S 0.010
#define SRV_GRACE_S 10.0 /* how long a fork server may take to say how a killed child ended (a loaded machine
                            * reaping a large child took over 2 s) */

typedef struct par_xsup {
    const par_backend_inst *inst;
    const par_graph_desc *g;
    int isolated;
    pid_t pid;
    uid_t uid;              /* a directly forked child's sandbox uid (swept after the job), or 0 */
    pid_t companion;             /* the fork server's companion (docs/runners.md), whose memory counts with the child's */
    int pidfd, sock, outfd;
    int thread_sock;             /* the thread's end (in-process jobs) */
    /* through a fork server: its socket, the job's memfds, and how the server says the child ended */
    int srv_fd, blob_fd, out_fd, in_fd;
    size_t blob_len, out_len, in_len;
    int srv_ended;
    int srv_lost;                /* the server was abandoned or found gone: exec stops sending it jobs */
    int32_t srv_code, srv_status;
    pthread_t thread;
    int thread_started;
    double deadline, timeout_s;
    int64_t mem_limit;
    const char *cg;              /* the fork server's job cgroup (exec/sandbox.h): the memory counted; NULL or "": RSS */
    double next_rss;
    int32_t phase, run;          /* where the child is, as far as the worker knows */
    int decided;                 /* 1 once a verdict other than PASS is fixed */
    int keep;                    /* the child's XM_END said it stays for the next job (a fork server's child) */
    par_verdict v;
    char reason[PAR_REASON_LEN];
    /* The backend's diagnostics (XM_DIAG, PAR_PROC_DIAGNOSTICS): how many, the first one's text (cleaned: one line,
     * valid UTF-8) and where it came (0: after prepare, k: after run k). Recorded, never decided here. */
    int32_t n_diag, diag_run;
    char diag[PAR_MSG_LEN];
    char note[PAR_MSG_LEN];      /* XM_NOTE: the backend's note on how it prepared the graph (the first; "" when none) */
    char ring[PAR_OUTPUT_TAIL];  /* the output's last bytes, circular */
    int64_t out_total;
} par_xsup;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void par_xfmt(char *dst, size_t len, const char *f, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void par_xdecide(par_xsup *s, par_verdict v, const char *f, ...);  /* the first problem found is the verdict */
const char *par_xwhere(const par_xsup *s, char *buf, size_t len); /* "run 3" or "prepare" */
const char *par_xmsg_text(const par_xmsg *m, char *buf, size_t len);
void par_xoutput_tail(const par_xsup *s, char *dst, size_t cap);
/* Start the child (fork, fork server or thread) on xj: 0, or -1 with the verdict decided. */
int par_xstart(par_xsup *s, par_xjob *xj);
/* The next message for the caller: 1, or 0 when the job is over (verdict decided). */
int par_xawait(par_xsup *s, par_xmsg *m);
void par_xsend_cmd(par_xsup *s, char c);
/* End the job: kill the child and everything it left (or let the thread finish). */
void par_xfinish(par_xsup *s);
/* The verdict of an XM_END that ends the job before its runs (or a failed probe). */
void par_xdecide_end(par_xsup *s, const par_xmsg *m);

#endif
