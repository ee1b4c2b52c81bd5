/*
 * vulkan.c - the vulkan backend's table: a Vulkan compute backend of the kind mobile GPU runtimes use (NC4HW4
 * activations, GLSL compute shaders compiled at build time, one recorded command buffer replayed per run), built
 * into parity. This file holds the entry points, the knobs and describe; the device is vk_device.c, the memory
 * vk_mem.c, the prepared graph vk_graph.c, the op table vk_ops.c, the shaders in shaders/.
 *
 * Knobs (before the first prepare):
 *   validate=0|1         1: VK_LAYER_KHRONOS_validation on the instance; its errors and validation warnings come
 *                        back through PAR_PROC_DIAGNOSTICS (the case FAILs). UNSUPPORTED when the layer is missing.
 *   timestamps=1|0       GPU timestamps around each node's dispatches (PAR_PROC_DEVICE_TIME); 0 records none.
 *   device=auto|N|NAME   the physical device: auto (default) the first discrete or integrated GPU, else the first
 *                        device with a compute queue (lavapipe's "llvmpipe"); N its index in the loader's order;
 *                        NAME a case-insensitive substring of its name.
 *   precision=fp32|fp16|fp16_relaxed
 *                        fp32 (default): f32 storage and arithmetic (PAR_ARITH_F32). fp16: every float tensor but
 *                        the f32 staging of the graph's inputs and outputs stored as f16, f32 arithmetic
 *                        (PAR_ARITH_F16_STORAGE; needs storageBuffer16BitAccess). fp16_relaxed: f16 storage and f16
 *                        arithmetic in the heavy ops (PAR_ARITH_F16; needs shaderFloat16 too). A mode the chosen
 *                        device lacks is UNSUPPORTED naming the feature, here and at the first prepare (a later
 *                        device= may choose another device).
 *   kernels=tiled|direct the conv2d / linear / matmul shaders: tiled (default; vk_ops_tiled.c, where their
 *                        conditions hold) or direct (the general one-work-item-per-output shaders only).
 *
 * init returns PAR_UNSUPPORTED with one line when there is no Vulkan loader, no device, or no compute queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static par_status vk_init(void **out, par_msg *msg)
{
    vk_ctx *c = NULL;
    par_status st = vk_ctx_create(&c, msg);
    if (st == PAR_OK && c->warm_due) vk_warm_driver(c);
    *out = c;
    return st;
}

/* The context's pipelines first (vk_pipes.c, which calls into vk_device.c and not the other way), then the device. */
static void vk_destroy(void *ctx)
{
    vk_ctx *c = ctx;
    if (c && c->device) {
        vkDeviceWaitIdle(c->device);
        vk_pipes_destroy(c);
    }
    vk_ctx_destroy(c);
}

/* The switches validate=0|1 and timestamps=0|1 (before the first prepare, like every knob). */
static par_status set_switch(vk_ctx *c, const char *key, const char *value, par_msg *msg)
{
    if (c->prepared_once || c->device)
        return par_knob_too_late(key, NULL, msg);
    int on = 0;
    par_status st = par_knob_bool(key, value, &on, msg);
    if (st != PAR_OK) return st;
    if (strcmp(key, "validate") == 0) return vk_ctx_set_validate(c, on, msg);
    c->timestamps = on;
    return PAR_OK;
}

static par_status vk_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    vk_ctx *c = ctx;
    if (strcmp(key, "validate") == 0 || strcmp(key, "timestamps") == 0) return set_switch(c, key, value, msg);
    if (c->prepared_once || c->device)
        return par_knob_too_late(key, NULL, msg);
    if (strcmp(key, "device") == 0) {
        par_status st = vk_ctx_select(c, value, msg);
        char err[PAR_MSG_LEN];
        /* A precision set before this device was chosen must still be one the device has. */
        if (st == PAR_OK &&
            vk_precision_check(c->precision, c->storage16, c->float16, c->props.deviceName, err, sizeof err) != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s", err);
        return st;
    }
    if (strcmp(key, "kernels") == 0) {
        if (strcmp(value, "tiled") != 0 && strcmp(value, "direct") != 0)
            return par_msgf(msg, PAR_ERROR, "knob 'kernels': '%s' is not tiled or direct", value);
        c->direct_kernels = strcmp(value, "direct") == 0;
        return PAR_OK;
    }
    if (strcmp(key, "precision") == 0) {
        int p = vk_precision_parse(value);
        if (p < 0)
            return par_msgf(msg, PAR_ERROR, "'%s' is not a precision (fp32, fp16 or fp16_relaxed)", value);
        char err[PAR_MSG_LEN];
        if (vk_precision_check((vk_precision)p, c->storage16, c->float16, c->props.deviceName, err, sizeof err) != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "%s", err);
        c->precision = (vk_precision)p;
        return PAR_OK;
    }
    return par_msgf(msg, PAR_ERROR, "unknown knob '%s' (the vulkan backend has device=auto|N|NAME, "
                    "precision=fp32|fp16|fp16_relaxed, kernels=tiled|direct, validate=0|1 and timestamps=0|1)", key);
}

