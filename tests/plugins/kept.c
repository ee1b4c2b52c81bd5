/* kept.c - a test plugin that declares its context reusable (PAR_PROC_REUSE), so that its backend child is kept
 * across jobs, and counts the jobs its process has prepared. The knob act= says how it misbehaves:
 *   act=crash   run() of the 3rd job of a process dereferences an invalid pointer (CRASH): a kept child that crashes
 *               on job k costs job k only, the next job starts a fresh child (whose count starts again at 1)
 *   act=sticky  from the 2nd job of a process on, every output's first element is wrong (FAIL): state one job
 *               leaves for the next; restarting the child after the FAIL keeps it from spreading
 *   act=none    a correct relu (the default)
 * With a fresh child per job (PARITY_KEEP_CHILD=0), or at most 2 jobs per child, every job is a process's first or
 * second and nothing fails but act=sticky's second jobs (tests/report/test_kept.sh). */
#include "tp_common.h"

#include <stdint.h>

static int act; /* 0 none, 1 crash, 2 sticky */
static int jobs; /* jobs this process has prepared */

static par_status set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    (void)ctx;
    if (strcmp(key, "act") != 0) return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (act=none|crash|sticky)", key);
    if (strcmp(value, "none") == 0) act = 0;
    else if (strcmp(value, "crash") == 0) act = 1;
    else if (strcmp(value, "sticky") == 0) act = 2;
    else return par_msgf(msg, PAR_ERROR, "knob 'act': '%s' is not none, crash or sticky", value);
    return PAR_OK;
}

static par_status prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    par_status st = tp_prepare(ctx, g, prepared, msg);
    if (st == PAR_OK) jobs++;
    return st;
}

static par_status run(void *ctx, void *prepared, par_msg *msg)
{
    tp_prep *p = prepared;
    (void)ctx;
    (void)msg;
    if (act == 1 && jobs == 3) {
        volatile float *volatile bad = (volatile float *)(uintptr_t)64;
        *bad = 1.0f;
    }
    tp_relu(p, p->n);
    if (act == 2 && jobs >= 2 && p->n > 0) p->out[0] = p->out[0] == 0.5f ? 0.25f : 0.5f; /* wrong whatever x is */
    return PAR_OK;
}

static int reuse(void *ctx)
{
    (void)ctx;
    return 1;
}

static void *get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)set_knob;
    if (strcmp(name, PAR_PROC_REUSE) == 0) return (void *)(par_reuse_fn)reuse;
    return NULL;
}

static const par_backend tp_backend = {
    .api_version = PAR_BACKEND_API_VERSION, .struct_size = sizeof(par_backend), .name = "tp_kept",
    .description = "test plugin", .version = "1.0", .arith = PAR_ARITH_F32,
    .init = tp_init, .destroy = tp_destroy, .supports = tp_supports, .prepare = prepare,
    .bind = tp_bind, .run = run, .release = tp_release, .get_proc = get_proc};

const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    (void)harness_api_version;
    return &tp_backend;
}
