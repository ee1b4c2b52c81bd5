/*
 * context.c - a test plugin for the per-context entries of the ABI (tests/report/test_context.sh): f32 relu of
 * one-node graphs (tp_common.h) whose arithmetic comes from a knob through PAR_PROC_ARITH, which reports
 * diagnostics through PAR_PROC_DIAGNOSTICS when a knob says so, and synthetic device times through
 * PAR_PROC_DEVICE_TIME. Like any plugin it sees only the public header.
 *
 * Knobs (the tests' levers, one thing each):
 *   arith=f32|f16_storage|f16|bf16|bf16_storage|N
 *                                what PAR_PROC_ARITH answers (default f32, the table's); N an integer answered as
 *                                is (a value outside par_arith must make the instance unusable, naming it)
 *   round=f32|f16                the output's precision: f16 rounds every result to the nearest f16 (ties to even),
 *                                as a backend storing f16 does; the values are then right only under an f16_storage
 *                                budget (relu's f32 budget is 0)
 *   diag=prepare|N|every         report one diagnostic after prepare, or after run N (each once, as the ABI asks),
 *                                or one after prepare and one after every run (each a new message)
 *   note=TEXT                    PAR_PROC_NOTE: TEXT as the note after prepare
 *   diag_raw=1                   the diagnostic's text is every byte of the buffer: control characters, bytes that
 *                                are not UTF-8 and no terminating NUL (the harness must clean and bound it)
 *   device=MS                    measure device time: every run lasts at least 2 MS + 0.5 ms of wall time and
 *                                reports exactly MS ms of device time in all (times PARITY_TP_CONTEXT_DEVICE_SCALE
 *                                when set, in [0.5, 2]: the report diff's lever, which leaves the wall time alone)
 *                                and 1 ms for each node; 0 (default): the device cannot time (device_time returns 0)
 *   device_bad=1                 report a device time of 1e6 ms, more than any run here takes
 *   crash=1                      the run dies of SIGSEGV (a write through a null pointer)
 */
#define _POSIX_C_SOURCE 200809L
#include "tp_common.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

typedef struct ctx_t {
    long arith;        /* PAR_PROC_ARITH's answer */
    int round16;
    long diag_run;     /* -1: none, 0: after prepare, N: after run N */
    double device_ms;  /* 0: not measured */
    int device_bad;
    int crash;
    int diag_every;    /* a diagnostic after prepare and after every run */
    int diag_raw;
    int diag_pending;  /* a diagnostic not yet reported */
    char diag_text[96];
    char note[96];     /* PAR_PROC_NOTE's text after prepare; "" when none */
} ctx_t;

/* One context each (parity bench opens several instances of one backend in one process). */
static par_status cx_init(void **ctx, par_msg *msg)
{
    ctx_t *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "out of memory");
    c->arith = PAR_ARITH_F32;
    c->diag_run = -1;
    *ctx = c;
    return PAR_OK;
}

static void cx_destroy(void *ctx)
{
    free(ctx);
}

