/*
 * xsup.c - supervision of one job's backend child (exec/xsup.h): starts it (a fork of the caller, a fork of the
 * job's fork server, or a thread with --no-isolate), waits for its messages with poll() on the job socket, a pidfd
 * of the child and its output pipe (draining the output into a bounded tail meanwhile), polls its resident memory
 * from /proc every 10 ms when a limit is set, and ends it: kills its process group, then every child the caller
 * has (the caller is a child subreaper), until none remain. Every message is checked before use (xproto.h).
 *
 * This file must not judge outputs; it decides only how a child ended (CRASH, TIMEOUT, memory limit, a write into
 * an input, a malformed report). The backend's diagnostics (XM_DIAG) it only records.
 */
#include "xsup.h"
#include "sandbox.h"
#include "core/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const phase_names[PH_COUNT] = {"start", "init", "knobs", "supports", "prepare", "bind", "run",
                                                  "release", "destroy", "describe", "done",
                                                  "node_algo", "node_requant"};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void par_xfmt(char *dst, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(dst, len, f, ap);
    va_end(ap);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void par_xdecide(par_xsup *s, par_verdict v, const char *f, ...)
{
    if (s->decided) return; /* the first problem found is the verdict */
    va_list ap;
    va_start(ap, f);
    vsnprintf(s->reason, sizeof s->reason, f, ap);
    va_end(ap);
    s->v = v;
    s->decided = 1;
}

/* "run 3" or "prepare": where the child was. */
const char *par_xwhere(const par_xsup *s, char *buf, size_t len)
{
    if (s->phase == PH_RUN && s->run > 0) par_xfmt(buf, len, "run %d", (int)s->run);
    else par_xfmt(buf, len, "%s", (s->phase >= 0 && s->phase < PH_COUNT) ? phase_names[s->phase] : "start");
    return buf;
}

/* A backend's message, cleaned (terminated, valid UTF-8, one line), never empty. */
const char *par_xmsg_text(const par_xmsg *m, char *buf, size_t len)
{
    par_text_clean(buf, len, m->text, sizeof m->text, 1);
    if (!buf[0]) par_xfmt(buf, len, "%s", "(no message)");
    return buf;
}

static void drain_output(par_xsup *s)
{
    if (s->outfd < 0) return;
    char buf[65536];
    for (;;) {
        ssize_t n = read(s->outfd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; /* EAGAIN (non-blocking), end of file or an error */
        const size_t cap = sizeof s->ring - 1;
        for (ssize_t i = n > (ssize_t)cap ? n - (ssize_t)cap : 0; i < n; i++)
            s->ring[(size_t)((s->out_total + i) % (int64_t)cap)] = buf[i];
        s->out_total += n;
    }
}

/* The kept tail, in order, cleaned into dst. A NUL byte the backend wrote becomes 0xFF, which the cleaning makes
 * U+FFFD as any byte that is not text, so that it cuts nothing that follows it. */
void par_xoutput_tail(const par_xsup *s, char *dst, size_t cap)
{
    const size_t rcap = sizeof s->ring - 1;
    char lin[PAR_OUTPUT_TAIL];
    size_t n = s->out_total < (int64_t)rcap ? (size_t)s->out_total : rcap;
    size_t start = (size_t)((s->out_total - (int64_t)n) % (int64_t)rcap);
    for (size_t i = 0; i < n; i++) lin[i] = s->ring[(start + i) % rcap] ? s->ring[(start + i) % rcap] : (char)0xFF;
    par_text_clean(dst, cap, lin, n, 0);
}

static int64_t child_rss(pid_t pid)
{
    char path[64], buf[128];
    par_xfmt(path, sizeof path, "/proc/%d/statm", (int)pid);
    if (par_sandbox_read_small(path, buf, sizeof buf) <= 0) return -1;
    long long size = 0, res = 0;
    if (sscanf(buf, "%lld %lld", &size, &res) != 2) return -1;
    return (int64_t)res * (int64_t)sysconf(_SC_PAGESIZE);
}

/* SIGKILL to the job's child: through its pidfd where there is one (a pid number may be stale, or 0), never to a
 * pid <= 0 (a process group or everything). */
static void kill_child(const par_xsup *s)
{
#ifdef SYS_pidfd_send_signal
    if (s->pidfd >= 0 && syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0) == 0) return;
#endif
    if (s->pid > 0) kill(s->pid, SIGKILL);
}

static void fmt_bytes(char *buf, size_t len, int64_t b)
{
    if (b >= ((int64_t)1 << 30) && b % ((int64_t)1 << 30) == 0) par_xfmt(buf, len, "%lld GiB", (long long)(b >> 30));
    else par_xfmt(buf, len, "%lld MiB", (long long)(b >> 20));
}

/* Wait until fd is readable or par_now_s() passes t_end (< 0: no end): 1 readable, 0 timed out. */
static int wait_fd(int fd, double t_end)
{
    for (;;) {
        int ms = -1;
        if (t_end >= 0) {
            double d = (t_end - par_now_s()) * 1000.0 + 1.0;
            ms = d < 0 ? 0 : d > 2e9 ? 2000000000 : (int)d;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR) continue;
        return r != 0;
    }
}

/* The fork server gave no answer in time (stopped, or hung in its backend's warm start): the worker stops using
 * it, so that a late answer cannot be read as another job's; the server sees the hang-up (main kills it at the end
 * of the run). The job is an ERROR naming it; exec forks the later jobs of this worker from the worker itself. */
static void srv_abandon(par_xsup *s)
{
    shutdown(s->srv_fd, SHUT_RDWR);
    s->srv_ended = 1;
    s->srv_lost = 1;
}

/* Read the fork server's replies until the one saying the child ended, until t_end (< 0: no end): 1 when it came,
 * 0 when the server is gone, -1 when t_end passed. */
static int srv_wait_end(par_xsup *s, double t_end)
{
    while (!s->srv_ended) {
        par_srv_rep rep;
        ssize_t n;
        if (!wait_fd(s->srv_fd, t_end)) return -1;
        while ((n = recv(s->srv_fd, &rep, sizeof rep, 0)) < 0 && errno == EINTR) {}
        if (n != (ssize_t)sizeof rep) return 0;
        if (rep.kind == PAR_SRV_ENDED) {
            s->srv_ended = 1;
            s->srv_code = rep.code;
            s->srv_status = rep.status;
        }
    }
    return 1;
}

/* After the child was killed: the server's answer within SRV_GRACE_S, else the server is abandoned and the job an
 * ERROR naming it. 1 when it answered. */
static int srv_wait_after_kill(par_xsup *s)
{
    int r = srv_wait_end(s, par_now_s() + SRV_GRACE_S);
    if (r >= 0) return r;
    par_xdecide(s, PAR_V_ERROR, "the fork server of '%s' did not answer within %g s after its child ended (stopped?)",
                s->inst->label, SRV_GRACE_S);
    srv_abandon(s);
    return 0;
}

/* The child is gone (or going): reap it and decide how it ended, unless something was decided already. */
static void child_gone(par_xsup *s)
{
    char ph[32];
    if (!s->isolated) {
        par_xdecide(s, PAR_V_ERROR, "the backend thread ended during %s without a result",
                    par_xwhere(s, ph, sizeof ph));
        return;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = 0;
    if (s->srv_fd >= 0) {
        /* the fork server reaps its child and says how it ended; a child that closed its socket but lives on is
         * killed at the job's deadline */
        int w = srv_wait_end(s, s->deadline);
        if (w < 0) {
            par_xdecide(s, PAR_V_TIMEOUT, "no result after %g s (the backend child closed its job socket during %s)",
                        s->timeout_s, par_xwhere(s, ph, sizeof ph));
            kill_child(s);
            srv_wait_after_kill(s);
            return;
        }
        if (w == 0) {
            par_xdecide(s, PAR_V_ERROR, "the fork server of '%s' is gone", s->inst->label);
            s->srv_lost = 1;
            return;
        }
        si.si_pid = s->pid;
        si.si_code = s->srv_code;
        si.si_status = s->srv_status;
    } else {
        if (s->pidfd >= 0 && !wait_fd(s->pidfd, s->deadline)) { /* its socket closed, it lives on: its deadline */
            par_xdecide(s, PAR_V_TIMEOUT, "no result after %g s (the backend child closed its job socket during %s)",
                        s->timeout_s, par_xwhere(s, ph, sizeof ph));
            kill_child(s);
            return;
        }
        /* Wait without reaping: the zombie keeps the process group id from being reused until par_xfinish() has
         * killed the group. */
        while ((r = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOWAIT)) != 0 && errno == EINTR) {}
    }
    if (r != 0 || si.si_pid != s->pid) {
        par_xdecide(s, PAR_V_ERROR, "cannot wait for the backend child: %s", strerror(errno));
    } else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
        int sig = si.si_status;
        const char *sn = strsignal(sig);
        par_xdecide(s, PAR_V_CRASH, "killed by signal %d (%s) during %s", sig, sn ? sn : "unknown signal",
                    par_xwhere(s, ph, sizeof ph));
    } else if (si.si_status != 0) {
        par_xdecide(s, PAR_V_CRASH, "exited with status %d during %s", si.si_status, par_xwhere(s, ph, sizeof ph));
    } else {
        par_xdecide(s, PAR_V_CRASH, "exited with status 0 during %s, before reporting a result",
                    par_xwhere(s, ph, sizeof ph));
    }
}

