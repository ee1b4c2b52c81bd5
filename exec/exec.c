/*
 * exec.c - the worker's side of a job: executes one graph on one backend instance in a child process (or, with
 * isolate = 0, in a thread of the caller, for debuggers: no protection against crashes or hangs), drives it run by
 * run over the job's socket (exec/xproto.h), and decides every verdict from what it can check itself.
 *
 * Memory the backend child can reach (besides its own copy-on-write view of the caller):
 *   - the inputs: one memfd, written, sealed (F_SEAL_WRITE, SHRINK, GROW, SEAL) and mapped read-only before the
 *     fork; each input starts on a page with at least 64 spare bytes after it (XNNPACK's XNN_EXTRA_BYTES reads). A
 *     write faults; the child's handler reports the input and offset (XM_INPUT_WRITE): FAIL.
 *   - the outputs: one shared anonymous mapping,
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
 * characters escaped), run times within what the worker itself measured.
 *
 * The child's stdout and stderr go to a pipe that the worker drains while it waits; the last PAR_OUTPUT_TAIL - 1
 * bytes are kept. The worker waits with poll() on the socket, a pidfd of the child and that pipe, and polls the
 * child's resident memory from /proc every 10 ms when a memory limit is set. After each job it kills the child's
 * process group and then every child it has (it is a subreaper, so a backend's double-forked, setsid() daemon is
 * its child by then), until none remain.
 *
 * This file must not judge output values numerically (the oracle does), retry, or sleep.
 */
#include "xproto.h"
#include "gblob.h"

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
#define RSS_POLL_S 0.010

static const char *const phase_names[PH_COUNT] = {"start", "init", "knobs", "supports", "prepare", "bind", "run",
                                                  "release", "destroy", "describe", "done"};

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
 * One job's supervision: start the child, wait for its messages, end it.
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct job {
    const par_backend_inst *inst;
    const par_graph_desc *g;
    int isolated;
    pid_t pid;
    int pidfd, sock, outfd;
    int thread_sock;             /* the thread's end (in-process jobs) */
    /* through a fork server: its socket, the job's memfds, and how the server says the child ended */
    int srv_fd, blob_fd, out_fd, in_fd;
    size_t blob_len, out_len, in_len;
    int srv_ended;
    int32_t srv_code, srv_status;
    pthread_t thread;
    int thread_started;
    double deadline, timeout_s;
    int64_t mem_limit;
    double next_rss;
    int32_t phase, run;          /* where the child is, as far as the worker knows */
    int decided;                 /* 1 once a verdict other than PASS is fixed */
    par_verdict v;
    char reason[PAR_REASON_LEN];
    char ring[PAR_OUTPUT_TAIL];  /* the output's last bytes, circular */
    int64_t out_total;
} job;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void decide(job *s, par_verdict v, const char *f, ...)
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
static const char *where(const job *s, char *buf, size_t len)
{
    if (s->phase == PH_RUN && s->run > 0) fmt(buf, len, "run %d", (int)s->run);
    else fmt(buf, len, "%s", (s->phase >= 0 && s->phase < PH_COUNT) ? phase_names[s->phase] : "start");
    return buf;
}

/* A backend's message, cleaned (terminated, valid UTF-8, one line), never empty. */
static const char *msg_text(const par_xmsg *m, char *buf, size_t len)
{
    par_text_clean(buf, len, m->text, sizeof m->text, 1);
    if (!buf[0]) fmt(buf, len, "%s", "(no message)");
    return buf;
}

static void drain_output(job *s)
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

/* The kept tail, in order, cleaned into dst. */
static void output_tail(const job *s, char *dst, size_t cap)
{
    const size_t rcap = sizeof s->ring - 1;
    char lin[PAR_OUTPUT_TAIL];
    size_t n = s->out_total < (int64_t)rcap ? (size_t)s->out_total : rcap;
    size_t start = (size_t)((s->out_total - (int64_t)n) % (int64_t)rcap);
    for (size_t i = 0; i < n; i++) lin[i] = s->ring[(start + i) % rcap];
    par_text_clean(dst, cap, lin, n, 0);
}

