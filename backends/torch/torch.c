/*
 * torch.c - the built-in `torch` backend: PyTorch 1.13's CPU path (libtorch), whose C++ side is its own library
 * object, libparity_torch.so (backends/torch/torch_*.cpp, built by builtin.mk into build/lib/), opened here with
 * dlopen so that parity, libparity.a and the unit tests never link libtorch: only a process that creates a torch
 * context maps it, once (the handle is kept for the life of the process, so a fork server's children inherit it).
 *
 * The library is looked for at init: the environment (PARITY_TORCH_LIB), lib/ beside the executable's folder
 * (build/parity -> build/lib/), lib/ beside its parent (build/tests/test_torch -> build/lib/), then the installed
 * folder; the knob lib=PATH names it instead. A missing or unloadable library does not fail init: every node is
 * then UNSUPPORTED with the paths tried and dlerror's reason. This file checks the knobs (mode=eager|mobile|quantized,
 * qengine=qnnpack|onednn|fbgemm, requantize=none|float, threads=N, lib=PATH), describes them, declares the
 * requantization scheme, and
 * forwards everything else to the library's table (torch_lib.h), creating the library's own context lazily, in the
 * process that runs the case.
 *
 * It must not include anything but core/ and its own folder, nor call libtorch.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torch_lib.h"

#ifndef PAR_TORCH_LIB_DIR
#define PAR_TORCH_LIB_DIR "/usr/local/lib"
#endif
#ifndef PAR_TORCH_VERSION
#define PAR_TORCH_VERSION "unknown"
#endif

/* The library once opened in this process (never closed: libtorch does not support unloading). */
static struct {
    void *handle;
    const par_backend *be;
    char path[PATH_MAX];
    char why[400]; /* the reason the default search failed, "" when it has not run */
} lib;

typedef struct tsh_ctx {
    const par_backend *be; /* the library's table, NULL when none is loaded */
    void *inner;           /* the library's context, created at first use */
    char mode[12], qengine[12], requant[8];
    int threads;
    char why[400];
} tsh_ctx;

static int try_open(const char *path, char *tried, size_t tried_len, const char *what)
{
    if (lib.handle && strcmp(lib.path, path) == 0) return 1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        size_t used = strlen(tried);
        snprintf(tried + used, tried_len - used, "%s%s%s (%s)", used ? "; " : "", what, path, e ? e : "not found");
        return 0;
    }
    par_torch_entry_fn entry;
    *(void **)&entry = dlsym(h, PAR_TORCH_ENTRY_SYMBOL);
    const par_backend *be = entry ? entry() : NULL;
    if (!be || be->api_version != PAR_BACKEND_API_VERSION || be->struct_size < sizeof(par_backend)) {
        size_t used = strlen(tried);
        snprintf(tried + used, tried_len - used, "%s%s%s (no usable %s)", used ? "; " : "", what, path,
                 PAR_TORCH_ENTRY_SYMBOL);
        return 0; /* the handle is left open: dlclose of a C++ library that ran its initializers is unsafe */
    }
    lib.handle = h;
    lib.be = be;
    snprintf(lib.path, sizeof lib.path, "%s", path);
    return 1;
}

/* dirname(exe) + suffix + the library's name. */
static int beside_exe(const char *suffix, char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = 0;
    int k = snprintf(out, len, "%s%s/" PAR_TORCH_LIB_NAME, exe, suffix);
    return k > 0 && (size_t)k < len;
}

static void open_default(void)
{
    if (lib.handle || lib.why[0]) return;
    char tried[sizeof lib.why] = "", p[PATH_MAX];
    const char *env = getenv("PARITY_TORCH_LIB");
    if (env && *env) {
        try_open(env, tried, sizeof tried, "PARITY_TORCH_LIB=");
    } else {
        static const char *const sub[] = {"/lib", "/../lib"};
        for (int i = 0; i < 2 && !lib.handle; i++)
            if (beside_exe(sub[i], p, sizeof p) && access(p, F_OK) == 0) try_open(p, tried, sizeof tried, "");
        if (!lib.handle && access(PAR_TORCH_LIB_DIR "/" PAR_TORCH_LIB_NAME, F_OK) == 0)
            try_open(PAR_TORCH_LIB_DIR "/" PAR_TORCH_LIB_NAME, tried, sizeof tried, "");
        if (!lib.handle && !tried[0])
            snprintf(tried, sizeof tried, "%s not found in lib/ beside the executable or its parent, nor in %s "
                     "(make builds it where libtorch-dev is installed)", PAR_TORCH_LIB_NAME, PAR_TORCH_LIB_DIR);
    }
    if (!lib.handle) snprintf(lib.why, sizeof lib.why, "%s", tried);
}