/* Handle one message that arrived; returns 1 when it is for the caller (not a phase note), 0 when handled here, -1
 * when the job is over (decided). */
static int take(par_xsup *s, par_xmsg *m)
{
    if (m->type <= 0 || m->type >= XM_TYPE_END || m->phase < 0 || m->phase >= PH_COUNT) {
        par_xdecide(s, PAR_V_CRASH, "the backend child sent a malformed report (type %d, phase %d)", (int)m->type,
               (int)m->phase);
        return -1;
    }
    if (m->type == XM_PHASE) {
        s->phase = m->phase;
        return 0;
    }
    if (m->type == XM_END) s->keep = m->keep == 1 && s->srv_fd >= 0; /* only a fork server's child is kept */
    if (m->type == XM_NOTE) { /* kept for the record as it is; it decides nothing */
        if (!s->note[0]) par_xmsg_text(m, s->note, sizeof s->note);
        return 0;
    }
    if (m->type == XM_DIAG) { /* kept for the judge, which makes the verdict of it (runner/judge.c) */
        if (s->n_diag == 0) {
            s->diag_run = m->index >= 0 ? m->index : 0;
            par_xmsg_text(m, s->diag, sizeof s->diag);
        }
        if (s->n_diag < INT32_MAX) s->n_diag++;
        return 0;
    }
    if (m->type == XM_INPUT_WRITE) {
        int32_t k = m->index;
        char ph[32];
        if (!s->g || k < 0 || k >= s->g->n_inputs || m->offset < 0) {
            par_xdecide(s, PAR_V_FAIL, "backend wrote into an input (during %s)", par_xwhere(s, ph, sizeof ph));
        } else {
            size_t esz = par_dtype_size(s->g->values[s->g->inputs[k]].dtype);
            par_xdecide(s, PAR_V_FAIL, "backend wrote into input %d (element %lld first, during %s)", (int)k,
                   (long long)((size_t)m->offset / (esz ? esz : 1)), par_xwhere(s, ph, sizeof ph));
        }
        return -1;
    }
    return 1;
}