static int64_t child_rss(pid_t pid)
{
    char path[64], buf[128];
    fmt(path, sizeof path, "/proc/%d/statm", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    long long size = 0, res = 0;
    if (sscanf(buf, "%lld %lld", &size, &res) != 2) return -1;
    return (int64_t)res * (int64_t)sysconf(_SC_PAGESIZE);
}

static void fmt_bytes(char *buf, size_t len, int64_t b)
{
    if (b >= ((int64_t)1 << 30) && b % ((int64_t)1 << 30) == 0) fmt(buf, len, "%lld GiB", (long long)(b >> 30));
    else fmt(buf, len, "%lld MiB", (long long)(b >> 20));
}

/* Read the fork server's replies until the one saying the child ended; returns 0 when the server is gone. */
static int srv_wait_end(job *s)
{
    while (!s->srv_ended) {
        par_srv_rep rep;
        ssize_t n;
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

/* The child is gone (or going): reap it and decide how it ended, unless something was decided already. */
static void child_gone(job *s)
{
    char ph[32];
    if (!s->isolated) {
        decide(s, PAR_V_ERROR, "the backend thread ended during %s without a result", where(s, ph, sizeof ph));
        return;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = 0;
    if (s->srv_fd >= 0) {
        /* the fork server reaps its child and says how it ended */
        if (!srv_wait_end(s)) {
            decide(s, PAR_V_ERROR, "the fork server of '%s' is gone", s->inst->label);
            return;
        }
        si.si_pid = s->pid;
        si.si_code = s->srv_code;
        si.si_status = s->srv_status;
    } else {
        /* Wait without reaping: the zombie keeps the process group id from being reused until finish() has
         * killed the group. */
        while ((r = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOWAIT)) != 0 && errno == EINTR) {}
    }
    if (r != 0 || si.si_pid != s->pid) {
        decide(s, PAR_V_ERROR, "cannot wait for the backend child: %s", strerror(errno));
    } else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
        int sig = si.si_status;
        const char *sn = strsignal(sig);
        decide(s, PAR_V_CRASH, "killed by signal %d (%s) during %s", sig, sn ? sn : "unknown signal",
               where(s, ph, sizeof ph));
    } else if (si.si_status != 0) {
        decide(s, PAR_V_CRASH, "exited with status %d during %s", si.si_status, where(s, ph, sizeof ph));
    } else {
        decide(s, PAR_V_CRASH, "exited with status 0 during %s, before reporting a result", where(s, ph, sizeof ph));
    }
}

/* Handle one message that arrived; returns 1 when it is for the caller (not a phase note), 0 when handled here, -1
 * when the job is over (decided). */
static int take(job *s, par_xmsg *m)
{
    if (m->type <= 0 || m->type >= XM_TYPE_END || m->phase < 0 || m->phase >= PH_COUNT) {
        decide(s, PAR_V_CRASH, "the backend child sent a malformed report (type %d, phase %d)", (int)m->type,
               (int)m->phase);
        return -1;
    }
    if (m->type == XM_PHASE) {
        s->phase = m->phase;
        return 0;
    }
    if (m->type == XM_INPUT_WRITE) {
        int32_t k = m->index;
        char ph[32];
        if (!s->g || k < 0 || k >= s->g->n_inputs || m->offset < 0) {
            decide(s, PAR_V_FAIL, "backend wrote into an input (during %s)", where(s, ph, sizeof ph));
        } else {
            size_t esz = par_dtype_size(s->g->values[s->g->inputs[k]].dtype);
            decide(s, PAR_V_FAIL, "backend wrote into input %d (element %lld first, during %s)", (int)k,
                   (long long)((size_t)m->offset / (esz ? esz : 1)), where(s, ph, sizeof ph));
        }
        return -1;
    }
    return 1;
}

/* Wait for the next message for the caller. Returns 1 with *m, or 0 when the job is over (verdict decided:
 * time-out, crash, memory limit, a write into an input). */
static int await(job *s, par_xmsg *m)
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
            if (n > 0) decide(s, PAR_V_CRASH, "the backend child sent a malformed report (%zd bytes)", n);
            drain_output(s);
            child_gone(s);
            return 0;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            decide(s, PAR_V_ERROR, "cannot read the backend child's report: %s", strerror(errno));
            return 0;
        }
        /* nothing yet: wait */
        double t = now_s();
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
            decide(s, PAR_V_ERROR, "cannot wait for the backend child: %s", strerror(errno));
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
        t = now_s();
        if (s->mem_limit > 0 && t >= s->next_rss) {
            s->next_rss = t + RSS_POLL_S;
            int64_t rss = child_rss(s->pid);
            if (rss > s->mem_limit) {
                char lim[32], ph[32];
                fmt_bytes(lim, sizeof lim, s->mem_limit);
                kill(s->pid, SIGKILL);
                decide(s, PAR_V_CRASH, "out of memory (RSS > %s) in phase %s", lim, where(s, ph, sizeof ph));
                return 0;
            }
        }
        if (s->deadline >= 0 && t >= s->deadline) {
            char ph[32];
            decide(s, PAR_V_TIMEOUT, "no result after %g s (during %s)", s->timeout_s, where(s, ph, sizeof ph));
            return 0;
        }
    }
}