static par_status tsh_init(void **ctx, par_msg *msg)
{
    tsh_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    snprintf(c->mode, sizeof c->mode, "eager");
    snprintf(c->qengine, sizeof c->qengine, "qnnpack");
    snprintf(c->requant, sizeof c->requant, "none");
    c->threads = 1;
    open_default();
    c->be = lib.be;
    if (!c->be) snprintf(c->why, sizeof c->why, "%s", lib.why);
    *ctx = c;
    return PAR_OK;
}

static void tsh_destroy(void *ctx)
{
    tsh_ctx *c = ctx;
    if (!c) return;
    if (c->inner && c->be->destroy) c->be->destroy(c->inner);
    free(c);
}

/* The library's context, created with the knobs on first use. */
static par_status inner(tsh_ctx *c, par_msg *msg)
{
    if (c->inner) return PAR_OK;
    if (!c->be) return par_msgf(msg, PAR_UNSUPPORTED, "no torch library: %s", c->why);
    par_status st = c->be->init(&c->inner, msg);
    if (st != PAR_OK) {
        c->inner = NULL;
        return st;
    }
    par_set_knob_fn set = c->be->get_proc ? (par_set_knob_fn)c->be->get_proc(c->inner, PAR_PROC_SET_KNOB) : NULL;
    if (!set) return par_msgf(msg, PAR_ERROR, "%s: the library has no %s", lib.path, PAR_PROC_SET_KNOB);
    char threads[16];
    snprintf(threads, sizeof threads, "%d", c->threads);
    if ((st = set(c->inner, "mode", c->mode, msg)) != PAR_OK ||
        (st = set(c->inner, "qengine", c->qengine, msg)) != PAR_OK ||
        (st = set(c->inner, "requantize", c->requant, msg)) != PAR_OK ||
        (st = set(c->inner, "threads", threads, msg)) != PAR_OK)
        return st;
    return PAR_OK;
}

static par_status tsh_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    tsh_ctx *c = ctx;
    if (c->inner) return par_knob_too_late(key, "supports", msg);
    if (strcmp(key, "mode") == 0) {
        if (strcmp(value, "eager") && strcmp(value, "mobile") && strcmp(value, "quantized"))
            return par_msgf(msg, PAR_ERROR, "knob 'mode': value '%s' is not one of eager, mobile, quantized", value);
        snprintf(c->mode, sizeof c->mode, "%s", value);
        return PAR_OK;
    }
    if (strcmp(key, "qengine") == 0) {
        if (strcmp(value, "qnnpack") && strcmp(value, "onednn") && strcmp(value, "fbgemm"))
            return par_msgf(msg, PAR_ERROR, "knob 'qengine': value '%s' is not one of qnnpack, onednn, fbgemm",
                            value);
        snprintf(c->qengine, sizeof c->qengine, "%s", value);
        return PAR_OK;
    }
    if (strcmp(key, "requantize") == 0) {
        if (strcmp(value, "none") && strcmp(value, "float"))
            return par_msgf(msg, PAR_ERROR, "knob 'requantize': value '%s' is not one of none, float", value);
        snprintf(c->requant, sizeof c->requant, "%s", value);
        return PAR_OK;
    }
    if (strcmp(key, "threads") == 0) return par_knob_threads(value, &c->threads, msg);
    if (strcmp(key, "lib") == 0) {
        char tried[400] = "";
        if (lib.handle && strcmp(lib.path, value) != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'lib': cannot load %s: %s is already loaded in this process "
                            "(one torch library per process)", value, lib.path);
        if (!try_open(value, tried, sizeof tried, "lib="))
            return par_msgf(msg, PAR_ERROR, "knob 'lib': %s", tried);
        c->be = lib.be;
        c->why[0] = 0;
        return PAR_OK;
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (torch knobs: mode=eager|mobile|quantized, "
                    "qengine=qnnpack|onednn|fbgemm, requantize=none|float, threads=N, lib=PATH)", key);
}

