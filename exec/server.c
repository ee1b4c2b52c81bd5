/*
 * server.c - fork servers: one small process per (worker slot, backend instance), forked from the main process
 * after the backends are resolved and before any case is loaded or any record exists, so the backend children it
 * forks (one per job) start from an address space that holds the backend table and the harness's code, but no case
 * data, no records and no worker state. A job arrives over the server's socket with its buffers as file
 * descriptors (SCM_RIGHTS): the graph as a sealed memfd (exec/gblob.c), the inputs as a sealed memfd, the outputs
 * memfd, the job's socket to the worker and the write end of the output pipe. The server forks the child, tells
 * the worker its pid (the worker supervises it directly: socket, pidfd, /proc for its memory, kill on time-out),
 * waits for it, kills its process group and every other child it has (it is a child subreaper, so a backend's
 * setsid() daemon is its child by then), and tells the worker how the child ended.
 *
 * A backend may name a companion (PAR_PROC_COMPANION: a runtime's runner, docs/runners.md): the server keeps it
 * across jobs while they end cleanly, spares it when it reaps, and reports its pid with the child's
 * (exec/companion.c).
 *
 * A server runs in the sandbox (exec/sandbox.h): where the machine allows, it is the init of a PID namespace of its
 * own, with its own /proc and an unprivileged uid, so its children can name no process outside and cannot signal
 * it; the pids it reports mean nothing outside, so PAR_SRV_STARTED carries pidfds of the child and the companion.
 *
 * A server dies with the main process (PR_SET_PDEATHSIG and a getppid check) and ends when its worker closes the
 * socket. It ignores SIGINT (the main process decides what an interrupt does). This file must not judge anything.
 */
#include "xproto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "gblob.h"
#include "sandbox.h"

struct par_exec_server {
    pid_t pid;
    int fd;
    int ready; /* its PAR_SRV_READY read, or its end */
    const par_backend_inst *inst;
    char cg[600]; /* its job cgroup (exec/sandbox.h), "" when none */
    int64_t cg_limit; /* the hard limit last set there, 0: none yet */
    int lost;         /* abandoned or gone (par_exec_server_lose): its jobs are forked by the caller */
};

/* This process's ends of the servers started so far: a new server closes them, so that no server (and no backend
 * child) holds a way to talk to another worker's server. */
#define MAX_SERVERS 4096
static int server_fds[MAX_SERVERS];
static int n_server_fds;
static int n_cgroups; /* the servers started here with a job cgroup, not stopped yet */

static int recv_job(int fd, par_srv_req *req, int *fds, int max_fds, int *n_fds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * 8)];
    struct iovec iov = {.iov_base = req, .iov_len = sizeof *req};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t n;
    while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    *n_fds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + sizeof(int) * (size_t)i, sizeof f);
            if (*n_fds < max_fds) fds[(*n_fds)++] = f;
            else close(f);
        }
    }
    return n == (ssize_t)sizeof *req ? 1 : (n == 0 ? 0 : -1);
}

/* A reply, with up to two pidfds (the child's, the companion's; -1: none): in a PID namespace of its own the
 * server's pids mean nothing to its worker, a pidfd does. */
static void reply_fds(int fd, int32_t kind, int32_t pid, int32_t code, int32_t status, int pfd, int cfd)
{
    par_srv_rep r = {.kind = kind, .pid = pid, .code = code, .status = status};
    int fds[2], nf = 0;
    if (pfd >= 0) fds[nf++] = pfd;
    if (pfd >= 0 && cfd >= 0) fds[nf++] = cfd;
    char cbuf[CMSG_SPACE(sizeof fds)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &r, .iov_len = sizeof r};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nf > 0) {
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nf);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nf);
    }
    ssize_t n;
    while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
}

static void reply(int fd, int32_t kind, int32_t pid, int32_t code, int32_t status)
{
    reply_fds(fd, kind, pid, code, status, -1, -1);
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    return pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
#else
    (void)pid;
    return -1;
#endif
}

/* One job in the backend child: map the buffers, rebuild the graph view, run the life cycle (with the context kept
 * from the last job when kctx holds one), then unmap everything of the job and point stdout and stderr at
 * /dev/null. Returns 1 when the context was kept for the next job (*kctx), 0 when destroyed. Exits on a damaged job. */