static void send_cmd(job *s, char c)
{
    ssize_t r;
    while ((r = send(s->sock, &c, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
}

void par_x_reset_signals(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE, SIGTERM, SIGINT,
                               SIGHUP, SIGCHLD};
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

void par_x_reap_all(void)
{
    char path[64];
    fmt(path, sizeof path, "/proc/self/task/%ld/children", (long)syscall(SYS_gettid));
    double give_up = now_s() + 2.0;
    for (;;) {
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0) {}
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
            if (pid > 0) kill((pid_t)pid, SIGKILL), any = 1;
        }
        if (!any || now_s() > give_up) return;
        while (waitpid(-1, &st, 0) < 0 && errno == EINTR) {}
    }
}

/* Hand the job to the fork server: it forks the child with the job's descriptors. */
static int start_via_server(job *s, int child_sock, const int *op)
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
    if (n == (ssize_t)sizeof req)
        while ((n = recv(s->srv_fd, &rep, sizeof rep, 0)) < 0 && errno == EINTR) {}
    if (n != (ssize_t)sizeof rep || rep.kind != PAR_SRV_STARTED || rep.pid <= 0) {
        s->srv_ended = 1; /* nothing to wait for */
        if (n == (ssize_t)sizeof rep && rep.kind == PAR_SRV_FAILED)
            decide(s, PAR_V_ERROR, "the fork server of '%s' cannot start the backend child: %s", s->inst->label,
                   strerror(rep.status));
        else
            decide(s, PAR_V_ERROR, "the fork server of '%s' is gone", s->inst->label);
        return -1;
    }
    s->pid = rep.pid;
#ifdef SYS_pidfd_open
    s->pidfd = (int)syscall(SYS_pidfd_open, s->pid, 0);
#endif
    return 0;
}

/* Start the child (or thread) on xj. Returns 0, or -1 with the verdict decided. */
static int start(job *s, par_xjob *xj)
{
    int sv[2], op[2] = {-1, -1};
    s->pidfd = s->sock = s->outfd = s->thread_sock = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        decide(s, PAR_V_ERROR, "cannot create the job's socket: %s", strerror(errno));
        return -1;
    }
    s->sock = sv[0];
    xj->sock = sv[1];
    s->deadline = s->isolated && s->timeout_s > 0 ? now_s() + s->timeout_s : -1.0;
    s->next_rss = now_s() + RSS_POLL_S;
    if (!s->isolated) {
        xj->isolated = 0;
        s->thread_sock = sv[1];
        if (pthread_create(&s->thread, NULL, thread_main, xj) != 0) {
            close(sv[1]);
            s->thread_sock = -1;
            decide(s, PAR_V_ERROR, "cannot start the backend thread");
            return -1;
        }
        s->thread_started = 1;
        return 0;
    }
    xj->isolated = 1;
    if (s->srv_fd < 0) become_subreaper();
    if (pipe2(op, O_CLOEXEC) != 0) {
        close(sv[1]);
        decide(s, PAR_V_ERROR, "cannot create the output pipe: %s", strerror(errno));
        return -1;
    }
    if (s->srv_fd >= 0) return start_via_server(s, sv[1], op);
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[1]), close(op[0]), close(op[1]);
        decide(s, PAR_V_ERROR, "cannot fork the backend child: %s", strerror(e));
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        close(op[0]);
        setpgid(0, 0); /* own process group: the end of the job kills whatever the backend forked too */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with its worker */
        if (getppid() != parent) _exit(127);
        par_x_reset_signals();
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

