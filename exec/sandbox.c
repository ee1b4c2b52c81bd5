/*
 * sandbox.c - the sandbox of the processes that run backend code (exec/sandbox.h): the level detected once by a
 * trial child, and the fork that enters it.
 *
 * The PID namespace is entered the way unshare(1) does it, without an extra process: the caller unshares
 * CLONE_NEWPID (which changes only where its next child goes), forks (that child is the namespace's init, with the
 * C library's view of its own pid and tid correct, as after any fork), and returns to its own namespace with setns
 * on the descriptor it kept. The child then makes every mount private in a mount namespace of its own, mounts a
 * /proc of its PID namespace over /proc (so that /proc names only its namespace: the fork server reaps its children
 * from /proc/self/task/TID/children), and drops to its own uid and gid (an unprivileged one per call, above
 * 0x40000000 and keyed by the caller's pid, so that two sandboxes, or two runs, share no uid), no supplementary
 * group, no capability (setresuid from root clears them all), no_new_privs. A process whose uid changed is not
 * dumpable: its /proc files belong to root and nothing of its uid can ptrace it.
 *
 * Must not: judge anything, call the rest of exec/, or mount anything outside a mount namespace of its own (the
 * mount of /proc comes only after making every mount private has succeeded).
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define UID_BASE 0x40000000u

static int detected;
static par_sandbox_level level;
static unsigned next_slot;
static int pidns_fd = -1; /* this process's own PID namespace, to return to after each unshare */
static uid_t last_id;     /* the uid of the last par_sandbox_fork's child */
/* Memory cgroups (v1): cg_base, a folder of this run under this process's own memory cgroup ("" when there is none:
 * cg_state -1); cg_last, the job cgroup of the last keyed fork (in the parent). */
static int cg_state; /* 0 not tried, 1 usable, -1 not */
static char cg_base[512], cg_last[600];

const char *par_sandbox_level_name(par_sandbox_level l)
{
    return l == PAR_SANDBOX_NS ? "namespaces and a uid of its own" : l == PAR_SANDBOX_UID ? "a uid of its own" : "none";
}

/* A uid (and gid) for a sandbox. With a key (a fork server: its backend instance's label), the same uid for the
 * n-th sandbox of that key in every run, so that what it keeps in its home (exec/sandbox.h) serves the next run, and
 * never the uid of another key's (up to 256 per key; 16 bits of a hash of the key, distinct unless two keys of one
 * run collide there). Without a key (the probe, the plugin loader, a child forked directly), one of this process's
 * own, from its pid and a counter. */
#define KEYED_MAX 256
static uid_t next_id(const char *key)
{
    static uint32_t hashes[1024];
    static unsigned counts[1024], n_hashes;
    if (!key) return (uid_t)(UID_BASE + 0x01000000u + (((unsigned)getpid() & 0xFFFFu) << 8) + (next_slot++ & 255u));
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = key; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
    h &= 0xFFFFu;
    unsigned i = 0;
    while (i < n_hashes && hashes[i] != h) i++;
    if (i == n_hashes && n_hashes < 1024) hashes[n_hashes++] = h;
    unsigned n = i < 1024 ? counts[i]++ : 0;
    return (uid_t)(UID_BASE + (h << 8) + (n % KEYED_MAX));
}

/* The sandbox's home, HOME=<the executable's folder>/sandbox/<uid>: a folder of its own (created by root, mode
 * 0700, owned by owner (the uid, or root for a process kept as uid 0), in a folder only root can write; its path
 * into home) where the libraries keep their caches, and XDG_CACHE_HOME=HOME/.cache (Mesa's shader cache: lavapipe
 * compiles every shader anew without it, 4 times slower on the quick suite). Called as root, before the ids
 * change; nothing when it cannot be made. */
static void make_home(uid_t id, uid_t owner, char *home, size_t home_len)
{
    char dir[4096];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 64);
    if (n <= 0) return;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    snprintf(slash, 64, "/sandbox");
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)) return;
    size_t l = strlen(dir);
    snprintf(dir + l, sizeof dir - l, "/%u", (unsigned)id);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if ((st.st_uid != owner || st.st_gid != owner) && lchown(dir, owner, owner) != 0) return;
    setenv("HOME", dir, 1);
    snprintf(home, home_len, "%s", dir);
    l = strlen(dir);
    snprintf(dir + l, sizeof dir - l, "/.cache"); /* Mesa finds its cache from here, or the uid's passwd entry */
    setenv("XDG_CACHE_HOME", dir, 1);
}