/* Wait for the next message for the caller. Returns 1 with *m, or 0 when the job is over (verdict decided:
 * time-out, crash, memory limit, a write into an input). */
int par_xawait(par_xsup *s, par_xmsg *m)
{
    for (;;) {
        ssize_t n;
        while ((n = recv(s->sock, m, sizeof *m, MSG_DONTWAIT)) < 0 && errno == EINTR) {}
        if (n == (ssize_t)sizeof *m) {
            int r = take(s, m);
            if (r != 0) return r > 0;
            continue;
        }
        if (n >= 0) { /* end of file (the child closed its end or died), or a short message */
            if (n > 0) par_xdecide(s, PAR_V_CRASH, "the backend child sent a malformed report (%zd bytes)", n);
            drain_output(s);
            child_gone(s);
            return 0;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            par_xdecide(s, PAR_V_ERROR, "cannot read the backend child's report: %s", strerror(errno));
            return 0;
        }
        /* nothing yet: wait */
        double t = par_now_s();
        double wake = s->deadline;
        if (s->mem_limit > 0 && (wake < 0 || s->next_rss < wake)) wake = s->next_rss;
        if (s->isolated && s->pidfd < 0 && (wake < 0 || t + 0.02 < wake)) wake = t + 0.02; /* no pidfd: poll */
        int ms = -1;
        if (wake >= 0) {
            double d = (wake - t) * 1000.0 + 1.0;
            ms = d < 0 ? 0 : d > 2e9 ? 2000000000 : (int)d;
        }
        struct pollfd p[3] = {{.fd = s->sock, .events = POLLIN}, {.fd = s->pidfd, .events = POLLIN},
                              {.fd = s->outfd, .events = POLLIN}};
        int r = poll(p, 3, ms);
        if (r < 0 && errno != EINTR) {
            par_xdecide(s, PAR_V_ERROR, "cannot wait for the backend child: %s", strerror(errno));
            return 0;
        }
        if (r > 0 && (p[2].revents & (POLLIN | POLLHUP))) {
            drain_output(s);
            if ((p[2].revents & POLLHUP) && s->outfd >= 0) {
                close(s->outfd);
                s->outfd = -1;
            }
        }
        if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue; /* read it above */
        int dead = r > 0 && (p[1].revents & POLLIN);
        if (s->isolated && s->pidfd < 0) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            dead = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == s->pid;
        }
        if (dead) {
            /* The child is gone but a process it forked may hold the socket open: read what it sent, then stop. */
            while ((n = recv(s->sock, m, sizeof *m, MSG_DONTWAIT)) == (ssize_t)sizeof *m) {
                int k = take(s, m);
                if (k != 0) return k > 0;
            }
            drain_output(s);
            child_gone(s);
            return 0;
        }
        t = par_now_s();
        if (s->mem_limit > 0 && t >= s->next_rss) {
            s->next_rss = t + RSS_POLL_S;
            int64_t cg = s->cg && s->cg[0] ? par_sandbox_cgroup_usage(s->cg) : -1;
            if (cg > s->mem_limit) {
                char lim[32], ph[32];
                fmt_bytes(lim, sizeof lim, s->mem_limit);
                kill_child(s);
                par_xdecide(s, PAR_V_CRASH, "out of memory: over the memory limit of %s (the job's cgroup: its "
                            "processes, their descendants and memfds) in phase %s", lim, par_xwhere(s, ph, sizeof ph));
                return 0;
            }
            int64_t rss = child_rss(s->pid), crss = s->companion > 0 ? child_rss(s->companion) : -1;
            if (crss > 0) rss += crss;
            if (rss > s->mem_limit) {
                char lim[32], ph[32];
                fmt_bytes(lim, sizeof lim, s->mem_limit);
                kill_child(s);
                par_xdecide(s, PAR_V_CRASH, "out of memory (RSS > %s%s) in phase %s", lim,
                            crss > 0 ? ", its companion process's included" : "", par_xwhere(s, ph, sizeof ph));
                return 0;
            }
        }
        if (s->deadline >= 0 && t >= s->deadline) {
            char ph[32];
            par_xdecide(s, PAR_V_TIMEOUT, "no result after %g s (during %s)", s->timeout_s,
                        par_xwhere(s, ph, sizeof ph));
            return 0;
        }
    }
}