/* End the job: kill the child and everything it left, or let the thread finish. */
static void finish(job *s)
{
    if (s->isolated && s->srv_fd >= 0) {
        if (s->pid > 0 && !s->srv_ended) kill(s->pid, SIGKILL); /* the server kills its group and reaps */
        srv_wait_end(s);
        drain_output(s);
    } else if (s->isolated && s->pid > 0) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        int st;
        while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {}
        drain_output(s);
        par_x_reap_all();
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
static void decide_end(job *s, const par_xmsg *m)
{
    char t[PAR_MSG_LEN];
    const par_backend_inst *inst = s->inst;
    int32_t st = m->status;
    int32_t ph = m->phase;
    if (st != PAR_OK && st != PAR_UNSUPPORTED && st != PAR_ERROR) {
        decide(s, PAR_V_ERROR, "%s returned invalid status %d", phase_names[ph], (int)st);
        return;
    }
    if (st == PAR_OK) {
        decide(s, PAR_V_CRASH, "the backend child ended during %s without a reason", phase_names[ph]);
        return;
    }
    par_verdict v = st == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR;
    msg_text(m, t, sizeof t);
    switch (ph) {
    case PH_INIT:
        if (v == PAR_V_UNSUPPORTED) decide(s, v, "%s", t);
        else decide(s, v, "init failed: %s", t);
        break;
    case PH_KNOBS:
        if (m->index >= 0 && m->index < inst->n_knobs)
            decide(s, v, "knob '%s=%s': %s", inst->knob_key[m->index], inst->knob_val[m->index], t);
        else decide(s, v, "knobs: %s", t);
        break;
    case PH_SUPPORTS:
        if (s->g && m->index >= 0 && m->index < s->g->n_nodes) {
            const par_node *n = &s->g->nodes[m->index];
            decide(s, v, "node '%s' (%s): %s", n->name ? n->name : "?", n->op ? n->op : "?", t);
        } else {
            decide(s, v, "supports: %s", t);
        }
        break;
    case PH_PREPARE: decide(s, v, "prepare failed: %s", t); break;
    case PH_BIND: decide(s, v, "bind failed: %s", t); break;
    default: decide(s, v, "%s: %s", phase_names[ph], t); break;
    }
}

/* ---------------------------------------------------------------------------------------------------------------
 * Probe
 * ------------------------------------------------------------------------------------------------------------- */

void par_exec_probe(par_backend_inst *inst, double timeout_s)
{
    if (!inst) return;
    inst->usable = 0;
    inst->probed = 0;
    inst->knob_error = 0;
    inst->describe[0] = '\0';
    inst->requant = PAR_REQUANT_FP32;
    inst->requant_exact = 0;
    if (!inst->be) {
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "backend '%s' is not resolved", inst->label);
        return;
    }
    inst->arith = (unsigned)inst->be->arith <= PAR_ARITH_F16 ? (int32_t)inst->be->arith : PAR_ARITH_F32;
    job s;
    memset(&s, 0, sizeof s);
    s.pidfd = s.sock = s.outfd = s.thread_sock = -1;
    s.srv_fd = s.blob_fd = s.out_fd = s.in_fd = -1;
    s.inst = inst;
    s.isolated = 1;
    s.timeout_s = timeout_s;
    s.v = PAR_V_PASS;
    par_xjob xj = {.inst = inst};
    par_xmsg m;
    int got_probe = 0;
    if (start(&s, &xj) == 0) {
        while (await(&s, &m)) {
            if (m.type == XM_PROBE && !got_probe) {
                got_probe = 1;
                par_text_clean(inst->describe, sizeof inst->describe, m.text, sizeof m.text, 1);
                if (m.requant < 0 || m.requant > PAR_REQUANT_GEMMLOWP)
                    decide(&s, PAR_V_ERROR, "declares unknown requantization scheme %d", (int)m.requant);
                inst->requant = m.requant;
                inst->requant_exact = m.requant_exact != 0;
            } else if (m.type == XM_END) {
                if (m.phase != PH_DONE) {
                    decide_end(&s, &m);
                    if (m.phase == PH_KNOBS) inst->knob_error = 1;
                } else if (!got_probe) {
                    decide(&s, PAR_V_CRASH, "the backend child ended without the probe's answers");
                }
                break;
            } else {
                decide(&s, PAR_V_CRASH, "the backend child sent an unexpected report (type %d)", (int)m.type);
                break;
            }
        }
    }
    finish(&s);
    inst->probed = 1;
    if (s.decided) {
        fmt(inst->unusable_reason, sizeof inst->unusable_reason, "%s", s.reason);
        return;
    }
    inst->usable = 1;
    inst->unusable_reason[0] = '\0';
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
static int check_guards(job *s, const outs *o)
{
    char ph[32];
    for (int32_t k = 0; k < o->n; k++) {
        size_t pre = o->off[k] - GUARD_BYTES, end = o->off[k] + o->size[k];
        size_t post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t i = o->off[k]; i-- > pre;) {
            if (o->base[i] != guard_byte(i)) {
                decide(s, PAR_V_FAIL, "out-of-bounds write before output %d (byte offset -%zu), found after %s",
                       (int)k, o->off[k] - i, where(s, ph, sizeof ph));
                return 1;
            }
        }
        for (size_t i = end; i < post_end; i++) {
            if (o->base[i] != guard_byte(i)) {
                decide(s, PAR_V_FAIL,
                       "out-of-bounds write after output %d (byte offset %zu; the output has %zu bytes), found after %s",
                       (int)k, i - o->off[k], o->size[k], where(s, ph, sizeof ph));
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
static int compare_runs(job *s, const outs *o, int32_t k, int32_t run, uint8_t pcur)
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
        decide(s, PAR_V_FAIL, "output %d element %lld never written (%lld element%s in all)", (int)k,
               (long long)first_unw, (long long)n_unw, n_unw == 1 ? "" : "s");
    } else {
        char ha[40], hb[40];
        elem_hex(first + (size_t)first_diff * esz, esz, ha, sizeof ha);
        elem_hex(cur + (size_t)first_diff * esz, esz, hb, sizeof hb);
        decide(s, PAR_V_FLAKY, "run %d differs from run 1 at output %d element %lld (bits %s vs %s)", (int)run,
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
static double quantile(const double *v, int32_t n, double q)
{
    double pos = q * (double)(n - 1);
    int32_t lo = (int32_t)pos;
    if (lo >= n - 1) return v[n - 1];
    double f = pos - (double)lo;
    return v[lo] + f * (v[lo + 1] - v[lo]);
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

/* The runs, one round trip each, with the checks after each. Returns 0 when all went well. */
static int do_runs(job *s, const outs *o, const par_exec_opts *opt, par_timing *t)
{
    int32_t n_runs = opt->warmup + opt->repeat;
    if (n_runs < 2) n_runs = 2; /* the second run is what shows unwritten elements */
    double *ms = malloc(sizeof(double) * (size_t)opt->repeat);
    if (!ms) {
        decide(s, PAR_V_ERROR, "out of memory for %d timings", (int)opt->repeat);
        return -1;
    }
    int32_t n_timed = 0, rc = 0;
    for (int32_t r = 0; r < n_runs && rc == 0; r++) {
        uint8_t poison = (r % 2 == 0) ? POISON_ODD : POISON_EVEN;
        for (int32_t k = 0; k < o->n; k++) memset(o->base + o->off[k], poison, o->size[k]);
        s->phase = PH_RUN;
        s->run = r + 1;
        double t0 = now_s();
        send_cmd(s, XC_RUN);
        par_xmsg m;
        if (!await(s, &m)) {
            rc = -1;
            break;
        }
        double wall_ms = (now_s() - t0) * 1e3;
        if (m.type == XM_END) {
            decide(s, PAR_V_CRASH, "the backend child ended during run %d without reporting it", (int)r + 1);
            rc = -1;
            break;
        }
        if (m.type != XM_RUN || m.index != r + 1) {
            decide(s, PAR_V_CRASH, "the backend child sent an unexpected report during run %d (type %d, run %d)",
                   (int)r + 1, (int)m.type, (int)m.index);
            rc = -1;
            break;
        }
        if (m.status != PAR_OK) {
            char txt[PAR_MSG_LEN];
            if (m.status == PAR_UNSUPPORTED || m.status == PAR_ERROR)
                decide(s, m.status == PAR_UNSUPPORTED ? PAR_V_UNSUPPORTED : PAR_V_ERROR, "run %d failed: %s",
                       (int)r + 1, msg_text(&m, txt, sizeof txt));
            else
                decide(s, PAR_V_ERROR, "run %d returned invalid status %d", (int)r + 1, (int)m.status);
            rc = -1;
            break;
        }
        /* the child's clock is data: keep it within what the worker saw */
        double run_ms = (isfinite(m.ms) && m.ms >= 0 && m.ms <= wall_ms) ? m.ms : wall_ms;
        if (r >= opt->warmup && n_timed < opt->repeat) ms[n_timed++] = run_ms;
        if (check_guards(s, o)) {
            rc = -1;
            break;
        }
        for (int32_t k = 0; k < o->n && rc == 0; k++) {
            if (r == 0) memcpy(o->first[k], o->base + o->off[k], o->size[k]);
            else if (compare_runs(s, o, k, r + 1, poison)) rc = -1;
        }
    }
    fill_timing(t, ms, n_timed);
    free(ms);
    return rc;
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
        fmt(reason, len, "cannot create the input memfd: %s", strerror(errno));
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
        fmt(reason, len, "cannot write, seal or map the inputs: %s", strerror(errno));
        *base = MAP_FAILED;
        close(fd);
    } else {
        *fd_out = fd; /* for a fork server */
    }
    for (int32_t i = 0; *base != MAP_FAILED && i < g->n_inputs; i++) ptr[i] = *base + off[i];
}

/* The graph block of a job for a fork server's child: a sealed memfd. Returns 0 or -1 with reason set. */
static int make_blob(job *s, const par_graph_desc *g, const size_t *in_off, const size_t *out_off, char *reason,
                     size_t len)
{
    size_t n = par_gblob_size(g, in_off, out_off);
    uint8_t *b = calloc(1, n);
    s->blob_fd = memfd_create("parity-graph", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int ok = b && s->blob_fd >= 0;
    if (ok) par_gblob_write(g, in_off, out_off, b);
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
        fmt(reason, len, "cannot write the graph for the fork server: %s", strerror(errno));
        return -1;
    }
    s->blob_len = n;
    return 0;
}

void par_exec_run(const par_backend_inst *inst, const par_graph_desc *g, const void *const *inputs,
                  const par_exec_opts *opts, par_exec_out *out)
{
    static const par_exec_opts defaults = {.warmup = 0, .repeat = 1, .timeout_s = 10.0, .isolate = 1};
    const par_exec_opts *opt = opts ? opts : &defaults;
    memset(out, 0, sizeof *out);
    out->verdict = PAR_V_ERROR;
    if (check_args(inst, g, inputs, opt, out->reason, sizeof out->reason) != 0) return;

    int32_t n_out = g->n_outputs, n_in = g->n_inputs;
    outs o = {.n = n_out, .base = MAP_FAILED};
    o.off = calloc((size_t)n_out, sizeof *o.off);
    o.size = calloc((size_t)n_out, sizeof *o.size);
    o.esz = calloc((size_t)n_out, sizeof *o.esz);
    o.first = calloc((size_t)n_out, sizeof *o.first);
    void **obuf = calloc((size_t)n_out, sizeof *obuf);
    size_t *in_off = calloc((size_t)(n_in ? n_in : 1), sizeof *in_off);
    const void **in_ptr = calloc((size_t)(n_in ? n_in : 1), sizeof *in_ptr);
    uint8_t *in_base = MAP_FAILED;
    size_t in_total = 0;
    job s;
    memset(&s, 0, sizeof s);
    s.pidfd = s.sock = s.outfd = s.thread_sock = -1;
    s.srv_fd = s.blob_fd = s.out_fd = s.in_fd = -1;
    if (!o.off || !o.size || !o.esz || !o.first || !obuf || !in_off || !in_ptr) {
        fmt(out->reason, sizeof out->reason, "%s", "out of memory");
        goto done;
    }
    size_t off = GUARD_BYTES;
    for (int32_t k = 0; k < n_out; k++) {
        const par_value *v = &g->values[g->outputs[k]];
        o.size[k] = value_bytes(v);
        o.esz[k] = par_dtype_size(v->dtype);
        o.off[k] = off;
        off = align_up(off + o.size[k], ALIGN) + 2 * GUARD_BYTES;
        o.first[k] = malloc(o.size[k]);
        if (!o.first[k]) {
            fmt(out->reason, sizeof out->reason, "out of memory for output %d (%zu bytes)", (int)k, o.size[k]);
            goto done;
        }
    }
    o.total = off - GUARD_BYTES;
    /* a memfd, so that a fork server's child can map it too */
    s.out_fd = memfd_create("parity-outputs", MFD_CLOEXEC);
    if (s.out_fd < 0 || ftruncate(s.out_fd, (off_t)o.total) != 0) {
        fmt(out->reason, sizeof out->reason, "cannot create the output memfd: %s", strerror(errno));
        goto done;
    }
    o.base = mmap(NULL, o.total, PROT_READ | PROT_WRITE, MAP_SHARED, s.out_fd, 0);
    if (o.base == MAP_FAILED) {
        fmt(out->reason, sizeof out->reason, "cannot map %zu bytes of shared memory: %s", o.total, strerror(errno));
        goto done;
    }
    for (int32_t k = 0; k < n_out; k++) {
        obuf[k] = o.base + o.off[k];
        size_t end = o.off[k] + o.size[k], post_end = align_up(end, ALIGN) + GUARD_BYTES;
        for (size_t i = o.off[k] - GUARD_BYTES; i < o.off[k]; i++) o.base[i] = guard_byte(i);
        for (size_t i = end; i < post_end; i++) o.base[i] = guard_byte(i);
    }
    map_inputs(g, inputs, in_off, in_ptr, &in_base, &in_total, &s.in_fd, out->reason, sizeof out->reason);
    if (in_total > 0 && in_base == MAP_FAILED) goto done;
    if (opt->isolate && opt->server) {
        s.srv_fd = par_exec_server_fd(opt->server);
        if (make_blob(&s, g, in_off, o.off, out->reason, sizeof out->reason) != 0) goto done;
        s.out_len = o.total;
        s.in_len = in_total;
    }

    s.inst = inst;
    s.g = g;
    s.isolated = opt->isolate != 0;
    s.timeout_s = opt->timeout_s;
    s.mem_limit = s.isolated ? opt->mem_limit : 0;
    s.v = PAR_V_PASS;
    par_xjob xj = {.inst = inst, .g = g, .in = in_ptr, .out = obuf, .in_base = in_total ? in_base : NULL,
                   .in_len = in_total, .in_off = in_off, .n_in = n_in};
    if (start(&s, &xj) == 0) {
        par_xmsg m;
        if (await(&s, &m)) {
            if (m.type == XM_END) {
                decide_end(&s, &m);
            } else if (m.type != XM_READY) {
                decide(&s, PAR_V_CRASH, "the backend child sent an unexpected report before its runs (type %d)",
                       (int)m.type);
            } else {
                out->t.prepare_ms = isfinite(m.ms) && m.ms >= 0 ? m.ms : 0.0;
                if (do_runs(&s, &o, opt, &out->t) == 0) {
                    send_cmd(&s, XC_END);
                    while (await(&s, &m) && m.type != XM_END) {}
                    if (!s.decided) check_guards(&s, &o); /* release and destroy may write too */
                }
            }
        }
    }
    finish(&s);
    out->output_bytes = s.out_total;
    output_tail(&s, out->output, sizeof out->output);
    out->verdict = s.decided ? s.v : PAR_V_PASS;
    if (s.decided) fmt(out->reason, sizeof out->reason, "%s", s.reason);
    if (out->verdict != PAR_V_PASS) goto done;

    /* Every run gave run 1's bits: hand over the worker's copies of run 1. */
    out->outputs = calloc((size_t)n_out, sizeof *out->outputs);
    if (!out->outputs) {
        out->verdict = PAR_V_ERROR;
        fmt(out->reason, sizeof out->reason, "%s", "out of memory copying the outputs");
        goto done;
    }
    out->n_outputs = n_out;
    for (int32_t k = 0; k < n_out; k++) {
        out->outputs[k] = o.first[k];
        o.first[k] = NULL;
    }
done:
    if (s.out_fd >= 0) close(s.out_fd);
    if (s.in_fd >= 0) close(s.in_fd);
    if (s.blob_fd >= 0) close(s.blob_fd);
    if (o.base != MAP_FAILED) munmap(o.base, o.total);
    if (in_base != MAP_FAILED) munmap(in_base, in_total);
    if (o.first)
        for (int32_t k = 0; k < n_out; k++) free(o.first[k]);
    free(o.first);
    free(o.off);
    free(o.size);
    free(o.esz);
    free(obuf);
    free(in_off);
    free(in_ptr);
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