/* uid 0 without any capability: none effective, permitted, inheritable or ambient, none in the bounding set, and
 * SECBIT_NOROOT locked, so that no exec gives any back. The files of root stay open to it (owner bits). */
static int drop_caps(void)
{
    for (int c = 0; c < 64; c++)
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno == EINVAL) break;
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
              SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED, 0, 0, 0) != 0)
        return -1;
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    return syscall(SYS_capset, &h, d) == 0 ? 0 : -1;
}

/* Every file read-only for a process kept as uid 0 (root's files stay open to it by their owner bits), in its own
 * mount namespace: every mount read-only (mount_setattr, recursive), its home (when it has one) bound writable, and
 * a private tmpfs as its temporary folder (TMPDIR): over HOME/tmp, or without a home over /dev/shm (which gets one
 * in any case, for POSIX shared memory). /tmp itself stays where it is, read-only: the checkout, the build folder
 * and the runners' venv may live under it (a CI clone in /tmp), and a tmpfs there would hide them. The harness's
 * files (the reference cache, the report, the build folder, its /tmp) are then out of its reach as they are of a uid
 * of its own. 0, or -1 with errno. */
static int read_only_world(const char *home)
{
#if defined(SYS_mount_setattr) && defined(MOUNT_ATTR_RDONLY) && defined(AT_RECURSIVE)
    struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
    struct stat st;
    const unsigned long fl = MS_NOSUID | MS_NODEV;
    const char *tmp_opt = "mode=1777,size=512m";
    char tmp[4200] = "/dev/shm";
    if (home[0]) snprintf(tmp, sizeof tmp, "%s/tmp", home);
    if (home[0] && mkdir(tmp, 0700) != 0 && errno != EEXIST) return -1;
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &a, sizeof a) != 0) return -1;
    if (stat("/dev/shm", &st) == 0 && mount("tmpfs", "/dev/shm", "tmpfs", fl, tmp_opt) != 0) return -1;
    if (home[0] && (mount(home, home, NULL, MS_BIND, NULL) != 0 ||
                    mount(NULL, home, NULL, MS_REMOUNT | MS_BIND | fl, NULL) != 0 ||
                    mount("tmpfs", tmp, "tmpfs", fl, tmp_opt) != 0))
        return -1;
    setenv("TMPDIR", tmp, 1);
    return 0;
#else
    (void)home;
    errno = ENOSYS;
    return -1;
#endif
}

/* In the child: with ns, its own mount namespace, every mount private, a /proc of its PID namespace; then (with
 * home, its home) the unprivileged ids (id 0: none), or with keep_root, uid 0 without capabilities, in a world
 * read-only but for its home and a temporary folder of its own. 0, or -1 when something failed. */
static int enter(int ns, uid_t id, int home, int keep_root)
{
    char home_dir[4096] = "";
    if (ns) {
        if (unshare(CLONE_NEWNS) != 0) return -1;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) return -1;
    }
    if (keep_root) {
        if (home) make_home(id, 0, home_dir, sizeof home_dir);
        if (ns && read_only_world(home_dir) != 0)
            fprintf(stderr, "parity: sandbox: cannot make the files read-only for a backend process kept as uid 0 "
                    "(%s): it can write what root owns\n", strerror(errno));
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        return drop_caps();
    }
    if (id && home) make_home(id, id, home_dir, sizeof home_dir);
    if (id && (setgroups(0, NULL) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0)) return -1;
    if (id || ns) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    return 0;
}

/* fork() whose child is the init of a new PID namespace; -1 with errno when the namespace cannot be made. */
static pid_t fork_pidns(void)
{
    if (pidns_fd < 0) pidns_fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (pidns_fd < 0 || unshare(CLONE_NEWPID) != 0) return -1;
    pid_t pid = fork();
    if (pid != 0) {
        int e = errno;
        if (setns(pidns_fd, CLONE_NEWPID) != 0) {
            /* every later child would land in that namespace: nothing sound can follow */
            fprintf(stderr, "parity: internal error: cannot return to the PID namespace: %s\n", strerror(errno));
            exit(3);
        }
        errno = e;
    }
    return pid;
}

/* The trial: a child that enters level l and checks that it can still read the folder of this executable (where
 * the plugins, the runners' programs and the libraries the backends load live). Its exit status: 0 when it could. */