void par_xsend_cmd(par_xsup *s, char c)
{
    ssize_t r;
    while ((r = send(s->sock, &c, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
}

static void *thread_main(void *arg)
{
    par_xjob *xj = arg;
    par_xchild_main(xj);
    shutdown(xj->sock, SHUT_RDWR);
    return NULL;
}

/* The calling process adopts orphans (once per process: the attribute is not inherited across fork). */
static void become_subreaper(void)
{
    static pid_t done_for;
    if (done_for == getpid()) return;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    done_for = getpid();
}

/* Reap one ended child other than the spared ones (whose end the caller reads itself): its pid, 0 when none has
 * ended, -1 (errno ECHILD) when there is no child but them. */
static pid_t reap_but(pid_t spare, pid_t spare2)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return -1;
    if (si.si_pid == 0) return 0;
    int st;
    if (si.si_pid != spare && si.si_pid != spare2) return waitpid(si.si_pid, &st, WNOHANG);
    /* the spared one has ended (its owner reaps it): look for another that has */
    char path[64], buf[4096];
    par_xfmt(path, sizeof path, "/proc/self/task/%ld/children", (long)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    for (char *p = buf, *e; *p; p = e) {
        long pid = strtol(p, &e, 10);
        if (e == p) break;
        pid_t w = pid > 0 && pid != spare && pid != spare2 ? waitpid((pid_t)pid, &st, WNOHANG) : 0;
        if (w > 0) return w;
    }
    return 0;
}

void par_x_reap_all(pid_t spare, pid_t spare2)
{
    if (spare <= 0) spare = spare2, spare2 = 0;
    char path[64];
    par_xfmt(path, sizeof path, "/proc/self/task/%ld/children", (long)syscall(SYS_gettid));
    double give_up = par_now_s() + 2.0;
    for (;;) {
        int st;
        pid_t w;
        while ((w = spare > 0 ? reap_but(spare, spare2) : waitpid(-1, &st, WNOHANG)) > 0) {}
        if (w < 0 && errno == ECHILD) return; /* no child at all: nothing to read from /proc */
        char buf[4096];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        if (n <= 0) return; /* none left (or no /proc: the process group kill is all there is) */
        buf[n] = '\0';
        int any = 0;
        for (char *p = buf, *e; *p; p = e) {
            long pid = strtol(p, &e, 10);
            if (e == p) break;
            if (pid > 0 && pid != spare && pid != spare2) kill((pid_t)pid, SIGKILL), any = 1;
        }
        if (!any || par_now_s() > give_up) return;
        if (spare > 0) usleep(1000); /* reap_but() above takes them as they go */
        else while (waitpid(-1, &st, 0) < 0 && errno == EINTR) {}
    }
}

/* One reply of the fork server, with the pidfds it carries (up to two: the child's, the companion's). */
static ssize_t recv_rep(int fd, par_srv_rep *rep, int *pfds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * 2)];
    struct iovec iov = {.iov_base = rep, .iov_len = sizeof *rep};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t n;
    while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    int k = 0;
    for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t m = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < m; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + sizeof(int) * i, sizeof f);
            if (k < 2) pfds[k++] = f;
            else close(f);
        }
    }
    return n;
}