static int run_job(const par_backend_inst *inst, const par_srv_req *req, const int *fds, void **kctx)
{
    int blob_fd = fds[0], out_fd = fds[1], sock = fds[2], pipe_w = fds[3], in_fd = req->in_len ? fds[4] : -1;
    if (dup2(pipe_w, STDOUT_FILENO) < 0 || dup2(pipe_w, STDERR_FILENO) < 0) _exit(126);
    uint8_t *blob = mmap(NULL, req->blob_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, blob_fd, 0);
    uint8_t *out = mmap(NULL, req->out_len, PROT_READ | PROT_WRITE, MAP_SHARED, out_fd, 0);
    uint8_t *in = req->in_len ? mmap(NULL, req->in_len, PROT_READ, MAP_SHARED, in_fd, 0) : NULL;
    if (blob == MAP_FAILED || out == MAP_FAILED || in == MAP_FAILED) _exit(125);
    close(blob_fd);
    close(out_fd);
    close(pipe_w);
    if (in_fd >= 0) close(in_fd);
    par_graph_desc *g = par_gblob_fix(blob, req->blob_len);
    if (!g) _exit(124);
    const par_gblob_hdr *h = (const par_gblob_hdr *)blob;
    const size_t *in_off = (const size_t *)(blob + h->in_off), *out_off = (const size_t *)(blob + h->out_off);
    int32_t n_in = h->n_in, n_out = h->n_out;
    const void **in_ptr = calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *in_ptr);
    void **out_ptr = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *out_ptr);
    if (!in_ptr || !out_ptr) _exit(123);
    for (int32_t i = 0; i < n_in; i++) {
        if (!in || in_off[i] >= req->in_len) _exit(124);
        in_ptr[i] = in + in_off[i];
    }
    for (int32_t k = 0; k < n_out; k++) {
        if (out_off[k] >= req->out_len) _exit(124);
        out_ptr[k] = out + out_off[k];
    }
    par_xjob xj = {.inst = inst, .g = g, .in = in_ptr, .out = out_ptr, .in_base = in, .in_len = req->in_len,
                   .in_off = in_off, .n_in = n_in, .sock = sock, .isolated = 1, .kept_ctx = req->keep ? kctx : NULL,
                   .n_taps = h->n_taps >= 0 && h->n_taps < n_out ? h->n_taps : 0};
    par_xchild_install_fault_handler(&xj);
    par_xchild_main(&xj);
    fflush(stdout);
    fflush(stderr);
    int kept = req->keep && *kctx;
    if (!kept) return 0;
    /* nothing of this job stays: its socket, its output pipe, its mappings */
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, STDOUT_FILENO) < 0 || dup2(devnull, STDERR_FILENO) < 0) _exit(126);
    close(devnull);
    close(sock);
    free(in_ptr);
    free(out_ptr);
    munmap(blob, req->blob_len);
    munmap(out, req->out_len);
    if (in) munmap(in, req->in_len);
    return 1;
}

/* The backend child: its first job, then, while the context is kept, 'I' on ctl (idle: the job is over and
 * everything of it unmapped) and the next job from ctl, until the server ends it (ctl closed or a kill). */
static void child_main(const par_backend_inst *inst, par_srv_req req, int *fds, int ctl)
{
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC); /* nothing of the harness's stdin */
    if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0) _exit(126);
    close(devnull);
    void *kctx = NULL;
    while (run_job(inst, &req, fds, &kctx)) {
        char c = 'I';
        if (send(ctl, &c, 1, MSG_NOSIGNAL) != 1) break;
        int n = 0;
        if (recv_job(ctl, &req, fds, 5, &n) != 1 || req.magic != PAR_SRV_MAGIC || n != (req.in_len ? 5 : 4)) break;
    }
    _exit(0);
}

/* Warm start: init and destroy the backend once in the server (the probe has already run them in a child), so
 * that the one-time, process-wide setup of its libraries (CPU detection such as cpuinfo_initialize, XNNPACK's
 * xnn_initialize) is inherited by every job's child instead of being redone per job: on small cases that setup
 * costs more than the case. Built-in backends create no thread before prepare, so the server stays
 * single-threaded and its forks are sound. Should it crash, the server dies and its worker reports each later job
 * of this backend as ERROR ("the fork server ... is gone"); the run goes on. */