static size_t tsh_describe(void *ctx, char *buf, size_t len)
{
    const tsh_ctx *c = ctx;
    int n = snprintf(buf, len, "mode=%s;qengine=%s;threads=%d;requant=%s;requantize=%s;lib=%s", c->mode,
                     c->qengine, c->threads, strcmp(c->qengine, "qnnpack") == 0 ? "pytorch_qnnp" : "fp32", c->requant,
                     c->be ? lib.path : "none");
    return n < 0 ? 0 : (size_t)n;
}

static par_status tsh_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    tsh_ctx *c = ctx;
    par_status st = inner(c, msg);
    return st != PAR_OK ? st : c->be->supports(c->inner, g, node, msg);
}

static par_status tsh_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    tsh_ctx *c = ctx;
    *prepared = NULL;
    par_status st = inner(c, msg);
    return st != PAR_OK ? st : c->be->prepare(c->inner, g, prepared, msg);
}

static par_status tsh_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    tsh_ctx *c = ctx;
    return c->be->bind(c->inner, prepared, inputs, outputs, msg);
}

static par_status tsh_run(void *ctx, void *prepared, par_msg *msg)
{
    tsh_ctx *c = ctx;
    return c->be->run(c->inner, prepared, msg);
}

static void tsh_release(void *ctx, void *prepared)
{
    tsh_ctx *c = ctx;
    if (prepared && c->inner) c->be->release(c->inner, prepared);
}

/* QNNPACK (PyTorch's): fp32 requantization in conv and linear, its own 22-bit add; oneDNN and fbgemm: fp32. */
static par_requant tsh_requant(void *ctx)
{
    const tsh_ctx *c = ctx;
    return strcmp(c->qengine, "qnnpack") == 0 ? PAR_REQUANT_PYTORCH_QNNP : PAR_REQUANT_FP32;
}

static par_requant tsh_node_requant(void *ctx, void *prepared, int32_t node)
{
    tsh_ctx *c = ctx;
    par_node_requant_fn f =
        c->inner && c->be->get_proc ? (par_node_requant_fn)c->be->get_proc(c->inner, PAR_PROC_NODE_REQUANT) : NULL;
    return f && prepared ? f(c->inner, prepared, node) : tsh_requant(ctx);
}

/* PAR_PROC_REUSE: a context serves the next job. Each prepare defines a fresh torch::jit::Module (its own
 * compilation unit, its own graph executor) and release drops it; the globals this backend sets (threads, qengine)
 * are the instance's knobs, the same for every job of the instance. What is kept is the process's libtorch: its
 * thread pools, its operator registry and allocator, which a fresh child built again for every case. */
static int tsh_reuse(void *ctx)
{
    (void)ctx;
    return 1;
}

static void *tsh_get_proc(void *ctx, const char *name)
{
    if (strcmp(name, PAR_PROC_REUSE) == 0) return (void *)(par_reuse_fn)tsh_reuse;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)tsh_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)tsh_describe;
    if (strcmp(name, PAR_PROC_REQUANT) == 0) return (void *)(par_requant_fn)tsh_requant;
    if (strcmp(name, PAR_PROC_NODE_REQUANT) == 0) return (void *)(par_node_requant_fn)tsh_node_requant;
    return NULL;
}

static const par_backend torch_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "torch",
    .description = "PyTorch's CPU path (libtorch " PAR_TORCH_VERSION "): TorchScript eager, optimizeForMobile "
                   "(XNNPACK), quantized ops (QNNPACK, oneDNN)",
    .version = PAR_TORCH_VERSION,
    .arith = PAR_ARITH_F32,
    .init = tsh_init,
    .destroy = tsh_destroy,
    .supports = tsh_supports,
    .prepare = tsh_prepare,
    .bind = tsh_bind,
    .run = tsh_run,
    .release = tsh_release,
    .get_proc = tsh_get_proc,
};

const par_backend *par_backend_torch(void);

const par_backend *par_backend_torch(void)
{
    return &torch_backend;
}