/* Hand the job to the fork server: it forks the child with the job's descriptors. */
static int start_via_server(par_xsup *s, int child_sock, const int *op)
{
    par_srv_req req = {.magic = PAR_SRV_MAGIC, .blob_len = s->blob_len, .out_len = s->out_len, .in_len = s->in_len};
    int fds[5] = {s->blob_fd, s->out_fd, child_sock, op[1], s->in_fd};
    int nf = s->in_len ? 5 : 4;
    char cbuf[CMSG_SPACE(sizeof fds)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &req, .iov_len = sizeof req};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nf);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nf);
    ssize_t n;
    while ((n = sendmsg(s->srv_fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    close(child_sock);
    close(op[1]);
    s->outfd = op[0];
    fcntl(s->outfd, F_SETFL, O_NONBLOCK);
    par_srv_rep rep;
    memset(&rep, 0, sizeof rep);
    int pfds[2] = {-1, -1};
    for (int sent = n == (ssize_t)sizeof req; sent;) {
        if (!wait_fd(s->srv_fd, s->deadline)) {
            par_xdecide(s, PAR_V_TIMEOUT, "no result after %g s (the fork server of '%s' did not start the backend "
                        "child)", s->timeout_s, s->inst->label);
            srv_abandon(s);
            return -1;
        }
        n = recv_rep(s->srv_fd, &rep, pfds);
        sent = n == (ssize_t)sizeof rep && rep.kind == PAR_SRV_READY; /* its warm start's end, unread: the next */
    }
    if (n != (ssize_t)sizeof rep || rep.kind != PAR_SRV_STARTED || rep.pid <= 0) {
        if (pfds[0] >= 0) close(pfds[0]);
        if (pfds[1] >= 0) close(pfds[1]);
        s->srv_ended = 1; /* nothing to wait for */
        if (n == (ssize_t)sizeof rep && rep.kind == PAR_SRV_FAILED)
            par_xdecide(s, PAR_V_ERROR, "the fork server of '%s' cannot start the backend child: %s", s->inst->label,
                   strerror(rep.status));
        else {
            par_xdecide(s, PAR_V_ERROR, "the fork server of '%s' is gone", s->inst->label);
            s->srv_lost = 1;
        }
        return -1;
    }
    /* The server's pids are its PID namespace's: the pidfds it sent say who they are here. */
    s->pidfd = pfds[0];
    s->pid = pfds[0] >= 0 ? par_sandbox_pidfd_pid(pfds[0]) : (pid_t)rep.pid;
    s->companion = pfds[1] >= 0 ? par_sandbox_pidfd_pid(pfds[1]) : rep.code > 0 ? (pid_t)rep.code : 0;
    if (pfds[1] >= 0) close(pfds[1]);
    if (s->pid <= 0) s->pid = 0; /* already gone: the pidfd says so; nothing to signal by number */
    if (s->companion < 0) s->companion = 0;
    return 0;
}

/* Start the child (or thread) on xj. Returns 0, or -1 with the verdict decided. */
int par_xstart(par_xsup *s, par_xjob *xj)
{
    int sv[2], op[2] = {-1, -1};
    s->pidfd = s->sock = s->outfd = s->thread_sock = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        par_xdecide(s, PAR_V_ERROR, "cannot create the job's socket: %s", strerror(errno));
        return -1;
    }
    s->sock = sv[0];
    xj->sock = sv[1];
    s->deadline = s->isolated && s->timeout_s > 0 ? par_now_s() + s->timeout_s : -1.0;
    s->next_rss = par_now_s() + RSS_POLL_S;
    if (!s->isolated) {
        xj->isolated = 0;
        s->thread_sock = sv[1];
        if (pthread_create(&s->thread, NULL, thread_main, xj) != 0) {
            close(sv[1]);
            s->thread_sock = -1;
            par_xdecide(s, PAR_V_ERROR, "cannot start the backend thread");
            return -1;
        }
        s->thread_started = 1;
        return 0;
    }
    xj->isolated = 1;
    if (s->srv_fd < 0) become_subreaper();
    if (pipe2(op, O_CLOEXEC) != 0) {
        close(sv[1]);
        par_xdecide(s, PAR_V_ERROR, "cannot create the output pipe: %s", strerror(errno));
        return -1;
    }
    if (s->srv_fd >= 0) return start_via_server(s, sv[1], op);
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = par_sandbox_fork(NULL, !par_comp_open_to_all(s->inst)); /* a uid of its own, or a PID namespace */
    s->uid = par_sandbox_last_uid();
    if (pid < 0) {
        int e = errno;
        close(sv[1]), close(op[0]), close(op[1]);
        par_xdecide(s, PAR_V_ERROR, "cannot fork the backend child: %s", strerror(e));
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        close(op[0]);
        setpgid(0, 0); /* own process group: the end of the job kills whatever the backend forked too */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with its worker */
        if (getppid() != parent && getpid() != 1) _exit(127); /* (from a PID namespace the parent is 0) */
        par_x_reset_signals();
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC); /* nothing of the harness's stdin */
        if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0) _exit(126);
        close(devnull);
        if (dup2(op[1], STDOUT_FILENO) < 0 || dup2(op[1], STDERR_FILENO) < 0) _exit(126);
        close(op[1]);
        par_xchild_install_fault_handler(xj);
        par_xchild_main(xj);
        fflush(stdout);
        fflush(stderr);
        _exit(0);
    }
    close(sv[1]);
    close(op[1]);
    setpgid(pid, pid); /* both sides set it, so it holds before either proceeds */
    s->pid = pid;
    s->outfd = op[0];
    fcntl(s->outfd, F_SETFL, O_NONBLOCK);