static void warm_start(const par_backend_inst *inst)
{
    const par_backend *be = inst->be;
    void *ctx = NULL;
    par_msg m;
    m.text[0] = '\0';
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC), out = dup(STDOUT_FILENO), err = dup(STDERR_FILENO);
    if (devnull >= 0) { /* its chatter is not shown */
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
    if (be && be->init && be->init(&ctx, &m) == PAR_OK && be->destroy) be->destroy(ctx);
    fflush(stdout);
    fflush(stderr);
    if (out >= 0) dup2(out, STDOUT_FILENO), close(out);
    if (err >= 0) dup2(err, STDERR_FILENO), close(err);
}

/* The child kept across jobs (PAR_PROC_REUSE): its pid (0: none), its control socket, the jobs it has run. */
static struct {
    pid_t pid;
    int ctl;
    int jobs;
    int cap;    /* PARITY_KEEP_CHILD: jobs per child at most; 0: a fresh child for every job */
} kept = {.ctl = -1};

static void kept_end(void)
{
    if (kept.pid > 0) {
        kill(-kept.pid, SIGKILL);
        kill(kept.pid, SIGKILL);
        int st;
        while (waitpid(kept.pid, &st, 0) < 0 && errno == EINTR) {}
    }
    if (kept.ctl >= 0) close(kept.ctl);
    kept.pid = 0, kept.ctl = -1, kept.jobs = 0;
}

static int keep_cap(void)
{
    const char *e = getenv("PARITY_KEEP_CHILD");
    if (!e || !*e) return 200;
    char *end;
    long v = strtol(e, &end, 10);
    return *end || v < 0 ? 200 : v > 1000000 ? 1000000 : (int)v;
}

