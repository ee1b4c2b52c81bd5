/*
 * plugin.c - the backend registry: the built-in backends (exec/backends.def), the plugin loader, and the parser
 * of backend specs ("cpu[threads=2,kernels=scalar]").
 *
 * The loader opens a plugin only in a sandboxed child (dlopen runs its constructors, then the entry function and the
 * table checks), so that a plugin that crashes or hangs there is refused with one line naming the file and the
 * signal; the child reports the table's facts (name, description, version, arithmetic), which the main process
 * checks again and keeps in a table of its own whose entry points refuse to run. The main process never opens a
 * plugin: its constructors, entry function and code run only in the sandboxed processes that call
 * par_plugin_enter, and its destructors nowhere (those processes end with _exit). It names the plugin and the
 * reason in every error. It must not call any of the backend's entry points (init and the rest run in the isolated
 * child: exec/exec.c), and it never unloads a plugin it handed out.
 */
#include "exec.h"
#include "sandbox.h"
#include "core/clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PLUGIN_PROBE_TIMEOUT_MS 30000

/* ---------------------------------------------------------------------------------------------------------------
 * Built-in backends
 * ------------------------------------------------------------------------------------------------------------- */

#define PAR_BACKEND(name) const par_backend *par_backend_##name(void);
#include "backends.def"
#undef PAR_BACKEND

typedef const par_backend *(*builtin_fn)(void);

/* A NULL sentinel ends the list, so the array is never empty even when backends.def lists nothing. */
static const builtin_fn builtin_ctors[] = {
#define PAR_BACKEND(name) par_backend_##name,
#include "backends.def"
#undef PAR_BACKEND
    NULL};

#define N_BUILTIN_SLOTS (sizeof builtin_ctors / sizeof builtin_ctors[0])

static const par_backend *builtin_table[N_BUILTIN_SLOTS];
static int32_t builtin_count;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_init(void)
{
    for (size_t i = 0; i + 1 < N_BUILTIN_SLOTS; i++) {
        const par_backend *be = builtin_ctors[i]();
        if (be) builtin_table[builtin_count++] = be; /* NULL: compiled out on this platform */
    }
}