#ifdef SYS_pidfd_open
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    return 0;
}

/* End the job: kill the child and everything it left, or let the thread finish. A child kept across jobs (its XM_END
 * said so) stays after a verdict of PASS or UNSUPPORTED so far: the server says the job ended once the child has
 * unmapped everything of it. After any other verdict, or when it does not say so within SRV_GRACE_S, the server is
 * told to end it (PAR_SRV_MAGIC_DROP, acted on before any later job) and it is killed now. */
void par_xfinish(par_xsup *s)
{
    if (s->isolated && s->srv_fd >= 0) {
        int clean = !s->decided || s->v == PAR_V_UNSUPPORTED;
        if (!s->srv_ended && s->keep && clean && srv_wait_end(s, par_now_s() + SRV_GRACE_S) > 0) {
            drain_output(s);
        } else {
            if (s->keep) par_exec_server_drop_fd(s->srv_fd);
            if (!s->srv_ended) kill_child(s); /* the server kills its group and reaps */
            srv_wait_after_kill(s);
            drain_output(s);
        }
    } else if (s->isolated && s->pid > 0) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        int st;
        while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {}
        drain_output(s);
        par_x_reap_all(0, 0);
        par_sandbox_sweep(s->uid); /* what left its group and its parent too (a daemon of a constructor) */
    }
    if (s->sock >= 0) shutdown(s->sock, SHUT_RDWR);
    if (s->thread_started) pthread_join(s->thread, NULL);
    if (s->thread_sock >= 0) close(s->thread_sock);
    if (s->sock >= 0) close(s->sock);
    if (s->pidfd >= 0) close(s->pidfd);
    if (s->outfd >= 0) close(s->outfd);
    s->sock = s->pidfd = s->outfd = -1;
}