/* Hand the job to the kept child: 1, or 0 when it is gone (then ended and reaped). */
static int kept_send(par_srv_req *req, const int *fds, int n)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)kept.pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == kept.pid) {
        kept_end();
        return 0;
    }
    char cbuf[CMSG_SPACE(sizeof(int) * 5)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = req, .iov_len = sizeof *req};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
    ssize_t w;
    while ((w = sendmsg(kept.ctl, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    if (w != (ssize_t)sizeof *req) {
        kept_end();
        return 0;
    }
    return 1;
}

static void server_main(const par_backend_inst *inst, int fd)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    par_comp_setup(inst);
    par_comp_ensure(); /* before the warm start, which may talk to it */
    kept.cap = par_comp_pid() > 0 ? 0 : keep_cap(); /* a companion's state and a kept context's are not vouched together */
    par_msg m;
    if (par_plugin_enter(inst->be, &m) == PAR_OK) warm_start(inst); /* else each job's child says why */
    reply(fd, PAR_SRV_READY, 0, 0, 0);
    for (;;) {
        par_srv_req req;
        int fds[8], n = 0;
        int r = recv_job(fd, &req, fds, 8, &n);
        if (r == 0) { /* the worker is done */
            kept_end();
            par_comp_stop();
            _exit(0);
        }
        if (r > 0 && req.magic == PAR_SRV_MAGIC_DROP) { /* no reply */
            for (int i = 0; i < n; i++) close(fds[i]);
            kept_end();
            continue;
        }
        int need = req.in_len ? 5 : 4;
        if (r < 0 || req.magic != PAR_SRV_MAGIC || n != need) {
            for (int i = 0; i < n; i++) close(fds[i]);
            reply(fd, PAR_SRV_FAILED, 0, 0, EPROTO);
            continue;
        }
        pid_t server = getpid(), comp = par_comp_ensure();
        req.keep = kept.jobs + 1 < kept.cap; /* may it stay after this job? (at most kept.cap jobs a child) */
        pid_t pid = kept.pid > 0 && kept_send(&req, fds, n) ? kept.pid : 0;
        if (pid == 0) {
            int cs[2] = {-1, -1};
            req.keep = 1 < kept.cap;
            if (req.keep && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) != 0) req.keep = 0;
            pid = fork();
            if (pid == 0) {
                close(fd);
                if (cs[0] >= 0) close(cs[0]);
                setpgid(0, 0); /* own process group: the end of the job kills whatever the backend forked */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != server) _exit(127);
                par_x_reset_signals();
                child_main(inst, req, fds, cs[1]);
            }
            if (cs[1] >= 0) close(cs[1]);
            if (pid > 0) {
                setpgid(pid, pid);
                kept.pid = req.keep ? pid : 0, kept.ctl = req.keep ? cs[0] : -1, kept.jobs = 0;
                if (!req.keep && cs[0] >= 0) close(cs[0]);
            } else if (cs[0] >= 0) {
                close(cs[0]);
            }
        }
        int e = errno;
        for (int i = 0; i < n; i++) close(fds[i]);
        if (pid < 0) {
            reply(fd, PAR_SRV_FAILED, 0, 0, e);
            continue;
        }
        kept.jobs += pid == kept.pid;
        int pfd = pidfd_of(pid), cfd = pidfd_of(comp);
        reply_fds(fd, PAR_SRV_STARTED, pid, (int32_t)comp, 0, pfd, cfd);
        if (cfd >= 0) close(cfd);
        /* Wait for the child's end, or, for a kept child, its 'I' (the job is over, the child stays); should the
         * worker go away meanwhile (its end of the socket hangs up), end the child: nobody supervises it any more. A
         * PAR_SRV_MAGIC_DROP from the worker ends a kept child: its 'I' no longer counts. */
        int idle = 0, dropped = 0;
        for (int alive = pfd >= 0; alive && !idle;) {
            int kc = pid == kept.pid ? kept.ctl : -1;
            struct pollfd p[3] = {{.fd = pfd, .events = POLLIN}, {.fd = fd, .events = POLLIN | POLLRDHUP},
                                  {.fd = kc, .events = POLLIN}};
            int pr = poll(p, 3, -1);
            if (pr < 0 && errno == EINTR) continue;
            if (pr < 0 || (p[0].revents & POLLIN)) break;
            if (p[1].revents & POLLIN) {
                par_srv_req d;
                int dfds[8], dn = 0;
                int dr = recv_job(fd, &d, dfds, 8, &dn);
                for (int i = 0; i < dn; i++) close(dfds[i]);
                if (dr > 0 && d.magic == PAR_SRV_MAGIC_DROP) {
                    dropped = 1;
                    kill(-pid, SIGKILL);
                    kill(pid, SIGKILL);
                    continue;
                }
                if (dr > 0) continue; /* nothing else is sent during a job */
            }
            if (p[1].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                alive = 0;
                continue;
            }
            if (kc >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
                char c = 0;
                ssize_t k = recv(kc, &c, 1, MSG_DONTWAIT);
                if (k == 1 && c == 'I' && !dropped) idle = 1;
                else if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                    /* its control socket shut down (the backend's doing): no longer kept; its job goes on as a fresh
                     * child's would, and ends with its death */
                    close(kept.ctl);
                    kept.pid = 0, kept.ctl = -1, kept.jobs = 0;
                }
            }
        }
        if (pfd >= 0) close(pfd);
        int32_t code, status;
        if (idle) {
            code = CLD_EXITED, status = 0;
        } else {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR) {}
            kill(-pid, SIGKILL); /* the zombie still holds the group id */
            int st;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
            code = si.si_code, status = si.si_status;
            if (pid == kept.pid) {
                if (kept.ctl >= 0) close(kept.ctl);
                kept.pid = 0, kept.ctl = -1, kept.jobs = 0;
            }
        }
        par_comp_after_job(&code, &status);
        par_x_reap_all(par_comp_pid(), kept.pid);
        reply(fd, PAR_SRV_ENDED, pid, code, status);
    }
}

