/*
 * companion.c - a fork server's companion: a process its backend wants kept across jobs (PAR_PROC_COMPANION), e.g. a
 * runtime's runner that costs 0.3 s to start (docs/runners.md). The server starts it before its warm start, with
 * three pipes (its stdin, stdout and stderr), in a process group of its own and with PR_SET_PDEATHSIG, and says
 * where the pipes are in its environment (PARITY_COMPANION="IN_W OUT_R ERR_R PID STATE_FD"), which every backend
 * child it forks inherits. STATE_FD is a shared page whose first word the child sets while a request is in flight
 * (PAR_COMPANION_BUSY): a job that ends with a request in flight (killed at its time-out or memory limit, crashed)
 * leaves it set, and the companion is then killed (its whole group) and started afresh before the next job, so no
 * job reads what another left half done. A child that finds a reply malformed kills the companion itself. A child that finds the companion gone exits with PAR_COMPANION_GONE; the
 * job then ends as the companion did (its signal or exit status), which makes a runner's crash the verdict.
 *
 * Runs in the fork server only. Must not: judge anything, or keep a companion whose state nobody can vouch for.
 */
#include "xproto.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define COMP_MAX_ARGS 64

static struct {
    char buf[8192];               /* the argv, NUL-separated */
    char *argv[COMP_MAX_ARGS + 1];
    int has;                      /* 1: the backend names a companion */
    pid_t pid;                    /* 0: not running */
    int in_w, out_r, err_r;
    int gone_known, gone_code, gone_status; /* how the last one ended (waitid's si_code, si_status) */
    int state_fd;                 /* the shared page: word 0 nonzero while a child has a request in flight */
    volatile uint32_t *state;
} comp = {.in_w = -1, .out_r = -1, .err_r = -1, .state_fd = -1};

/* The companion's argv from the instance's knobs into buf and argv: its count, 0 when the backend names none. */
static int comp_argv(const par_backend_inst *inst, char *buf, size_t len, char **argv)
{
    const par_backend *be = inst->be;
    if (inst->plugin_path[0]) return 0; /* built-in backends only: a plugin's get_proc is not called without a context */
    par_companion_fn fn = be && be->get_proc ? (par_companion_fn)be->get_proc(NULL, PAR_PROC_COMPANION) : NULL;
    if (!fn) return 0;
    const char *keys[PAR_MAX_KNOBS], *vals[PAR_MAX_KNOBS];
    for (int32_t i = 0; i < inst->n_knobs && i < PAR_MAX_KNOBS; i++) keys[i] = inst->knob_key[i], vals[i] = inst->knob_val[i];
    size_t need = fn(keys, vals, inst->n_knobs, buf, len);
    if (need == 0 || need > len) return 0;
    int n = 0;
    for (char *p = buf; *p && p < buf + need && n < COMP_MAX_ARGS; p += strlen(p) + 1) argv[n++] = p;
    argv[n] = NULL;
    return n;
}

/* Whether every user may run the file at path: it and every folder on its resolved path open to others. */
static int open_to_all(const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) return 1; /* missing: the companion's own start says so */
    struct stat st;
    if (stat(real, &st) != 0 || !(st.st_mode & S_IXOTH)) return 0;
    for (char *slash = strrchr(real, '/'); slash && slash != real; slash = strrchr(real, '/')) {
        *slash = '\0';
        if (stat(real, &st) != 0 || !(st.st_mode & S_IXOTH)) return 0;
    }
    return 1;
}

int par_comp_open_to_all(const par_backend_inst *inst)
{
    char buf[8192], *argv[COMP_MAX_ARGS + 1];
    if (comp_argv(inst, buf, sizeof buf, argv) == 0) return 1;
    for (int i = 0; i < 2 && argv[i]; i++) /* the program, and the script it runs when it is an interpreter */
        if (strchr(argv[i], '/') && !open_to_all(argv[i])) return 0;
    return 1;
}