const par_backend *const *par_builtin_backends(int32_t *n)
{
    pthread_once(&builtin_once, builtin_init);
    if (n) *n = builtin_count;
    return builtin_table;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Plugins
 * ------------------------------------------------------------------------------------------------------------- */

static int valid_name(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* The path dlopen is given for a plugin named path: a bare file name would make dlopen search the library path,
 * and a plugin named on the command line is a file. NULL when too long. */
static const char *open_path_of(const char *path, char *buf, size_t len)
{
    if (strchr(path, '/')) return path;
    return (size_t)snprintf(buf, len, "./%s", path) < len ? buf : NULL;
}

/* Open and check the plugin in this process; open_path: what dlopen opens (the file, or /proc/self/fd/N). */
static par_status load_here(const char *path, const char *open_path, const par_backend **out, par_msg *msg)
{
    if (out) *out = NULL;
    if (!open_path) return par_msgf(msg, PAR_ERROR, "plugin %.200s...: path too long", path);
    dlerror();
    void *h = dlopen(open_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return par_msgf(msg, PAR_ERROR, "plugin %s: cannot open: %s", path, e ? e : "unknown error");
    }
    dlerror();
    void *sym = dlsym(h, PAR_BACKEND_ENTRY_SYMBOL);
    if (!sym) {
        dlclose(h);
        return par_msgf(msg, PAR_ERROR, "plugin %s: does not export %s", path, PAR_BACKEND_ENTRY_SYMBOL);
    }
    par_backend_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object pointer to function pointer, as POSIX dlsym requires */
    const par_backend *be = entry(PAR_BACKEND_API_VERSION);
    par_status st = PAR_ERROR;
    if (!be) {
        par_msgf(msg, st, "plugin %s: %s returned no backend table for API version %u", path,
                 PAR_BACKEND_ENTRY_SYMBOL, PAR_BACKEND_API_VERSION);
    } else if (be->api_version != PAR_BACKEND_API_VERSION) {
        par_msgf(msg, st, "plugin %s: was built against backend API version %u; this parity speaks version %u", path,
                 be->api_version, PAR_BACKEND_API_VERSION);
    } else if (be->struct_size < sizeof(par_backend)) {
        par_msgf(msg, st, "plugin %s: struct_size %u smaller than %zu (sizeof(par_backend) in API version %u)", path,
                 be->struct_size, sizeof(par_backend), PAR_BACKEND_API_VERSION);
    } else if (!valid_name(be->name)) {
        par_msgf(msg, st, "plugin %s: name '%.64s' is not [a-z0-9_]+", path, be->name ? be->name : "(null)");
    } else if (!be->run) {
        par_msgf(msg, st, "plugin %s: backend '%s' has no run()", path, be->name);
    } else if (!be->bind) {
        par_msgf(msg, st, "plugin %s: backend '%s' has no bind()", path, be->name);
    } else if ((unsigned)be->arith >= (unsigned)PAR_ARITH_N_KINDS) {
        par_msgf(msg, st, "plugin %s: backend '%s' declares unknown arithmetic %d", path, be->name, (int)be->arith);
    } else {
        st = PAR_OK;
    }
    if (st != PAR_OK) {
        dlclose(h);
        return st;
    }
    if (out) *out = be; /* the handle stays open for the life of the process */
    return PAR_OK;
}


/* What the main process knows of a plugin: the facts its loader child reports (name, strings, version, arithmetic),
 * in a table of its own whose entry points refuse to run. The plugin's code runs only in sandboxed processes: each
 * process that runs a backend (the probe's child, a fork server, a backend child, the bench child) first calls
 * par_plugin_enter, which opens the plugin there from the descriptor the main process opened and copies the
 * plugin's own table over this one, so that every inst->be of that process reaches the plugin. */
typedef struct plugin_slot {
    par_backend table;
    char path[512];
    int fd;      /* the plugin file, opened by the main process (the sandboxed uid may not open its folder) */
    int entered; /* 1 in a process where table is the plugin's own */
    char name[64], description[256], version[128];
} plugin_slot;

#define MAX_PLUGIN_SLOTS 32
static plugin_slot slots[MAX_PLUGIN_SLOTS];
static int n_slots;

/* The loader child's answer: ok 1 with the facts, or ok 0 with the reason. */
typedef struct plugin_facts {
    int32_t ok;
    uint32_t api_version, struct_size;
    int32_t arith;
    char name[64], description[256], version[128];
    char text[PAR_MSG_LEN];
} plugin_facts;

static par_status outside(void **ctx, par_msg *msg)
{
    if (ctx) *ctx = NULL;
    return par_msgf(msg, PAR_ERROR, "a plugin's code runs only in a sandboxed process");
}
static void outside_destroy(void *ctx) { (void)ctx; }
static par_status outside_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx, (void)g, (void)node;
    return outside(NULL, msg);
}
static par_status outside_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    (void)ctx, (void)g;
    return outside(prepared, msg);
}
static par_status outside_bind(void *ctx, void *prepared, const void *const *in, void *const *out, par_msg *msg)
{
    (void)ctx, (void)prepared, (void)in, (void)out;
    return outside(NULL, msg);
}
static par_status outside_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx, (void)prepared;
    return outside(NULL, msg);
}
static void outside_release(void *ctx, void *prepared) { (void)ctx, (void)prepared; }
static void *outside_get_proc(void *ctx, const char *name)
{
    (void)ctx, (void)name;
    return NULL;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* In the loader child: open and check the plugin, then write what the main process keeps to fd. */
static void loader_child(const char *path, int file, int fd)
{
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC); /* a plugin's chatter while loading is not shown */
    if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
    }
    par_x_reset_signals();
    plugin_facts f;
    memset(&f, 0, sizeof f);
    par_msg m = {{0}};
    char fdpath[64], buf[4096];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", file);
    const par_backend *be = NULL;
    if (load_here(path, file >= 0 ? fdpath : open_path_of(path, buf, sizeof buf), &be, &m) == PAR_OK) {
        f.ok = 1;
        f.api_version = be->api_version;
        f.struct_size = be->struct_size;
        f.arith = (int32_t)be->arith;
        copy_str(f.name, sizeof f.name, be->name);
        copy_str(f.description, sizeof f.description, be->description);
        copy_str(f.version, sizeof f.version, be->version);
    } else {
        copy_str(f.text, sizeof f.text, m.text);
    }
    ssize_t w = write(fd, &f, sizeof f);
    (void)w;
    _exit(0); /* no destructor of the plugin runs */
}