static int trial(par_sandbox_level l, const char *dir)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = l == PAR_SANDBOX_NS ? fork_pidns() : fork();
    if (pid == 0) {
        if (l == PAR_SANDBOX_NS && getpid() != 1) _exit(2);
        if (enter(l == PAR_SANDBOX_NS, next_id(NULL), 0, 0) != 0) _exit(2);
        _exit(dir[0] && access(dir, R_OK | X_OK) != 0 ? 4 : 0);
    }
    if (pid < 0) return 2;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

static par_sandbox_level detect(char *why, size_t len)
{
    const char *env = getenv("PARITY_SANDBOX");
    why[0] = '\0';
    if (env && strcmp(env, "none") == 0) {
        snprintf(why, len, "PARITY_SANDBOX=none");
        return PAR_SANDBOX_NONE;
    }
    if (geteuid() != 0) {
        snprintf(why, len, "not root, so no uid of their own");
        return PAR_SANDBOX_NONE;
    }
    char dir[4096];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    dir[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int t = 2;
    if (!(env && strcmp(env, "uid") == 0)) {
        t = trial(PAR_SANDBOX_NS, dir);
        if (t == 0) return PAR_SANDBOX_NS;
    } else {
        snprintf(why, len, "PARITY_SANDBOX=uid");
    }
    if (t != 4) {
        t = trial(PAR_SANDBOX_UID, dir);
        if (t == 0) {
            if (!why[0]) snprintf(why, len, "no PID or mount namespace here (unshare needs CAP_SYS_ADMIN)");
            return PAR_SANDBOX_UID;
        }
    }
    if (t == 4) snprintf(why, len, "%s is not readable by an unprivileged uid", dir);
    else snprintf(why, len, "cannot change to an unprivileged uid");
    return PAR_SANDBOX_NONE;
}

par_sandbox_level par_sandbox_level_get(void)
{
    if (detected) return level;
    char why[4200];
    level = detect(why, sizeof why);
    detected = 1;
    if (level == PAR_SANDBOX_UID)
        fprintf(stderr, "parity: sandbox: %s: backend processes run as a uid of their own, without namespaces (a "
                "backend child can signal its own fork server)\n", why);
    else if (level == PAR_SANDBOX_NONE)
        fprintf(stderr, "parity: sandbox: %s: backend processes run as this user, in process groups only (they can "
                "signal and read the harness)\n", why);
    return level;
}

/* This run's folder under this process's v1 memory cgroup, made once: 1 when usable. */
static int cg_ready(void)
{
    if (cg_state) return cg_state > 0;
    cg_state = -1;
    char own[512], line[600];
    own[0] = '\0';
    FILE *f = fopen("/proc/self/cgroup", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b || strncmp(a + 1, "memory:", 7) != 0) continue;
        b[strcspn(b, "\n")] = '\0';
        snprintf(own, sizeof own, "%s", strcmp(b + 1, "/") == 0 ? "" : b + 1);
        cg_state = 0;
    }
    if (f) fclose(f);
    int n = snprintf(cg_base, sizeof cg_base, "/sys/fs/cgroup/memory%s/parity.%d", own, (int)getpid());
    if (cg_state == 0 && geteuid() == 0 && n > 0 && (size_t)n < sizeof cg_base && mkdir(cg_base, 0755) == 0) {
        cg_state = 1;
        return 1;
    }
    cg_state = -1;
    fprintf(stderr, "parity: sandbox: %s: --mem-limit counts the resident memory of a backend child and its companion "
            "only (not its descendants' nor its memfds')\n", own[0] || geteuid() != 0 ? "cannot make a memory cgroup "
            "(cgroup v1's memory controller, as root)" : "no cgroup v1 memory controller here");
    return 0;
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t w = write(fd, text, strlen(text));
    close(fd);
    return w == (ssize_t)strlen(text) ? 0 : -1;
}

/* A job cgroup for the sandbox of uid id (as root, in the parent), owned by root: the sandbox's processes can
 * neither move out of it nor change its limits. The kernel's OOM killer is off there (memory.oom_control): at the
 * hard limit a process waits (killable) instead of dying, and the worker, which polls the cgroup's memory against
 * a lower limit, kills the job's child; so the killer can never take the fork server, whose jobs all depend on it,
 * nor the companion in its place. Into cg_last ("" when it cannot be made). */