par_exec_server *par_exec_server_start(const par_backend_inst *inst, par_msg *msg)
{
    par_exec_server *s = calloc(1, sizeof *s);
    if (!s) {
        par_msgf(msg, PAR_ERROR, "fork server: out of memory");
        return NULL;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        par_msgf(msg, PAR_ERROR, "fork server for '%s': cannot create a socket: %s", inst->label, strerror(errno));
        free(s);
        return NULL;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    /* the init of a PID namespace of its own, as a uid of its own (uid 0 without capabilities when only root may
     * run its companion) */
    int keep_root = !par_comp_open_to_all(inst);
    pid_t pid = par_sandbox_fork(inst->label, keep_root);
    if (pid < 0) {
        par_msgf(msg, PAR_ERROR, "fork server for '%s': cannot fork: %s", inst->label, strerror(errno));
        close(sv[0]);
        close(sv[1]);
        free(s);
        return NULL;
    }
    if (pid == 0) {
        close(sv[0]);
        for (int i = 0; i < n_server_fds; i++)
            if (server_fds[i] >= 0) close(server_fds[i]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with the main process */
        if (getppid() != parent && getpid() != 1) _exit(127); /* (from a PID namespace the parent is 0) */
        server_main(inst, sv[1]);
        _exit(0);
    }
    close(sv[1]);
    s->pid = pid;
    s->fd = sv[0];
    snprintf(s->cg, sizeof s->cg, "%s", par_sandbox_last_cgroup());
    n_cgroups += s->cg[0] != 0;
    if (n_server_fds < MAX_SERVERS) server_fds[n_server_fds++] = sv[0];
    s->inst = inst;
    return s;
}

/* Until the reply is there or t_end passes: 1, or 0 when t_end passed. */
static int readable_by(int fd, double t_end)
{
    for (;;) {
        double ms = (t_end - par_now_s()) * 1000.0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms <= 0 ? 0 : (int)ms + 1);
        if (r < 0 && errno == EINTR) continue;
        return r != 0;
    }
}

par_status par_exec_servers_ready(par_exec_server **sv, int32_t n, double timeout_s, par_msg *msg)
{
    double wait_s = timeout_s > 0 && timeout_s < 3600 ? timeout_s : 30.0, t_end = par_now_s() + wait_s;
    for (int32_t k = 0; k < n; k++) { /* they start at once: the whole wait is the slowest one's */
        par_exec_server *s = sv[k];
        if (!s || s->fd < 0 || s->ready) continue;
        const par_backend_inst *in = s->inst;
        if (!readable_by(s->fd, t_end))
            return par_msgf(msg, PAR_ERROR, "backend '%s'%s%s%s: its fork server did not finish starting within %g s "
                            "(the plugin's constructor, its parity_backend_entry or the backend's init hung)",
                            in->label, in->plugin_path[0] ? " (plugin " : "", in->plugin_path,
                            in->plugin_path[0] ? ")" : "", wait_s);
        par_srv_rep rep;
        while (recv(s->fd, &rep, sizeof rep, MSG_DONTWAIT) < 0 && errno == EINTR) {}
        s->ready = 1; /* PAR_SRV_READY, or its end (a crash in its warm start: each of its jobs says so) */
    }
    return PAR_OK;
}

int par_exec_server_fd(const par_exec_server *s)
{
    return s ? s->fd : -1;
}

const char *par_exec_server_cgroup(const par_exec_server *s)
{
    return s ? s->cg : "";
}

void par_exec_server_limit(par_exec_server *s, int64_t bytes)
{
    if (s && s->cg[0] && bytes != s->cg_limit && par_sandbox_cgroup_limit(s->cg, bytes) == 0) s->cg_limit = bytes;
}

static void unlist(int fd)
{
    for (int i = 0; i < n_server_fds; i++)
        if (server_fds[i] == fd) server_fds[i] = -1;
}

void par_exec_server_drop(par_exec_server *s)
{
    if (s && !s->lost) par_exec_server_drop_fd(s->fd);
}

void par_exec_server_lose(par_exec_server *s)
{
    if (s) s->lost = 1;
}

int par_exec_server_lost(const par_exec_server *s)
{
    return s && s->lost;
}

void par_exec_server_forget(par_exec_server *s)
{
    if (!s) return;
    unlist(s->fd);
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

void par_exec_server_stop(par_exec_server *s)
{
    if (!s) return;
    unlist(s->fd);
    if (s->fd >= 0) close(s->fd); /* end of file: the server exits */
    kill(s->pid, SIGKILL);           /* at once, even in a job: its child dies with it (PR_SET_PDEATHSIG) */
    int st;
    while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {}
    par_sandbox_cgroup_remove(s->cg);
    if (s->cg[0] && --n_cgroups == 0) par_sandbox_cgroup_end(); /* the last one: this run's folder too */
    free(s);
}
