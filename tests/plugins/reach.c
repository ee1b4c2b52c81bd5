/* reach.c - a correct relu that, in every job, first tries to harm the harness that runs it, as the knob act= says:
 *   kill      SIGKILL to every process of its run (the fork server, the worker, the main process, other jobs)
 *   stop      SIGSTOP to the same processes
 *   selfstop  SIGSTOP to itself (whatever waits for it must not wait for ever)
 *   hangup    shuts every socket it holds down (its job socket among them), then sleeps for 150 s
 *   mem       writes zeros over the heap of every parity process above it, through /proc/PID/mem
 *   prlimit   sets the file size limit of every process of its run to 0 (no report could be written)
 *   truncate  truncates its output memfd through /proc/self/map_files (the worker reading it would die of SIGBUS)
 *   cache     overwrites the start of every file of the reference cache (PARITY_CACHE_DIR) and adds one
 *   daemon    starts a daemon (setsid, double fork, named tpd<TP_REACH_TAG>), then does what kill does
 *   memfd     fills a memfd of TP_REACH_MIB MiB (default 512) by write(), holds only its descriptor, waits 1 s
 *   grandchild forks a process that touches TP_REACH_MIB MiB of its own memory and holds it; waits for it, then 1 s
 *   memfast   allocates a memfd of TP_REACH_MIB MiB in one fallocate (faster than any polling: the kernel's limit
 *             is what it meets), holds only its descriptor, waits 1 s
 * "Its run" is found as a hostile plugin would: the topmost process named parity above it, and every process below
 * that one. It touches nothing outside its own run. The harness must run it where none of this reaches: tp_reach's
 * records PASS, the other backends' too.
 *
 * When it is opened, the environment variable TP_REACH_LOAD says what its constructor, its entry function or its
 * destructor does in every process that opens it:
 *   ctor_crash_root, entry_crash_root   SIGSEGV, in a process running as root only (the harness's own; the
 *                                       sandbox's processes run as a uid of their own, so the loader child passes)
 *   ctor_hang_root                      sleeps for ever, as root only
 *   ctor_hang                           sleeps for ever, everywhere (refused after --timeout)
 *   ctor_hang_server                    sleeps for ever in the init of a PID namespace only (a fork server in
 *                                       the full sandbox: its warm start; the loader and probe children pass)
 *   ctor_daemon                         starts a daemon, as the act daemon does
 *   dtor_hang, dtor_crash               sleeps for ever, SIGSEGV, in its destructor
 * tests/report/test_sandbox.sh runs each act and each of these. */
#define _GNU_SOURCE
#include "tp_common.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char act[16];

/* A daemon that outlives whatever started it unless something kills it: new session, double fork, a name to find
 * it by (tpd + TP_REACH_TAG), asleep. */
static void start_daemon(void)
{
    pid_t p = fork();
    if (p != 0) {
        if (p > 0) waitpid(p, NULL, 0);
        return;
    }
    setsid();
    if (fork() != 0) _exit(0);
    char name[16];
    const char *tag = getenv("TP_REACH_TAG");
    snprintf(name, sizeof name, "tpd%.12s", tag ? tag : "");
    prctl(PR_SET_NAME, name);
    for (int fd = 0; fd < 1024; fd++) close(fd);
    for (;;) sleep(1000);
}

/* TP_REACH_MIB MiB held where the child's own resident size does not show it, then 1 s of waiting. */
static void hold_memory(char how)
{
    const char *e = getenv("TP_REACH_MIB");
    size_t mib = e ? (size_t)atol(e) : 512, chunk = (size_t)1 << 20;
    if (how == 'f') {
        int fd = memfd_create("tp_reach_fast", 0);
        if (fd >= 0 && fallocate(fd, 0, 0, (off_t)(mib * chunk)) != 0) perror("tp_reach: fallocate");
    } else if (how == 'g') {
        int p[2];
        if (pipe(p) != 0) return;
        if (fork() == 0) {
            for (size_t i = 0; i < mib; i++) {
                char *m = malloc(chunk);
                if (m) memset(m, 1, chunk);
            }
            ssize_t w = write(p[1], "k", 1);
            (void)w;
            for (;;) sleep(1000);
        }
        char c;
        ssize_t r = read(p[0], &c, 1);
        (void)r;
    } else {
        int fd = memfd_create("tp_reach_hold", 0);
        static char buf[1 << 20];
        memset(buf, 1, sizeof buf);
        for (size_t i = 0; fd >= 0 && i < mib; i++)
            if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) break;
    }
    sleep(1);
}

static int load_is(const char *what)
{
    const char *v = getenv("TP_REACH_LOAD");
    return v && strcmp(v, what) == 0;
}

__attribute__((constructor)) static void on_open(void)
{
    if ((load_is("ctor_crash_root") && getuid() == 0)) raise(SIGSEGV);
    if ((load_is("ctor_hang_root") && getuid() == 0) || load_is("ctor_hang") || (load_is("ctor_hang_server") && getpid() == 1))
        for (;;) sleep(1000);
    if (load_is("ctor_daemon")) start_daemon();
}

