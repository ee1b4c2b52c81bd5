/*
 * vk_graph.c - a prepared graph of the vulkan backend. prepare: place every tensor (values, and one host-visible
 * staging tensor per graph input and output) in the sub-allocator, upload the constants, lower every node to
 * dispatches (vk_ops.c) between the edge conversions (NCHW staging -> internal layout for each input, internal ->
 * NCHW staging for each output), take the pipelines from the context (vk_pipes.c: one per shader, variant, OP and
 * constants, created by the first prepare that needs it), write one descriptor set per
 * dispatch, and record ONE command buffer: the dispatches with a buffer memory barrier (compute write -> compute
 * read) before each dispatch for every input an earlier dispatch wrote, and a final compute -> host barrier on the
 * output staging. With timestamps, the command buffer also resets a query pool and writes a timestamp at its start
 * and after each node's dispatches (and after each run of edge conversions). run: copy the inputs into staging, one
 * vkQueueSubmit, one fence wait, read the timestamps, copy the outputs out. The command buffer is replayed, never
 * re-recorded. Every Vulkan call whose result matters goes through VK_CALL: after VK_ERROR_DEVICE_LOST the context
 * refuses to prepare or run again, naming the call.
 *
 * Internal layout: 4-D activations (graph inputs and node outputs) are NC4HW4; constants and other ranks are plain.
 * Precision (the `precision` knob): in the f16 modes every float value, activations and constants alike, is stored
 * as 16-bit floats (constants rounded to nearest even at upload) and the shaders run in the mode's variant; the f32
 * staging of float inputs and outputs stays f32, converted by the edge variants of the copy (unary.comp).
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

static VkDescriptorBufferInfo buffer_info(vk_graph *vg, int t)
{
    const vk_tensor *T = &vg->tensors[t];
    VkDescriptorBufferInfo bi = {
        .buffer = vg->pools[T->pool].blocks[T->block].buf,
        .offset = T->offset,
        .range = T->bytes,
    };
    return bi;
}

/* Every dispatch's pipeline: the context's of its key (vk_pipes.c), created there when no earlier prepare did. */
static par_status create_pipelines(vk_graph *vg, par_msg *msg)
{
    for (int i = 0; i < vg->n_disp; i++) {
        par_status st = vk_pipeline(vg->ctx, &vg->disp[i], &vg->disp[i].pipeline, msg);
        if (st != PAR_OK) return st;
    }
    return PAR_OK;
}

static par_status create_layouts_and_sets(vk_graph *vg, par_msg *msg)
{
    VkDevice dev = vg->ctx->device;
    const int slots = vk_slots(vg->ctx);
    par_status st = vk_layouts(vg->ctx, msg);
    if (st != PAR_OK) return st;
    vg->set_layout = vg->ctx->set_layout;
    vg->pipe_layout = vg->ctx->pipe_layout;
    VkResult r;
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)(vg->n_disp * slots)};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = (uint32_t)vg->n_disp,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &ps};
    r = VK_CALL(vg->ctx, "vkCreateDescriptorPool", vkCreateDescriptorPool(dev, &dpci, NULL, &vg->desc_pool));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkCreateDescriptorPool: %s", vk_result_name(r));
    for (int i = 0; i < vg->n_disp; i++) {
        vk_dispatch *d = &vg->disp[i];
        VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                          .descriptorPool = vg->desc_pool,
                                          .descriptorSetCount = 1,
                                          .pSetLayouts = &vg->set_layout};
        r = VK_CALL(vg->ctx, "vkAllocateDescriptorSets", vkAllocateDescriptorSets(dev, &ai, &d->set));
        if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkAllocateDescriptorSets: %s", vk_result_name(r));
        VkDescriptorBufferInfo bi[VK_MAX_SLOTS];
        VkWriteDescriptorSet w[VK_MAX_SLOTS];
        for (int s = 0; s < slots; s++) {
            /* An unused slot is bound to the output (never read by that shader) so every binding is valid. */
            bi[s] = buffer_info(vg, d->slot[s] >= 0 ? d->slot[s] : d->slot[0]);
            if ((vg->ctx->test_break & VK_BREAK_DESC_RANGE) && d->slot[s] < 0) { /* tests only: past the buffer */
                const vk_tensor *T = &vg->tensors[d->slot[0]];
                bi[s].range = vg->pools[T->pool].arena.block_size[T->block] - T->offset + 16;
            }
            w[s] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                          .dstSet = d->set,
                                          .dstBinding = (uint32_t)s,
                                          .descriptorCount = 1,
                                          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .pBufferInfo = &bi[s]};
        }
        vkUpdateDescriptorSets(dev, (uint32_t)slots, w, 0, NULL);
    }
    return PAR_OK;
}