static size_t vk_diagnostics(void *ctx, void *prepared, char *buf, size_t len)
{
    (void)prepared; /* messages belong to the context: the layer does not say which graph a device call served */
    return vk_ctx_diagnostics(ctx, buf, len);
}

static int vk_device_time(void *ctx, void *prepared, double *total_ms, double *node_ms, int32_t n_nodes)
{
    (void)ctx;
    return prepared ? vk_graph_device_time(prepared, total_ms, node_ms, n_nodes) : 0;
}

static size_t vk_describe(void *ctx, char *buf, size_t len)
{
    const vk_ctx *c = ctx;
    uint32_t v = c->props.apiVersion;
    int need = snprintf(buf, len, "device=%d:%s;type=%s;driver=%s;api=%u.%u.%u;precision=%s;layout=nc4hw4",
                        c->chosen, c->props.deviceName, vk_device_type_name(c->props.deviceType),
                        c->driver[0] ? c->driver : "unknown", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                        VK_API_VERSION_PATCH(v), vk_precision_name(c->precision));
    return need < 0 ? 0 : (size_t)need;
}

/* Subnormals: a shader that does not request the DenormPreserve execution mode (ours do not; it needs
 * VK_KHR_shader_float_controls and shaderDenormPreserveFloat32, which many GPUs lack) may flush them, and most GPUs
 * do. The backend declares what Vulkan allows, not what one driver happens to do (on lavapipe the quick suite also
 * passes without the declaration: docs/backends/vulkan.md). */
static uint32_t vk_arith_flags(void *ctx)
{
    (void)ctx;
    return PAR_ARITH_FLUSH_SUBNORMALS;
}

/* The arithmetic of the precision mode (docs/backends/vulkan.md, "Precision modes"). */
static par_arith vk_arith(void *ctx)
{
    return vk_precision_arith(((const vk_ctx *)ctx)->precision);
}

/* PAR_PROC_REUSE: a context serves the next job unless its device was lost or the validation layer has a message
 * nobody asked for yet (the pipelines it keeps are keyed by everything that makes them: vk_graph.c). */
static int vk_reuse(void *ctx)
{
    vk_ctx *c = ctx;
    pthread_mutex_lock(&c->diag_lock);
    int n = c->n_diag;
    pthread_mutex_unlock(&c->diag_lock);
    return !c->lost[0] && n == 0;
}

static void *vk_get_proc(void *ctx, const char *name)
{
    (void)ctx;
    if (strcmp(name, PAR_PROC_REUSE) == 0) return (void *)(par_reuse_fn)vk_reuse;
    if (strcmp(name, PAR_PROC_DIAGNOSTICS) == 0) return (void *)(par_diagnostics_fn)vk_diagnostics;
    if (strcmp(name, PAR_PROC_DEVICE_TIME) == 0) return (void *)(par_device_time_fn)vk_device_time;
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)vk_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)vk_describe;
    if (strcmp(name, PAR_PROC_ARITH_FLAGS) == 0) return (void *)(par_arith_flags_fn)vk_arith_flags;
    if (strcmp(name, PAR_PROC_ARITH) == 0) return (void *)(par_arith_fn)vk_arith;
    return NULL;
}

static par_status vk_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg)
{
    (void)ctx;
    return vk_op_supports(g, node, msg);
}

static par_status vk_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    vk_ctx *c = ctx;
    *prepared = NULL;
    c->prepared_once = 1;
    vk_graph *vg = NULL;
    par_status st = vk_graph_prepare(c, g, &vg, msg);
    if (st == PAR_OK) *prepared = vg;
    return st;
}

static par_status vk_bind(void *ctx, void *prepared, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    (void)ctx;
    if (!prepared) return par_msgf(msg, PAR_ERROR, "bind: no prepared graph");
    return vk_graph_bind(prepared, inputs, outputs, msg);
}

static par_status vk_run(void *ctx, void *prepared, par_msg *msg)
{
    (void)ctx;
    if (!prepared) return par_msgf(msg, PAR_ERROR, "run: no prepared graph");
    return vk_graph_run(prepared, msg);
}

static void vk_release(void *ctx, void *prepared)
{
    (void)ctx;
    vk_graph_release(prepared);
}

static const par_backend vulkan_backend = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = VK_NAME,
    .description = "Vulkan compute: NC4HW4 activations, GLSL shaders built in, one command buffer replayed per run",
    .version = "0.1",
    /* f32 storage and arithmetic by default; the precision knob changes it per context (PAR_PROC_ARITH). */
    .arith = PAR_ARITH_F32,
    .init = vk_init,
    .destroy = vk_destroy,
    .supports = vk_supports,
    .prepare = vk_prepare,
    .bind = vk_bind,
    .run = vk_run,
    .release = vk_release,
    .get_proc = vk_get_proc,
};

const par_backend *par_backend_vulkan(void);

const par_backend *par_backend_vulkan(void)
{
    return &vulkan_backend;
}