__attribute__((destructor)) static void on_close(void)
{
    if (load_is("dtor_crash")) raise(SIGSEGV);
    if (load_is("dtor_hang"))
        for (;;) sleep(1000);
}

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    (void)ctx;
    if (strcmp(key, "act") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (known: act)", key);
    snprintf(act, sizeof act, "%s", value);
    return PAR_OK;
}

static void *get_proc(void *ctx, const char *name)
{
    (void)ctx;
    return strcmp(name, PAR_PROC_SET_KNOB) == 0 ? (void *)set_knob : NULL;
}

/* The parent pid and the command name of pid, from /proc/PID/stat; 0 when unreadable. */
static int proc_stat(int pid, int *ppid, char *comm, size_t len)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r || r < l) return 0;
    snprintf(comm, len, "%.*s", (int)(r - l - 1), l + 1);
    return sscanf(r + 2, "%*c %d", ppid) == 1;
}

/* The topmost process named parity above this one (the main process), or 0. */
static int run_root(void)
{
    int pid = getppid(), top = 0;
    for (int depth = 0; pid > 1 && depth < 16; depth++) {
        int pp = 0;
        char comm[64];
        if (!proc_stat(pid, &pp, comm, sizeof comm) || strcmp(comm, "parity") != 0) break;
        top = pid;
        pid = pp;
    }
    return top;
}

static int below(int pid, int root)
{
    for (int depth = 0; pid > 1 && depth < 16; depth++) {
        if (pid == root) return 1;
        int pp = 0;
        char comm[64];
        if (!proc_stat(pid, &pp, comm, sizeof comm)) return 0;
        pid = pp;
    }
    return 0;
}

/* Zeros over the heap of pid, through its memory file. */
static void zero_heap(int pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDWR);
    static char zeros[65536];
    while (fd >= 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, "[heap]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        for (unsigned long a = lo; a < hi; a += sizeof zeros) {
            size_t n = hi - a < sizeof zeros ? hi - a : sizeof zeros;
            if (pwrite(fd, zeros, n, (off_t)a) < 0) break;
        }
    }
    if (fd >= 0) close(fd);
    fclose(f);
}

static void truncate_outputs(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (!strstr(line, "parity-outputs") || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        char path[96];
        snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", lo, hi);
        int fd = open(path, O_RDWR);
        if (fd >= 0 && ftruncate(fd, 0) == 0) fprintf(stderr, "tp_reach: truncated the outputs\n");
        if (fd >= 0) close(fd);
    }
    if (f) fclose(f);
}

static void spoil_cache(void)
{
    const char *dir = getenv("PARITY_CACHE_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    char path[4096];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_WRONLY);
        if (fd >= 0 && pwrite(fd, "SPOILT", 6, 0) == 6) fprintf(stderr, "tp_reach: spoilt %s\n", e->d_name);
        if (fd >= 0) close(fd);
    }
    if (d) closedir(d);
    if (dir) {
        snprintf(path, sizeof path, "%s/planted.ref", dir);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) close(fd);
    }
}

static void harm(void)
{
    if (strcmp(act, "memfd") == 0 || strcmp(act, "grandchild") == 0 || strcmp(act, "memfast") == 0) {
        hold_memory(act[0] == 'g' ? 'g' : act[3] == 'f' ? 'f' : 'd');
        return;
    }
    if (strcmp(act, "truncate") == 0 || strcmp(act, "cache") == 0) {
        if (act[0] == 't') truncate_outputs();
        else spoil_cache();
        return;
    }
    if (strcmp(act, "selfstop") == 0) {
        raise(SIGSTOP);
        return;
    }
    if (strcmp(act, "hangup") == 0) {
        struct stat st;
        for (int fd = 3; fd < 1024; fd++)
            if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) shutdown(fd, SHUT_RDWR);
        sleep(150);
        return;
    }
    if (strcmp(act, "daemon") == 0) start_daemon();
    int root = run_root(), self = getpid();
    if (root <= 0) return;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int pid = atoi(e->d_name);
        if (pid <= 1 || pid == self || !below(pid, root)) continue;
        if (strcmp(act, "kill") == 0 || strcmp(act, "daemon") == 0) kill(pid, SIGKILL);
        else if (strcmp(act, "stop") == 0) kill(pid, SIGSTOP);
        else if (strcmp(act, "prlimit") == 0) prlimit(pid, RLIMIT_FSIZE, &(struct rlimit){0, 0}, NULL);
        else if (strcmp(act, "mem") == 0) {
            int pp = 0;
            char comm[64];
            if (proc_stat(pid, &pp, comm, sizeof comm) && strcmp(comm, "parity") == 0) zero_heap(pid);
        }
    }
    if (d) closedir(d);
}

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    static int done;
    par_status st = tp_run_ok(ctx, prepared, msg);
    if (!done++) harm(); /* after the outputs are written: a truncation then hits the worker reading them */
    return st;
}

static const par_backend tp_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_reach",
    .description = "test plugin", .version = "1.0", .arith = PAR_ARITH_F32, .init = tp_init, .destroy = tp_destroy,
    .supports = tp_supports, .prepare = tp_prepare, .bind = tp_bind, .run = run, .release = tp_release,
    .get_proc = get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    if (load_is("entry_crash_root") && getuid() == 0) raise(SIGSEGV);
    return &tp_backend;
}