static par_status cx_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    ctx_t *c = ctx;
    char *end = NULL;
    if (strcmp(key, "arith") == 0) {
        if (strcmp(value, "f32") == 0) c->arith = PAR_ARITH_F32;
        else if (strcmp(value, "f16_storage") == 0) c->arith = PAR_ARITH_F16_STORAGE;
        else if (strcmp(value, "f16") == 0) c->arith = PAR_ARITH_F16;
        else if (strcmp(value, "bf16") == 0) c->arith = PAR_ARITH_BF16;
        else if (strcmp(value, "bf16_storage") == 0) c->arith = PAR_ARITH_BF16_STORAGE;
        else {
            c->arith = strtol(value, &end, 10);
            if (!end || *end) goto bad;
        }
        return PAR_OK;
    }
    if (strcmp(key, "round") == 0 && (strcmp(value, "f32") == 0 || strcmp(value, "f16") == 0)) {
        c->round16 = strcmp(value, "f16") == 0;
        return PAR_OK;
    }
    if (strcmp(key, "diag") == 0 && strcmp(value, "every") == 0) {
        c->diag_run = 0;
        c->diag_every = 1;
        return PAR_OK;
    }
    if (strcmp(key, "note") == 0) {
        snprintf(c->note, sizeof c->note, "%s", value);
        return PAR_OK;
    }
    if (strcmp(key, "diag_raw") == 0 && (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
        c->diag_raw = value[0] == '1';
        return PAR_OK;
    }
    if (strcmp(key, "diag") == 0) {
        c->diag_every = 0;
        c->diag_run = strcmp(value, "prepare") == 0 ? 0 : strtol(value, &end, 10);
        if (strcmp(value, "prepare") != 0 && (!end || *end || c->diag_run < 1)) goto bad;
        return PAR_OK;
    }
    if (strcmp(key, "device") == 0) {
        c->device_ms = strtod(value, &end);
        if (!end || *end || !(c->device_ms >= 0 && c->device_ms <= 1000)) goto bad;
        return PAR_OK;
    }
    if (strcmp(key, "device_bad") == 0 && (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
        c->device_bad = value[0] == '1';
        return PAR_OK;
    }
    if (strcmp(key, "crash") == 0 && (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
        c->crash = value[0] == '1';
        return PAR_OK;
    }
bad:
    return par_msgf(msg, PAR_ERROR, "unknown knob or value '%s=%s' (arith=f32|f16_storage|f16|bf16|bf16_storage|N, "
                    "round=f32|f16, "
                    "diag=prepare|N|every, diag_raw=0|1, note=TEXT, device=MS, device_bad=0|1, crash=0|1)", key, value);
}

static par_arith cx_arith(void *ctx)
{
    return (par_arith)((ctx_t *)ctx)->arith;
}

/* Round to the nearest f16 value, ties to even (the default rounding mode of nearbyint): 11 significant bits for
 * normal f16 numbers, multiples of 2^-24 below 2^-14, infinity beyond 65504 (and from 65520 up, which rounds there). */
static float round_f16(float x)
{
    if (!isfinite(x) || x == 0.0f) return x;
    double a = fabs((double)x), q;
    if (a < 0x1p-14) q = 0x1p-24;
    else q = ldexp(1.0, ilogb(a) - 10);
    double r = nearbyint(a / q) * q;
    if (r > 65504.0) r = INFINITY;
    return (float)copysign(r, (double)x);
}

static par_status cx_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    ctx_t *c = ctx;
    par_status st = tp_prepare(ctx, g, prepared, msg);
    if (st == PAR_OK && c->diag_run >= 0) {
        c->diag_pending = c->diag_run == 0;
        if (c->diag_run == 0) snprintf(c->diag_text, sizeof c->diag_text, "validation: test diagnostic after prepare");
        else snprintf(c->diag_text, sizeof c->diag_text, "validation: test diagnostic after run %ld", c->diag_run);
    }
    return st;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + 1e-6 * (double)t.tv_nsec;
}

static par_status cx_run(void *ctx, void *prepared, par_msg *msg)
{
    ctx_t *c = ctx;
    tp_prep *p = prepared;
    const double t0 = now_ms();
    (void)msg;
    if (c->crash) {
        volatile float *null = NULL;
        *null = 1.0f;
    }
    tp_relu(p, p->n);
    if (c->round16)
        for (int64_t i = 0; i < p->n; i++) p->out[i] = round_f16(p->out[i]);
    p->runs++;
    if ((c->diag_run > 0 && (long)p->runs == c->diag_run) || c->diag_every) {
        c->diag_pending = 1;
        snprintf(c->diag_text, sizeof c->diag_text, "validation: test diagnostic after run %u", (unsigned)p->runs);
    }
    if (c->device_ms > 0) { /* the run lasts longer than any device time it reports */
        while (now_ms() - t0 < 2 * c->device_ms + 0.5) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    return PAR_OK;
}

static size_t cx_diagnostics(void *ctx, void *prepared, char *buf, size_t len)
{
    ctx_t *c = ctx;
    (void)prepared;
    if (!c->diag_pending) return 0;
    c->diag_pending = 0;
    if (c->diag_raw) {
        static const char raw[] = "\x01" "bad" "\xff\xfe\n\x1b[31m";
        for (size_t i = 0; i < len; i++) buf[i] = raw[i % (sizeof raw - 1)];
        return len;
    }
    return (size_t)snprintf(buf, len, "%s", c->diag_text) + 1;
}

static int cx_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    ctx_t *c = ctx;
    (void)prepared;
    if (c->device_ms <= 0) return 0;
    const char *e = getenv("PARITY_TP_CONTEXT_DEVICE_SCALE");
    double scale = e ? strtod(e, NULL) : 1.0;
    if (!(scale >= 0.5 && scale <= 2)) scale = 1.0;
    *total_ms = c->device_bad ? 1e6 : c->device_ms * scale;
    for (int32_t i = 0; i < n_nodes; i++) node_ms[i] = 1.0;
    return 1;
}

/* PAR_PROC_NOTE: the note knob's text, once after prepare. */
static size_t cx_note(void *ctx, void *prepared, char *buf, size_t len)
{
    const ctx_t *c = ctx;
    (void)prepared;
    if (!c->note[0]) return 0;
    return (size_t)snprintf(buf, len, "%s", c->note) + 1;
}

static void *cx_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)cx_set_knob;
    if (strcmp(name, PAR_PROC_ARITH) == 0) return (void *)(par_arith_fn)cx_arith;
    if (strcmp(name, PAR_PROC_DIAGNOSTICS) == 0) return (void *)(par_diagnostics_fn)cx_diagnostics;
    if (strcmp(name, PAR_PROC_NOTE) == 0) return (void *)(par_note_fn)cx_note;
    if (strcmp(name, PAR_PROC_DEVICE_TIME) == 0) return (void *)(par_device_time_fn)cx_device_time;
    return NULL;
}

static const par_backend tp_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_context",
    .description = "test plugin: relu with its arithmetic, diagnostics and device time from knobs", .version = "1.0",
    .arith = PAR_ARITH_F32, .init = cx_init, .destroy = cx_destroy, .supports = tp_supports, .prepare = cx_prepare,
    .bind = tp_bind, .run = cx_run, .release = tp_release, .get_proc = cx_get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &tp_backend;
}