static VkBufferMemoryBarrier barrier_of(vk_graph *vg, int t, VkAccessFlags src, VkAccessFlags dst)
{
    VkDescriptorBufferInfo bi = buffer_info(vg, t);
    return (VkBufferMemoryBarrier){.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                                   .srcAccessMask = src,
                                   .dstAccessMask = dst,
                                   .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .buffer = bi.buffer,
                                   .offset = bi.offset,
                                   .size = bi.range};
}

/* The query pool of the timestamps, when the knob asks for them and the device can (timestampValidBits of the
 * queue family > 0 and timestampPeriod > 0): one query at the start and one after each group of consecutive
 * dispatches of one node (edge conversions form groups of node -1). */
static par_status timestamps_prepare(vk_graph *vg, par_msg *msg)
{
    const vk_ctx *c = vg->ctx;
    if (!c->timestamps || c->ts_bits == 0 || !(c->ts_period > 0) || vg->n_disp == 0) return PAR_OK;
    uint32_t n = 1;
    for (int i = 0; i < vg->n_disp; i++) n += i + 1 == vg->n_disp || vg->disp[i + 1].node != vg->disp[i].node;
    vg->group_node = malloc(n * sizeof *vg->group_node);
    vg->ts = calloc(n, sizeof *vg->ts);
    if (!vg->group_node || !vg->ts) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    uint32_t k = 0;
    vg->group_node[k++] = -1;
    for (int i = 0; i < vg->n_disp; i++)
        if (i + 1 == vg->n_disp || vg->disp[i + 1].node != vg->disp[i].node) vg->group_node[k++] = vg->disp[i].node;
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                 .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = n};
    VkResult r = VK_CALL(vg->ctx, "vkCreateQueryPool", vkCreateQueryPool(c->device, &qci, NULL, &vg->qpool));
    if (r != VK_SUCCESS) {
        vg->qpool = VK_NULL_HANDLE;
        return par_msgf(msg, PAR_ERROR, "vkCreateQueryPool (%u timestamps): %s", n, vk_result_name(r));
    }
    vg->n_queries = n;
    return PAR_OK;
}

static par_status record(vk_graph *vg, int first_out_staging, int end_out_staging, par_msg *msg)
{
    VkDevice dev = vg->ctx->device;
    VkCommandPoolCreateInfo cpci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = vg->ctx->queue_family};
    VkResult r = VK_CALL(vg->ctx, "vkCreateCommandPool", vkCreateCommandPool(dev, &cpci, NULL, &vg->cmd_pool));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkCreateCommandPool: %s", vk_result_name(r));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = vg->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    r = VK_CALL(vg->ctx, "vkAllocateCommandBuffers", vkAllocateCommandBuffers(dev, &cai, &vg->cmd));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkAllocateCommandBuffers: %s", vk_result_name(r));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = VK_CALL(vg->ctx, "vkCreateFence", vkCreateFence(dev, &fci, NULL, &vg->fence));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkCreateFence: %s", vk_result_name(r));
    par_status st = timestamps_prepare(vg, msg);
    if (st != PAR_OK) return st;

    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    r = VK_CALL(vg->ctx, "vkBeginCommandBuffer", vkBeginCommandBuffer(vg->cmd, &bi));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkBeginCommandBuffer: %s", vk_result_name(r));
    /* writer[t]: the index of the dispatch that wrote tensor t, or -1. */
    int *writer = malloc((size_t)vg->n_tensors * sizeof *writer);
    VkBufferMemoryBarrier *bar = malloc((size_t)(vg->n_tensors + VK_MAX_SLOTS) * sizeof *bar);
    if (!writer || !bar) {
        free(writer);
        free(bar);
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    }
    for (int t = 0; t < vg->n_tensors; t++) writer[t] = -1;
    uint32_t q = 0;
    if (vg->qpool) {
        vkCmdResetQueryPool(vg->cmd, vg->qpool, 0, vg->n_queries);
        vkCmdWriteTimestamp(vg->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vg->qpool, q++);
    }
    for (int i = 0; i < vg->n_disp; i++) {
        vk_dispatch *d = &vg->disp[i];
        uint32_t nb = 0;
        for (int s = 1; s < VK_MAX_SLOTS; s++) {
            int t = d->slot[s];
            int dup = 0;
            for (int s2 = 1; s2 < s; s2++) dup |= d->slot[s2] == t;
            if (t >= 0 && !dup && writer[t] >= 0)
                bar[nb++] = barrier_of(vg, t, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT);
        }
        if (nb && !(vg->ctx->test_break & VK_BREAK_BARRIER)) /* tests only: the barrier omitted */
            vkCmdPipelineBarrier(vg->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                                 0, NULL, nb, bar, 0, NULL);
        vkCmdBindPipeline(vg->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d->pipeline);
        vkCmdBindDescriptorSets(vg->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, vg->pipe_layout, 0, 1, &d->set, 0, NULL);
        vkCmdPushConstants(vg->cmd, vg->pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof d->pc, &d->pc);
        vkCmdDispatch(vg->cmd, d->groups_x, d->groups_y, 1);
        writer[d->slot[0]] = i;
        /* The end of a group: every earlier command has finished when this timestamp is written. */
        if (vg->qpool && (i + 1 == vg->n_disp || vg->disp[i + 1].node != d->node))
            vkCmdWriteTimestamp(vg->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vg->qpool, q++);
    }
    /* The output staging: shader writes -> host reads after the fence. */
    uint32_t nb = 0;
    for (int t = first_out_staging; t < end_out_staging; t++)
        bar[nb++] = barrier_of(vg, t, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT);
    if (nb)
        vkCmdPipelineBarrier(vg->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, NULL, nb,
                             bar, 0, NULL);
    free(writer);
    free(bar);
    r = VK_CALL(vg->ctx, "vkEndCommandBuffer", vkEndCommandBuffer(vg->cmd));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkEndCommandBuffer: %s", vk_result_name(r));
    return PAR_OK;
}