/* The verdict of an XM_END that ends the job before its runs (or a probe that failed). */
void par_xdecide_end(par_xsup *s, const par_xmsg *m)
{
    char t[PAR_MSG_LEN];
    const par_backend_inst *inst = s->inst;
    int32_t st = m->status;
    int32_t ph = m->phase;
    if (st != PAR_OK && st != PAR_UNSUPPORTED && st != PAR_ERROR) {
        par_xdecide(s, PAR_V_ERROR, "%s returned invalid status %d", phase_names[ph], (int)st);
        return;
    }
    if (st == PAR_OK) {
        par_xdecide(s, PAR_V_CRASH, "the backend child ended during %s without a reason", phase_names[ph]);
        return;
    }
    par_verdict v = st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR;
    par_xmsg_text(m, t, sizeof t);
    switch (ph) {
    case PH_INIT:
        if (v == PAR_V_UNSUPPORTED) par_xdecide(s, v, "%s", t);
        else par_xdecide(s, v, "init failed: %s", t);
        break;
    case PH_KNOBS:
        if (m->index >= 0 && m->index < inst->n_knobs)
            par_xdecide(s, v, "knob '%s=%s': %s", inst->knob_key[m->index], inst->knob_val[m->index], t);
        else par_xdecide(s, v, "knobs: %s", t);
        break;
    case PH_SUPPORTS:
        if (s->g && m->index >= 0 && m->index < s->g->n_nodes) {
            const par_node *n = &s->g->nodes[m->index];
            par_xdecide(s, v, "node '%s' (%s): %s", n->name ? n->name : "?", n->op ? n->op : "?", t);
        } else {
            par_xdecide(s, v, "supports: %s", t);
        }
        break;
    case PH_PREPARE: par_xdecide(s, v, "prepare failed: %s", t); break;
    case PH_BIND: par_xdecide(s, v, "bind failed: %s", t); break;
    default: par_xdecide(s, v, "%s: %s", phase_names[ph], t); break;
    }
}

/* Worker -> fork server (xproto.h): end the child it keeps across jobs. Here, beside the supervision that decides it,
 * so that server.c (which calls par_x_reap_all) is not called back. */
void par_exec_server_drop_fd(int srv_fd)
{
    par_srv_req d = {.magic = PAR_SRV_MAGIC_DROP};
    ssize_t n;
    if (srv_fd >= 0)
        while ((n = send(srv_fd, &d, sizeof d, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
}