/* Read the loader child's answer within timeout_ms: the bytes read, or -1 on the deadline. */
static ssize_t read_answer(int fd, plugin_facts *f, int timeout_ms)
{
    size_t got = 0;
    double end = par_now_s() + timeout_ms / 1000.0;
    while (got < sizeof *f) {
        int left = (int)((end - par_now_s()) * 1000.0);
        if (left <= 0) return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return -1;
        ssize_t n = read(fd, (char *)f + got, sizeof *f - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* The loader child's answer, checked as untrusted input, into slot s. */
static par_status take_facts(const char *path, plugin_facts *f, plugin_slot *s, par_msg *msg)
{
    f->text[sizeof f->text - 1] = f->name[sizeof f->name - 1] = '\0';
    if (!f->ok) {
        char clean[PAR_MSG_LEN];
        par_text_clean(clean, sizeof clean, f->text, sizeof f->text, 1);
        return par_msgf(msg, PAR_ERROR, "%s", clean[0] ? clean : "plugin: refused while loading");
    }
    if (f->api_version != PAR_BACKEND_API_VERSION || f->struct_size < sizeof(par_backend) || !valid_name(f->name) ||
        f->arith < 0 || f->arith >= (int32_t)PAR_ARITH_N_KINDS)
        return par_msgf(msg, PAR_ERROR, "plugin %s: its loader child answered a table it would have refused (name "
                        "'%.32s', API version %u, arithmetic %d)", path, valid_name(f->name) ? f->name : "?",
                        f->api_version, (int)f->arith);
    copy_str(s->name, sizeof s->name, f->name);
    par_text_clean(s->description, sizeof s->description, f->description, sizeof f->description, 1);
    par_text_clean(s->version, sizeof s->version, f->version, sizeof f->version, 1);
    s->table = (par_backend){.api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend),
                             .name = s->name, .description = s->description, .version = s->version,
                             .arith = (par_arith)f->arith, .init = outside, .destroy = outside_destroy,
                             .supports = outside_supports, .prepare = outside_prepare, .bind = outside_bind,
                             .run = outside_run, .release = outside_release, .get_proc = outside_get_proc};
    return PAR_OK;
}

/* Open the plugin in a sandboxed child only: a crash or a hang in its constructors or its entry function costs the
 * child (the hang: timeout_s); whatever it started is killed with its uid. PAR_OK with slot s filled, else msg names
 * the file and the reason. */
static par_status load_in_child(const char *path, int file, double timeout_s, plugin_slot *s, par_msg *msg)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return par_msgf(msg, PAR_ERROR, "plugin %s: cannot create a pipe: %s", path,
                                                    strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = par_sandbox_fork(NULL, 0);
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return par_msgf(msg, PAR_ERROR, "plugin %s: cannot fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        loader_child(path, file, fds[1]);
    }
    uid_t uid = par_sandbox_last_uid();
    close(fds[1]);
    int timeout_ms = timeout_s > 0 && timeout_s < 3600 ? (int)(timeout_s * 1000) : PLUGIN_PROBE_TIMEOUT_MS;
    plugin_facts *f = calloc(1, sizeof *f);
    ssize_t got = f ? read_answer(fds[0], f, timeout_ms) : 0;
    close(fds[0]);
    kill(pid, SIGKILL); /* it has answered (or will not): nothing of it is needed any more */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    par_sandbox_sweep(uid);
    par_status st = PAR_ERROR;
    if (!f)
        par_msgf(msg, st, "plugin %s: out of memory", path);
    else if (got < 0)
        par_msgf(msg, st, "plugin %s: no answer after %.3g s while loading (constructor or %s)", path,
                 timeout_ms / 1000.0, PAR_BACKEND_ENTRY_SYMBOL);
    else if (got == (ssize_t)sizeof *f)
        st = take_facts(path, f, s, msg);
    else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
        const char *sn = strsignal(WTERMSIG(status));
        par_msgf(msg, st, "plugin %s: killed by signal %d (%s) while loading (in its constructor or in %s); refused",
                 path, WTERMSIG(status), sn ? sn : "unknown signal", PAR_BACKEND_ENTRY_SYMBOL);
    } else
        par_msgf(msg, st, "plugin %s: ended (status %d) while loading, without an answer; refused", path,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    free(f);
    return st;
}

par_status par_plugin_load(const char *path, double timeout_s, const par_backend **out, par_msg *msg)
{
    if (out) *out = NULL;
    if (!path || !*path) return par_msgf(msg, PAR_ERROR, "plugin: empty path");
    if (n_slots == MAX_PLUGIN_SLOTS) return par_msgf(msg, PAR_ERROR, "plugin %s: more than %d plugins", path,
                                                     MAX_PLUGIN_SLOTS);
    char buf[4096];
    const char *open_path = open_path_of(path, buf, sizeof buf);
    if (!open_path) return par_msgf(msg, PAR_ERROR, "plugin %.200s...: path too long", path);
    /* opened here and kept: the sandboxed processes, uids of their own, open it through /proc/self/fd even where
     * its folder is closed to them */
    int file = open(open_path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return par_msgf(msg, PAR_ERROR, "plugin %s: cannot open: %s", path, strerror(errno));
    plugin_slot *s = &slots[n_slots];
    memset(s, 0, sizeof *s);
    par_status st = load_in_child(path, file, timeout_s, s, msg);
    if (st != PAR_OK) {
        close(file);
        return st;
    }
    copy_str(s->path, sizeof s->path, path);
    s->fd = file;
    n_slots++;
    if (out) *out = &s->table;
    return PAR_OK;
}

par_status par_plugin_enter(const par_backend *be, par_msg *msg)
{
    plugin_slot *s = NULL;
    for (int i = 0; i < n_slots && !s; i++)
        if (be == &slots[i].table) s = &slots[i];
    if (!s || s->entered) return PAR_OK; /* a built-in backend, or entered already */
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", s->fd);
    const par_backend *real = NULL;
    par_status st = load_here(s->path, fdpath, &real, msg);
    if (st != PAR_OK) return st;
    if (strcmp(real->name, s->name) != 0 || (int32_t)real->arith != (int32_t)s->table.arith)
        return par_msgf(msg, PAR_ERROR, "plugin %s: its entry function returned another table here (name '%s', "
                        "arithmetic %d) than when it was loaded ('%s', %d)", s->path, real->name, (int)real->arith,
                        s->name, (int)s->table.arith);
    s->table = *real; /* the plugin's own entry points, from here on, in this process */
    s->entered = 1;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Backend specs: name or name[key=value,key=value]
 * ------------------------------------------------------------------------------------------------------------- */

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

static int key_char(char c)
{
    return name_char(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '-';
}

/* Values: any printable character except the spec's own punctuation and spaces. */
static int value_char(char c)
{
    return c > ' ' && c < 127 && c != ',' && c != '[' && c != ']' && c != '=' && c != '\'' && c != '"';
}

static par_status parse_spec(const char *spec, par_backend_inst *inst, par_msg *msg)
{
    if (!spec) return par_msgf(msg, PAR_ERROR, "backend spec: empty");
    size_t len = strlen(spec);
    if (len == 0) return par_msgf(msg, PAR_ERROR, "backend spec: empty");
    if (len >= sizeof inst->label)
        return par_msgf(msg, PAR_ERROR, "backend spec '%.40s...': longer than %zu characters", spec,
                        sizeof inst->label - 1);
    size_t i = 0;
    while (name_char(spec[i])) i++;
    if (i == 0)
        return par_msgf(msg, PAR_ERROR, "backend spec '%s': expected a backend name [a-z0-9_]+ at position 0", spec);
    if (spec[i] != '\0' && spec[i] != '[')
        return par_msgf(msg, PAR_ERROR, "backend spec '%s': character '%c' at position %zu: a name is [a-z0-9_]+, "
                        "knobs go in [key=value,...]", spec, spec[i], i);
    if (spec[i] == '[') {
        i++;
        if (spec[i] == ']') return par_msgf(msg, PAR_ERROR, "backend spec '%s': empty knob list '[]'", spec);
        for (;;) {
            size_t k0 = i;
            while (key_char(spec[i])) i++;
            size_t klen = i - k0;
            if (klen == 0)
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': expected a knob name at position %zu", spec, k0);
            if (spec[i] != '=')
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': knob '%.*s' has no '=value'", spec, (int)klen,
                                spec + k0);
            i++;
            size_t v0 = i;
            while (value_char(spec[i])) i++;
            size_t vlen = i - v0;
            if (vlen == 0)
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': knob '%.*s' has an empty value", spec, (int)klen,
                                spec + k0);
            if (inst->n_knobs >= PAR_MAX_KNOBS)
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': more than %d knobs", spec, PAR_MAX_KNOBS);
            if (klen >= sizeof inst->knob_key[0] || vlen >= sizeof inst->knob_val[0])
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': knob '%.*s' or its value is too long", spec,
                                (int)klen, spec + k0);
            for (int32_t q = 0; q < inst->n_knobs; q++)
                if (strlen(inst->knob_key[q]) == klen && memcmp(inst->knob_key[q], spec + k0, klen) == 0)
                    return par_msgf(msg, PAR_ERROR, "backend spec '%s': knob '%.*s' given twice", spec, (int)klen,
                                    spec + k0);
            memcpy(inst->knob_key[inst->n_knobs], spec + k0, klen);
            inst->knob_key[inst->n_knobs][klen] = '\0';
            memcpy(inst->knob_val[inst->n_knobs], spec + v0, vlen);
            inst->knob_val[inst->n_knobs][vlen] = '\0';
            inst->n_knobs++;
            if (spec[i] == ',') {
                i++;
                continue;
            }
            if (spec[i] == ']') break;
            if (spec[i] == '\0') return par_msgf(msg, PAR_ERROR, "backend spec '%s': missing ']'", spec);
            return par_msgf(msg, PAR_ERROR, "backend spec '%s': unexpected character '%c' at position %zu", spec,
                            spec[i], i);
        }
        i++;
        if (spec[i] != '\0')
            return par_msgf(msg, PAR_ERROR, "backend spec '%s': unexpected text after ']' at position %zu", spec, i);
    }
    memcpy(inst->label, spec, len + 1);
    return PAR_OK;
}

par_status par_knob_threads_parse(const char *s, int32_t *out, par_msg *msg)
{
    int v = 0;
    par_status st = par_knob_threads(s, &v, msg);
    if (st == PAR_OK && out) *out = v;
    return st;
}

/* The shared knobs, checked once here for every backend: threads and kernels. Other knobs are the backend's. */
static par_status check_shared_knob(const char *spec, const char *key, const char *val, par_msg *msg)
{
    if (strcmp(key, "threads") == 0) {
        par_msg m = {{0}};
        if (par_knob_threads_parse(val, NULL, &m) != PAR_OK)
            return par_msgf(msg, PAR_ERROR, "backend spec '%s': %s", spec, m.text);
    } else if (strcmp(key, "kernels") == 0) {
        for (const char *p = val; *p; p++)
            if (!name_char(*p))
                return par_msgf(msg, PAR_ERROR, "backend spec '%s': knob kernels '%s': not a name [a-z0-9_]+", spec,
                                val);
    }
    return PAR_OK;
}

/* inst is reset (be NULL, no plugin path, not probed) and filled only when the whole spec is valid. */
par_status par_backend_spec_parse(const char *spec, par_backend_inst *inst, par_msg *msg)
{
    if (!inst) return par_msgf(msg, PAR_ERROR, "backend spec: no instance to fill");
    par_backend_inst *tmp = calloc(1, sizeof *tmp);
    if (!tmp) return par_msgf(msg, PAR_ERROR, "backend spec: out of memory");
    par_status st = parse_spec(spec, tmp, msg);
    for (int32_t k = 0; st == PAR_OK && k < tmp->n_knobs; k++)
        st = check_shared_knob(spec, tmp->knob_key[k], tmp->knob_val[k], msg);
    if (st == PAR_OK) *inst = *tmp;
    free(tmp);
    return st;
}

int32_t par_backend_apply_knobs(const par_backend_inst *inst, void *ctx, par_status *st, par_msg *m)
{
    if (inst->n_knobs <= 0) return -1;
    par_set_knob_fn set = inst->be->get_proc ? (par_set_knob_fn)inst->be->get_proc(ctx, PAR_PROC_SET_KNOB) : NULL;
    for (int32_t i = 0; i < inst->n_knobs && i < PAR_MAX_KNOBS; i++) {
        if (!set) {
            *st = PAR_ERROR;
            snprintf(m->text, sizeof m->text, "backend '%s' has no knobs (no %s)",
                     inst->be->name ? inst->be->name : "?", PAR_PROC_SET_KNOB);
            return i;
        }
        m->text[0] = '\0';
        *st = set(ctx, inst->knob_key[i], inst->knob_val[i], m);
        if (*st != PAR_OK) return i;
    }
    return -1;
}
