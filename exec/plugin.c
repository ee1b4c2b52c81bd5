/*
 * plugin.c - the backend registry: the built-in backends (exec/backends.def), the plugin loader, and the parser
 * of backend specs ("cpu[threads=2,kernels=scalar]").
 *
 * The loader checks everything it can about a plugin's table before the harness uses it, and names the plugin and
 * the reason in every error. It must not call any of the backend's entry points other than the plugin's entry
 * function (init and the rest run in the isolated child: exec/exec.c), and it never unloads a plugin it handed
 * out.
 */
#include "exec.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

par_status par_plugin_load(const char *path, const par_backend **out, par_msg *msg)
{
    if (out) *out = NULL;
    if (!path || !*path) return par_msgf(msg, PAR_ERROR, "plugin: empty path");
    /* A bare file name would make dlopen search the library path; a plugin named on the command line is a file. */
    char buf[4096];
    const char *open_path = path;
    if (!strchr(path, '/')) {
        if ((size_t)snprintf(buf, sizeof buf, "./%s", path) >= sizeof buf)
            return par_msgf(msg, PAR_ERROR, "plugin %.200s...: path too long", path);
        open_path = buf;
    }
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
    } else if ((unsigned)be->arith > (unsigned)PAR_ARITH_F16) {
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

/* inst is reset (be NULL, no plugin path, not probed) and filled only when the whole spec is valid. */
par_status par_backend_spec_parse(const char *spec, par_backend_inst *inst, par_msg *msg)
{
    if (!inst) return par_msgf(msg, PAR_ERROR, "backend spec: no instance to fill");
    par_backend_inst *tmp = calloc(1, sizeof *tmp);
    if (!tmp) return par_msgf(msg, PAR_ERROR, "backend spec: out of memory");
    par_status st = parse_spec(spec, tmp, msg);
    if (st == PAR_OK) *inst = *tmp;
    free(tmp);
    return st;
}
