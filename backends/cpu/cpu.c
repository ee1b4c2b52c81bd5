/*
 * cpu.c - the cpu backend's table: an XNNPACK-style float32 CPU engine (NHWC, packed GEMM and convolution kernels
 * with fused clamps, pthreadpool threads), built into parity. This file holds the context, the knobs, describe and
 * the micro-benchmarks; the planner is plan.c, the ops ops_*.c, the convolution/GEMM kernels behind cpu_kernels.h.
 *
 * Knobs (before the first prepare):
 *   threads=N                      worker threads of the pool (default 1: no pool, everything on the caller's thread)
 *   kernels=auto|avx512|avx2|neon|scalar the ISA of every kernel (auto: the best this CPU has, from cpuinfo). An
 *                                  ISA the CPU lacks is an error, never a silent fallback: a report must say what ran.
 *   profile=0|1                    1: each step of a run is timed (two clock reads per step), and the times per node
 *                                  are the device time of PAR_PROC_DEVICE_TIME (the CPU is this backend's device),
 *                                  so that `parity bench --nodes` shows where a model's time goes (default 0)
 *   chain=0|1                      1 (default): consecutive convolutions run interleaved by bands of rows (row chains,
 *                                  plan.h); 0: each runs whole, so one bench run can compare the two
 *
 * It must not keep any state but the knobs and the pool, and never touches a graph outside prepare.
 */
#include <stdlib.h>

#include "plan.h"

static par_status cpu_init(void **out, par_msg *msg)
{
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->threads = 1;
    c->chain = 1;
    c->detected = cpu_isa_detect();
    c->isa = c->detected;
    *out = c;
    return PAR_OK;
}

static void cpu_destroy(void *ctx)
{
    cpu_ctx *c = ctx;
    if (!c) return;
    if (c->pool) pthreadpool_destroy(c->pool);
    free(c);
}

static par_status cpu_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    cpu_ctx *c = ctx;
    if (c->prepared) return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "threads") == 0) return par_knob_threads(value, &c->threads, msg);
    if (strcmp(key, "profile") == 0) return par_knob_bool(key, value, &c->profile, msg);
    if (strcmp(key, "chain") == 0) return par_knob_bool(key, value, &c->chain, msg);
    if (strcmp(key, "kernels") == 0) {
        if (strcmp(value, "auto") == 0) {
            c->isa = c->detected;
            c->kernels_forced = 0;
            return PAR_OK;
        }
        cpu_isa isa;
        if (cpu_isa_parse(value, &isa) != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'kernels': '%s' is not one of auto, avx512, avx2, neon, scalar",
                            value);
        if (!cpu_isa_supported(isa)) return par_knob_isa_missing(value, cpu_isa_name(c->detected), msg);
        c->isa = isa;
        c->kernels_forced = 1;
        return PAR_OK;
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (the cpu backend has threads=N, "
                    "kernels=auto|avx512|avx2|neon|scalar, profile=0|1 and chain=0|1)", key);
}

static size_t cpu_describe(void *ctx, char *buf, size_t len)
{
    const cpu_ctx *c = ctx;
    int need = snprintf(buf, len, "threads=%d;kernels=%s%s", c->threads, cpu_isa_name(c->isa),
                        c->chain ? "" : ";chain=0");
    return need < 0 ? 0 : (size_t)need;
}

/* "gemm": the GEMM micro-kernel on a 1024 x 1024 x 1024 product, one thread; "peak": the measured single-core FMA
 * peak of the same ISA. Both in GFLOP/s. */
static par_status cpu_microbench(void *ctx, const char *name, double *value, char *unit, size_t unit_len,
                                 par_msg *msg)
{
    const cpu_ctx *c = ctx;
    if (strcmp(name, "gemm") == 0) *value = cpu_bench_gemm_gflops(c->isa, 1024, 1024, 1024);
    else if (strcmp(name, "peak") == 0) *value = cpu_bench_peak_gflops(c->isa);
    else return par_msgf(msg, PAR_UNSUPPORTED, "micro-benchmark '%s' is unknown (the cpu backend has gemm, peak)", name);
    snprintf(unit, unit_len, "GFLOP/s");
    return PAR_OK;
}

static int cpu_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    (void)ctx;
    return cpu_plan_step_times(prepared, total_ms, node_ms, n_nodes);
}

static par_status cpu_node_outputs(void *ctx, void *prepared, int32_t n, const int32_t *values, void *const *buffers,
                                   uint8_t *given, par_msg *msg)
{
    (void)ctx;
    if (!prepared) return par_msgf(msg, PAR_ERROR, "node outputs: no prepared graph");
    return cpu_plan_taps(prepared, n, values, buffers, given, msg);
}

static void *cpu_get_proc(void *ctx, const char *name)
{
    const cpu_ctx *c = ctx;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)cpu_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)cpu_describe;
    if (strcmp(name, PAR_PROC_MICROBENCH) == 0) return (void *)(par_microbench_fn)cpu_microbench;
    if (strcmp(name, PAR_PROC_DEVICE_TIME) == 0 && c && c->profile) return (void *)(par_device_time_fn)cpu_device_time;
    if (strcmp(name, PAR_PROC_NODE_OUTPUTS) == 0) return (void *)(par_node_outputs_fn)cpu_node_outputs;
    return NULL;
}

static par_status cpu_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    return cpu_plan_supports(g, node, msg);
}

static par_status cpu_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    cpu_ctx *c = ctx;
    *prepared = NULL;
    c->prepared = 1;
    if (c->threads > 1 && !c->pool) {
        c->pool = pthreadpool_create((size_t)c->threads);
        if (!c->pool) return par_msgf(msg, PAR_ERROR, "prepare: cannot create a pool of %d threads", c->threads);
    }
    cpu_plan *p = NULL;
    par_status st = cpu_plan_prepare(c, g, &p, msg);
    if (st == PAR_OK) *prepared = p;
    return st;
}

static par_status cpu_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    if (!prepared) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    return cpu_plan_bind(prepared, inputs, outputs, msg);
}

static par_status cpu_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    if (!prepared) return par_msgf(msg, PAR_ERROR, "run: no prepared graph");
    return cpu_plan_run(prepared, msg);
}

static void cpu_release(void *ctx, void *prepared)
{
    (void)ctx;
    cpu_plan_release(prepared);
}

static const par_backend cpu_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = CPU_NAME,
    .description = "XNNPACK-style f32 CPU engine: NHWC, packed GEMM/conv micro-kernels, fused clamps, pthreadpool",
    .version = "1.0",
    /* f32 storage and f32 arithmetic throughout (FMA where the ISA has it; vectorized exp/sigmoid/tanh within
     * 4 ULP, see docs/backends/cpu.md). */
    .arith = PAR_ARITH_F32,
    .init = cpu_init,
    .destroy = cpu_destroy,
    .supports = cpu_supports,
    .prepare = cpu_prepare,
    .bind = cpu_bind,
    .run = cpu_run,
    .release = cpu_release,
    .get_proc = cpu_get_proc,
};

const par_backend *par_backend_cpu(void);

const par_backend *par_backend_cpu(void)
{
    return &cpu_backend;
}