/* n f32 values as f16 (round to nearest even, overflow to Inf) into mapped memory. */
static void upload_f16(void *dst, const void *src, int64_t n)
{
    uint16_t *d = dst;
    const float *s = src;
    for (int64_t i = 0; i < n; i++) d[i] = vk_f16_bits(s[i]);
}

static par_status prepare(vk_graph *vg, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    vg->n_tensors = vg->cap_tensors = g->n_values + g->n_inputs + g->n_outputs;
    vg->tensors = calloc((size_t)vg->n_tensors, sizeof *vg->tensors);
    if (!vg->tensors) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    par_status st = vk_pools_init(vg, msg);
    if (st != PAR_OK) return st;
    /* Values. */
    for (int v = 0; v < g->n_values; v++) {
        const par_value *V = &g->values[v];
        vk_tensor *T = &vg->tensors[v];
        if (vk_dims4(V, T->d4) != 0)
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: value '%s' has rank %d (ranks up to 4 are implemented)",
                            V->name, V->rank);
        int raw = V->dtype != PAR_DTYPE_F32;
        if (raw && (V->kind == PAR_VALUE_NODE || (V->dtype != PAR_DTYPE_I32 && V->dtype != PAR_DTYPE_BOOL)))
            return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: value '%s' is %s (only f32 is computed; i32 and bool "
                            "only as inputs and constants)", V->name, par_dtype_name(V->dtype));
        int is_const = V->kind == PAR_VALUE_CONST;
        /* i32 and bool values stay raw and plain in host-visible memory; a graph input of them is its own staging. */
        T->nc4 = !raw && !is_const && V->rank == 4;
        T->f16 = !raw && vg->f16;
        uint64_t esize = T->f16 ? 2 : (uint64_t)par_dtype_size(V->dtype);
        uint64_t bytes = ((T->nc4 ? vk_nc4_count(T->d4) : (uint64_t)V->numel) * esize + 3) / 4 * 4;
        st = vk_tensor_place(vg, v, is_const || raw ? VK_POOL_HOST : VK_POOL_DEVICE, bytes, msg);
        if (st != PAR_OK) return st;
    }
    /* Staging: plain NCHW, host-visible. */
    for (int i = 0; i < g->n_inputs + g->n_outputs; i++) {
        int v = i < g->n_inputs ? g->inputs[i] : g->outputs[i - g->n_inputs];
        vk_tensor *T = &vg->tensors[g->n_values + i];
        if (g->values[v].dtype != PAR_DTYPE_F32) {
            if (i >= g->n_inputs)
                return par_msgf(msg, PAR_UNSUPPORTED, "vulkan: graph output '%s' is %s (only f32 outputs)",
                                g->values[v].name, par_dtype_name(g->values[v].dtype));
            *T = vg->tensors[v]; /* the raw input is its own staging */
            continue;
        }
        memcpy(T->d4, vg->tensors[v].d4, sizeof T->d4);
        st = vk_tensor_place(vg, g->n_values + i, VK_POOL_HOST, (uint64_t)g->values[v].numel * 4, msg);
        if (st != PAR_OK) return st;
    }
    /* Dispatches: inputs in, the nodes, outputs out. */
    for (int i = 0; i < g->n_inputs; i++)
        if (g->values[g->inputs[i]].dtype == PAR_DTYPE_F32) {
            if ((st = vk_emit_copy(vg, g->inputs[i], g->n_values + i, msg)) != PAR_OK) return st;
            if (vg->f16) vg->disp[vg->n_disp - 1].variant = VK_VAR_EDGEIN;
        }
    for (int n = 0; n < g->n_nodes; n++) {
        int first = vg->n_disp;
        int done = 0; /* lowered (or absorbed) by the tiled lowerings; else the op table's general one */
        if ((st = vk_lower_tiled(vg, n, &done, msg)) != PAR_OK) return st;
        if (!done && (st = vk_op_lower(vg, n, msg)) != PAR_OK) return st;
        for (int i = first; i < vg->n_disp; i++) vg->disp[i].node = n;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        if ((st = vk_emit_copy(vg, g->n_values + g->n_inputs + i, g->outputs[i], msg)) != PAR_OK) return st;
        if (vg->f16) vg->disp[vg->n_disp - 1].variant = VK_VAR_EDGEOUT;
    }

    if ((st = vk_pools_commit(vg, msg)) != PAR_OK) return st;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].kind == PAR_VALUE_CONST) {
            void *p = vk_tensor_map(vg, v);
            if (!p) return par_msgf(msg, PAR_ERROR, "vulkan: internal: constant '%s' is not mapped", g->values[v].name);
            if (vg->tensors[v].f16) upload_f16(p, g->values[v].data, g->values[v].numel);
            else memcpy(p, g->values[v].data, (size_t)g->values[v].numel * par_dtype_size(g->values[v].dtype));
        }
    for (int t = g->n_values; t < vg->n_tensors; t++) {
        void *p = vk_tensor_map(vg, t);
        if (!p) return par_msgf(msg, PAR_ERROR, "vulkan: internal: host tensor %d is not mapped", t);
        const vk_tensor *T = &vg->tensors[t];
        if (T->init && T->f16) upload_f16(p, T->init, T->d4[0] * T->d4[1] * T->d4[2] * T->d4[3]);
        else if (T->init) memcpy(p, T->init, T->bytes);
    }
    if ((st = create_layouts_and_sets(vg, msg)) != PAR_OK) return st;
    if ((st = create_pipelines(vg, msg)) != PAR_OK) return st;
    return record(vg, g->n_values + g->n_inputs, g->n_values + g->n_inputs + g->n_outputs, msg);
}

