/*
 * plugin.c - the backend registry: the built-in backends (exec/backends.def), the plugin loader, and the parser
 * of backend specs ("cpu[threads=2,kernels=scalar]").
 *
 * The loader first opens the plugin in a child process (dlopen runs its constructors, then the entry function and
 * the table checks), so that a plugin that crashes or hangs there is refused with one line naming the file and the
 * signal, and only then opens it in the calling process. It checks everything it can about a plugin's table before
 * the harness uses it, and names the plugin and the reason in every error. It must not call any of the backend's
 * entry points other than the plugin's entry function (init and the rest run in the isolated child: exec/exec.c),
 * and it never unloads a plugin it handed out.
 */
#include "exec.h"
#include "sandbox.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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


/* Open the plugin in a child first: a crash or a hang in its constructors or its entry function costs the child.
 * Returns PAR_OK when the child loaded and checked it; else msg names the file and the reason. */
static par_status load_in_child(const char *path, par_msg *msg)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return par_msgf(msg, PAR_ERROR, "plugin %s: cannot create a pipe: %s", path,
                                                    strerror(errno));
    char buf[4096];
    const char *open_path = open_path_of(path, buf, sizeof buf);
    /* opened here, so that the child, a uid of its own (exec/sandbox.h), reads it even where its folder is closed */
    int file = open_path ? open(open_path, O_RDONLY | O_CLOEXEC) : -1;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = par_sandbox_fork(NULL, 0);
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (file >= 0) close(file);
        return par_msgf(msg, PAR_ERROR, "plugin %s: cannot fork: %s", path, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC); /* a plugin's chatter while loading is not shown */
        if (devnull >= 0) {
            dup2(devnull, STDOUT_FILENO);
            dup2(devnull, STDERR_FILENO);
        }
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        par_msg m = {{0}};
        char fdpath[64];
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", file);
        par_status st = load_here(path, file >= 0 ? fdpath : open_path, NULL, &m);
        ssize_t w = write(fds[1], m.text, st == PAR_OK ? 0 : strlen(m.text));
        (void)w;
        _exit(st == PAR_OK ? 0 : 1);
    }
    close(fds[1]);
    if (file >= 0) close(file);
    char text[PAR_MSG_LEN];
    size_t got = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int timed_out = 0;
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int r = poll(&p, 1, PLUGIN_PROBE_TIMEOUT_MS);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            timed_out = 1;
            break;
        }
        ssize_t n = read(fds[0], text + got, sizeof text - 1 - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
        if (got == sizeof text - 1) break;
    }
    text[got] = '\0';
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out)
        return par_msgf(msg, PAR_ERROR, "plugin %s: no answer after %d s while loading (constructor or %s)", path,
                        PLUGIN_PROBE_TIMEOUT_MS / 1000, PAR_BACKEND_ENTRY_SYMBOL);
    if (WIFSIGNALED(status)) {
        const char *sn = strsignal(WTERMSIG(status));
        return par_msgf(msg, PAR_ERROR, "plugin %s: killed by signal %d (%s) while loading (in its constructor or "
                        "in %s); refused", path, WTERMSIG(status), sn ? sn : "unknown signal",
                        PAR_BACKEND_ENTRY_SYMBOL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && got > 0) {
        char clean[PAR_MSG_LEN];
        par_text_clean(clean, sizeof clean, text, got + 1, 1);
        return par_msgf(msg, PAR_ERROR, "%s", clean);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return par_msgf(msg, PAR_ERROR, "plugin %s: exited with status %d while loading; refused", path,
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return PAR_OK;
}

par_status par_plugin_load(const char *path, const par_backend **out, par_msg *msg)
{
    if (out) *out = NULL;
    if (!path || !*path) return par_msgf(msg, PAR_ERROR, "plugin: empty path");
    par_status st = load_in_child(path, msg);
    if (st != PAR_OK) return st;
    char buf[4096];
    return load_here(path, open_path_of(path, buf, sizeof buf), out, msg);
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
