/*
 * sandbox.h - where a process that runs backend code runs: the fork servers (with their backend children and
 * companions), the probe's and the plugin loader's children, and any backend child forked directly. Detected once
 * per run, the strongest level this machine allows:
 *
 *   PAR_SANDBOX_NS    (root with CAP_SYS_ADMIN) a fork server is the first process (init) of its own PID namespace
 *                     with a mount namespace of its own whose /proc shows that namespace only; it and everything it
 *                     forks run as an unprivileged uid and gid of its own (no supplementary groups, no capability,
 *                     no_new_privs). Nothing outside the namespace can be named (signal, ptrace, /proc/PID/mem,
 *                     prlimit), the server cannot be signalled by its children (an init ignores them), and whatever
 *                     is left when the server ends dies with it. Other sandboxed processes: an unprivileged uid.
 *   PAR_SANDBOX_UID   (root without namespaces, as in a container without CAP_SYS_ADMIN) every sandboxed process
 *                     runs as an unprivileged uid of its own: it cannot signal, ptrace or prlimit the harness, read
 *                     its memory or write its files; a backend child can still signal its own fork server (same uid).
 *   PAR_SANDBOX_NONE  (not root, or the build folder unreadable to an unprivileged uid) process groups only.
 *
 * Below PAR_SANDBOX_NS, one line on stderr says so and why, once per run. PARITY_SANDBOX=uid or none asks for a
 * weaker level (to test the fallbacks). docs/reliability.md lists what each process can reach, and the tests.
 *
 * Must not: judge anything, or call the rest of exec/.
 */
#ifndef PAR_SANDBOX_H
#define PAR_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

typedef enum par_sandbox_level { PAR_SANDBOX_NONE = 0, PAR_SANDBOX_UID = 1, PAR_SANDBOX_NS = 2 } par_sandbox_level;

/* The level of this machine (detected on the first call: a trial child; the fallback line printed then). */
par_sandbox_level par_sandbox_level_get(void);
const char *par_sandbox_level_name(par_sandbox_level l);

/* fork() into a sandbox. With a key (a fork server: its instance's label), at level NS the child is the init of a
 * new PID namespace with its own /proc, and its uid is the same in every run for the n-th server of that key, with
 * a home of its own (HOME=<the executable's folder>/sandbox/<uid>, mode 0700: the libraries' caches, such as Mesa's
 * shader cache). Without a key (NULL: the probe, the plugin loader, a child forked directly) a uid of the calling
 * process's own, a new one per call, and no namespace. At level NONE a plain fork. Returns as fork() does; in the
 * child the sandbox is entered already (a failure there ends the child with status 126).
 * With keep_root (a server whose companion's program only root may run: a Python under /root), the child keeps uid
 * 0 but holds no capability (it cannot umount its /proc, signal outside its namespace or regain one by exec); it
 * can write what root owns. */
pid_t par_sandbox_fork(const char *key, int keep_root);

/* The uid of the last child par_sandbox_fork made (in the parent; 0 at level NONE and for keep_root). Sweep: kill
 * every process of that uid, wherever it went (a daemon of a plugin's constructor); nothing for a uid that is not a
 * sandbox's. For the uids of one call (key NULL) only: a keyed uid may be another run's too. */
uid_t par_sandbox_last_uid(void);
void par_sandbox_sweep(uid_t uid);

/* Memory counted as a whole (cgroup v1's memory controller, where this process may make cgroups under its own: as
 * root, /sys/fs/cgroup/memory writable): a keyed fork (a fork server) gets a job cgroup of its own,
 * par_sandbox_last_cgroup() in the parent ("" where there is none: the RSS of the child and its companion is all
 * that is counted then). The server joins it at its start, as root, before any backend code, so that every process
 * it forks (each job's child, their descendants, the companion) is born in it and the memfds they fill count with
 * it; what the server itself allocates from then on (its warm start's) counts too. The kernel's OOM killer is off
 * there: at the hard limit a process waits until the caller, polling, kills the job. par_sandbox_cgroup_usage: the
 * cgroup's resident and shared memory (total_rss + total_shmem of memory.stat; page cache aside), -1 when
 * unreadable; _limit sets the kernel's hard limit (the backstop of the caller's polling; 0, or -1); _remove kills
 * what is left in it and removes it; _end removes this run's folder. */
const char *par_sandbox_last_cgroup(void);
int64_t par_sandbox_cgroup_usage(const char *cg);
int par_sandbox_cgroup_limit(const char *cg, int64_t bytes);
void par_sandbox_cgroup_remove(const char *cg);
void par_sandbox_cgroup_end(void);

/* The pid of a pidfd's process in this process's PID namespace (from /proc/self/fdinfo), or -1. */
pid_t par_sandbox_pidfd_pid(int pidfd);

/* Default dispositions and an empty mask, so that a fault kills a backend child with its signal. */
void par_x_reset_signals(void);

/* A small file (from /proc) read at once into buf, terminated: the bytes read, or -1. */
ssize_t par_sandbox_read_small(const char *path, char *buf, size_t len);

#endif