par_status vk_graph_prepare(vk_ctx *c, const par_graph_desc *g, vk_graph **out, par_msg *msg)
{
    *out = NULL;
    if (c->lost[0])
        return par_msgf(msg, PAR_ERROR, "prepare: the Vulkan device was lost (VK_ERROR_DEVICE_LOST from %s); this "
                        "context does no more work", c->lost);
    if (!c->instance || c->chosen < 0)
        return par_msgf(msg, PAR_ERROR, "prepare: no Vulkan instance (the validate knob failed to re-create it)");
    par_status st = vk_ctx_open(c, msg);
    if (st != PAR_OK) return st;
    vk_graph *vg = calloc(1, sizeof *vg);
    if (!vg) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    vg->ctx = c;
    vg->g = g;
    vg->f16 = c->precision != VK_PREC_FP32;
    vg->variant = c->precision == VK_PREC_FP16 ? VK_VAR_F16S
                  : c->precision == VK_PREC_FP16_RELAXED ? VK_VAR_F16A : VK_VAR_F32;
    st = prepare(vg, msg);
    if (st != PAR_OK) {
        vk_graph_release(vg);
        return st;
    }
    *out = vg;
    return PAR_OK;
}

par_status vk_graph_bind(vk_graph *vg, const void *const *inputs, void *const *outputs, par_msg *msg)
{
    vg->inputs = inputs;
    vg->outputs = outputs;
    return PAR_OK;
}