void par_comp_setup(const par_backend_inst *inst)
{
    int n = comp_argv(inst, comp.buf, sizeof comp.buf, comp.argv);
    if (n == 0) return;
    comp.state_fd = memfd_create("parity-companion", MFD_CLOEXEC);
    if (comp.state_fd < 0 || ftruncate(comp.state_fd, 4096) != 0) return;
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, comp.state_fd, 0);
    if (m == MAP_FAILED) return;
    comp.state = m;
    comp.has = n > 0;
}

static void close_fds(void)
{
    if (comp.in_w >= 0) close(comp.in_w);
    if (comp.out_r >= 0) close(comp.out_r);
    if (comp.err_r >= 0) close(comp.err_r);
    comp.in_w = comp.out_r = comp.err_r = -1;
    unsetenv("PARITY_COMPANION");
}

static void record_end(const siginfo_t *si)
{
    comp.gone_known = 1;
    comp.gone_code = si->si_code;
    comp.gone_status = si->si_status;
}

/* Has it ended on its own? Reap it then (its status kept for the job's end). */
static void check(void)
{
    if (comp.pid <= 0) return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r;
    while ((r = waitid(P_PID, (id_t)comp.pid, &si, WEXITED | WNOHANG)) != 0 && errno == EINTR) {}
    if (r == 0 && si.si_pid == 0) return; /* still running */
    if (r == 0) record_end(&si);
    else comp.gone_known = 0; /* reaped elsewhere: how it ended is unknown */
    kill(-comp.pid, SIGKILL);
    comp.pid = 0;
    close_fds();
}

void par_comp_stop(void)
{
    if (comp.pid <= 0) return;
    kill(-comp.pid, SIGKILL);
    kill(comp.pid, SIGKILL);
    int st;
    while (waitpid(comp.pid, &st, 0) < 0 && errno == EINTR) {}
    comp.pid = 0;
    close_fds();
}

/* Start it when the backend names one and none runs. Returns its pid, or 0 (none: the backend then starts its own
 * process per job, slower but the same). */
pid_t par_comp_ensure(void)
{
    check();
    if (!comp.has || comp.pid > 0) return comp.pid;
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return 0;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return 0;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t server = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != server) _exit(127);
        par_x_reset_signals();
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 || dup2(err[1], STDERR_FILENO) < 0)
            _exit(127);
        execvp(comp.argv[0], comp.argv);
        dprintf(STDERR_FILENO, "parity: cannot start '%s': %s\n", comp.argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(err[0]);
        return 0;
    }
    setpgid(pid, pid);
    comp.pid = pid;
    comp.in_w = in[1];
    comp.out_r = out[0];
    comp.err_r = err[0];
    comp.gone_known = 0;
    char env[96];
    comp.state[0] = 0;
    snprintf(env, sizeof env, "%d %d %d %d %d", comp.in_w, comp.out_r, comp.err_r, (int)pid, comp.state_fd);
    setenv("PARITY_COMPANION", env, 1);
    return pid;
}

pid_t par_comp_pid(void)
{
    return comp.pid;
}

/* After a job whose child ended with (*code, *status): keep the companion unless the child left a request in flight;
 * when the child says the companion went away (PAR_COMPANION_GONE), the job ends as the companion did. */
void par_comp_after_job(int32_t *code, int32_t *status)
{
    if (!comp.has) return;
    int clean = comp.state[0] == 0;
    int gone_exit = *code == CLD_EXITED && *status == PAR_COMPANION_GONE;
    if (gone_exit && comp.pid > 0) {
        /* give it a moment to finish dying: the child saw its pipe close, which comes just before the end */
        for (int i = 0; i < 200 && comp.pid > 0; i++) {
            check();
            if (comp.pid > 0) usleep(1000);
        }
    } else {
        check();
    }
    if (gone_exit && comp.pid <= 0 && comp.gone_known && !(comp.gone_code == CLD_EXITED && comp.gone_status == 0)) {
        *code = comp.gone_code;
        *status = comp.gone_status;
    }
    if (!clean) par_comp_stop();
}