static void cg_make(uid_t id)
{
    cg_last[0] = '\0';
    if (!id || !cg_ready()) return;
    char dir[600], f[700];
    snprintf(dir, sizeof dir, "%s/%u", cg_base, (unsigned)id);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return;
    snprintf(f, sizeof f, "%s/memory.oom_control", dir);
    if (write_file(f, "1") != 0) {
        rmdir(dir);
        return;
    }
    snprintf(cg_last, sizeof cg_last, "%s", dir);
}

/* In a keyed sandbox's first process (a fork server), still root: into its job cgroup, once, so that every process
 * it forks is born there (a move per job takes the cgroup's threadgroup lock for writing, an RCU grace period each
 * time: about 0.3 ms of a case's 0.5 ms). */
static void cg_join(const char *cg)
{
    char f[700];
    snprintf(f, sizeof f, "%s/cgroup.procs", cg);
    if (write_file(f, "0") != 0)
        fprintf(stderr, "parity: sandbox: cannot join the job cgroup %s: %s; only the resident memory of its backend "
                "children and companion is counted\n", cg, strerror(errno));
}

const char *par_sandbox_last_cgroup(void)
{
    return cg_last;
}

int64_t par_sandbox_cgroup_usage(const char *cg)
{
    char path[700], buf[8192];
    snprintf(path, sizeof path, "%s/memory.stat", cg);
    if (!cg[0] || par_sandbox_read_small(path, buf, sizeof buf) <= 0) return -1;
    long long rss = -1, shmem = 0;
    for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "total_rss ", 10) == 0) rss = atoll(l + 10);
        else if (strncmp(l, "total_shmem ", 12) == 0) shmem = atoll(l + 12);
    }
    return rss < 0 ? -1 : (int64_t)(rss + shmem);
}

int par_sandbox_cgroup_limit(const char *cg, int64_t bytes)
{
    char path[700], v[32];
    snprintf(path, sizeof path, "%s/memory.limit_in_bytes", cg);
    snprintf(v, sizeof v, "%lld", (long long)bytes);
    return cg[0] ? write_file(path, v) : -1;
}

void par_sandbox_cgroup_remove(const char *cg)
{
    char path[700], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg);
    for (int tries = 0; cg[0] && rmdir(cg) != 0 && errno == EBUSY && tries < 50; tries++) {
        if (par_sandbox_read_small(path, buf, sizeof buf) > 0) /* what is left: killed, then reaped by its parent */
            for (char *p = buf; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
                if (atoi(p) > 1) kill(atoi(p), SIGKILL);
        usleep(2000);
    }
}

void par_sandbox_cgroup_end(void)
{
    if (cg_state > 0) rmdir(cg_base);
}

pid_t par_sandbox_fork(const char *key, int keep_root)
{
    par_sandbox_level l = par_sandbox_level_get();
    uid_t id = l >= PAR_SANDBOX_UID ? next_id(key) : 0;
    last_id = keep_root ? 0 : id;
    if (key) cg_make(keep_root ? 0 : id);
    int own_ns = key != NULL || keep_root; /* a process kept as uid 0 could signal every other: a namespace */
    int ns = own_ns && l == PAR_SANDBOX_NS;
    pid_t pid = ns ? fork_pidns() : -1;
    if (ns && pid < 0) ns = 0; /* (the trial could; now it cannot) a uid of its own still */
    if (!ns) pid = fork();
    if (pid == 0 && key && cg_last[0]) cg_join(cg_last);
    if (pid == 0 && enter(ns, id, key != NULL, keep_root && id) != 0) _exit(126);
    return pid;
}

uid_t par_sandbox_last_uid(void)
{
    return last_id;
}

/* kill(-1) from a process of that uid reaches every process of that uid (and nothing else: the others have
 * another uid), whatever its process group, session or parent. */
void par_sandbox_sweep(uid_t uid)
{
    if (uid < UID_BASE || geteuid() != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
        kill(-1, SIGKILL);
        _exit(0);
    }
    int st;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
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

ssize_t par_sandbox_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

pid_t par_sandbox_pidfd_pid(int pidfd)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    if (par_sandbox_read_small(path, buf, sizeof buf) <= 0) return -1;
    const char *p = strstr(buf, "\nPid:");
    long pid = p ? strtol(p + 5, NULL, 10) : -1;
    return pid > 0 ? (pid_t)pid : -1;
}