par_status vk_graph_run(vk_graph *vg, par_msg *msg)
{
    const par_graph_desc *g = vg->g;
    vk_ctx *c = vg->ctx;
    vg->ts_valid = 0;
    if (c->lost[0])
        return par_msgf(msg, PAR_ERROR, "run: the Vulkan device was lost (VK_ERROR_DEVICE_LOST from %s); this "
                        "context does no more work", c->lost);
    if (!vg->inputs || !vg->outputs) return par_msgf(msg, PAR_ERROR, "run: no buffers bound");
    for (int i = 0; i < g->n_inputs; i++)
        memcpy(vk_tensor_map(vg, g->n_values + i), vg->inputs[i],
               (size_t)g->values[g->inputs[i]].numel * par_dtype_size(g->values[g->inputs[i]].dtype));
    VkDevice dev = c->device;
    VkResult r = VK_CALL(c, "vkResetFences", vkResetFences(dev, 1, &vg->fence));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkResetFences: %s", vk_result_name(r));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &vg->cmd};
    if (c->test_break & VK_BREAK_RESUBMIT) vkQueueSubmit(c->queue, 1, &si, VK_NULL_HANDLE); /* tests only */
    r = VK_CALL(c, "vkQueueSubmit", vkQueueSubmit(c->queue, 1, &si, vg->fence));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkQueueSubmit: %s", vk_result_name(r));
    r = VK_CALL(c, "vkWaitForFences", vkWaitForFences(dev, 1, &vg->fence, VK_TRUE, UINT64_MAX));
    if (r != VK_SUCCESS) {
        /* The submission may still be executing: let it end before the command buffer is submitted again (a lost
         * device answers at once). */
        vk_note(c, "vkQueueWaitIdle", vkQueueWaitIdle(c->queue));
        return par_msgf(msg, PAR_ERROR, "vkWaitForFences: %s", vk_result_name(r));
    }
    if (vg->qpool) {
        r = VK_CALL(c, "vkGetQueryPoolResults",
                    vkGetQueryPoolResults(dev, vg->qpool, 0, vg->n_queries, (size_t)vg->n_queries * sizeof *vg->ts,
                                          vg->ts, sizeof *vg->ts, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (r == VK_ERROR_DEVICE_LOST || r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
            return par_msgf(msg, PAR_ERROR, "vkGetQueryPoolResults: %s", vk_result_name(r));
        vg->ts_valid = r == VK_SUCCESS;
    }
    for (int i = 0; i < g->n_outputs; i++)
        memcpy(vg->outputs[i], vk_tensor_map(vg, g->n_values + g->n_inputs + i),
               (size_t)g->values[g->outputs[i]].numel * 4);
    return PAR_OK;
}

/* Ticks to milliseconds. The counter has ts_bits valid bits and may wrap: a span is the difference modulo 2^bits.
 * A span of more than half the range means the timestamps were not in order (a driver that writes them early):
 * then nothing is reported. */
int vk_graph_device_time(const vk_graph *vg, double *total_ms, double *node_ms, int32_t n_nodes)
{
    if (!vg->qpool || !vg->ts_valid) return 0;
    uint32_t bits = vg->ctx->ts_bits;
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    double ms_per_tick = (double)vg->ctx->ts_period * 1e-6;
    for (uint32_t k = 1; k < vg->n_queries; k++)
        if (((vg->ts[k] - vg->ts[k - 1]) & mask) > mask / 2) return 0;
    for (int32_t n = 0; node_ms && n < n_nodes; n++) node_ms[n] = -1;
    for (uint32_t k = 1; k < vg->n_queries; k++) {
        int32_t n = vg->group_node[k];
        if (n < 0 || !node_ms || n >= n_nodes) continue;
        double span = (double)((vg->ts[k] - vg->ts[k - 1]) & mask) * ms_per_tick;
        node_ms[n] = node_ms[n] < 0 ? span : node_ms[n] + span;
    }
    if (total_ms) *total_ms = (double)((vg->ts[vg->n_queries - 1] - vg->ts[0]) & mask) * ms_per_tick;
    return 1;
}

void vk_graph_release(vk_graph *vg)
{
    if (!vg) return;
    VkDevice dev = vg->ctx->device;
    if (dev) {
        vkDeviceWaitIdle(dev);
        if (vg->fence) vkDestroyFence(dev, vg->fence, NULL);
        if (vg->qpool) vkDestroyQueryPool(dev, vg->qpool, NULL);
        if (vg->cmd_pool) vkDestroyCommandPool(dev, vg->cmd_pool, NULL);
        if (vg->desc_pool) vkDestroyDescriptorPool(dev, vg->desc_pool, NULL); /* pipelines, layouts: the context's */
        vk_pools_free(vg);
    }
    free(vg->disp);
    free(vg->skip);
    for (int t = 0; vg->tensors && t < vg->n_tensors; t++) free(vg->tensors[t].init);
    free(vg->tensors);
    free(vg->group_node);
    free(vg->ts);
    free(vg);
}
