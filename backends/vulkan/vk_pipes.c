/*
 * vk_pipes.c - the vulkan backend's pipelines, kept by the context for its life: one per (shader, precision variant,
 * OP, the other specialization constants), all on the one descriptor set layout and pipeline layout of the context
 * (every dispatch binds the same vk_slots() storage buffers and the same push constant range), so that a prepare
 * creates only the pipelines no earlier prepare of the context created. A backend child kept across jobs
 * (PAR_PROC_REUSE, docs/reliability.md) keeps its context and with it these pipelines: on lavapipe a pipeline costs
 * 3-5 ms of SPIR-V to NIR and NIR passes, which lavapipe 22.3 caches nowhere (its VkPipelineCache is a stub whose
 * data is the header alone), so a case whose pipelines an earlier case made pays none of it. The key is the whole
 * of the create info but the layout, which is the context's: the shader's SPIR-V is chosen by (shader, variant)
 * from the table compiled into the backend, the constants are data of the key. A failed creation adds nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

par_status vk_layouts(vk_ctx *c, par_msg *msg)
{
    if (c->pipe_layout) return PAR_OK;
    VkDescriptorSetLayoutBinding bind[VK_MAX_SLOTS];
    const int slots = vk_slots(c);
    for (uint32_t s = 0; s < (uint32_t)slots; s++)
        bind[s] = (VkDescriptorSetLayoutBinding){s, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                                                 NULL};
    VkDescriptorSetLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                           .bindingCount = (uint32_t)slots,
                                           .pBindings = bind};
    VkResult r = VK_CALL(c, "vkCreateDescriptorSetLayout",
                         vkCreateDescriptorSetLayout(c->device, &lci, NULL, &c->set_layout));
    if (r != VK_SUCCESS) {
        c->set_layout = VK_NULL_HANDLE;
        return par_msgf(msg, PAR_ERROR, "vkCreateDescriptorSetLayout: %s", vk_result_name(r));
    }
    VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(vk_push)};
    VkPipelineLayoutCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = &c->set_layout,
                                      .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &pcr};
    r = VK_CALL(c, "vkCreatePipelineLayout", vkCreatePipelineLayout(c->device, &pci, NULL, &c->pipe_layout));
    if (r != VK_SUCCESS) {
        c->pipe_layout = VK_NULL_HANDLE;
        return par_msgf(msg, PAR_ERROR, "vkCreatePipelineLayout: %s", vk_result_name(r));
    }
    return PAR_OK;
}

static int same_key(const vk_pipe *p, const vk_dispatch *d)
{
    return p->variant == d->variant && p->op == d->op && memcmp(p->spec, d->spec, sizeof p->spec) == 0 &&
           strcmp(p->shader, d->shader) == 0;
}

par_status vk_pipeline(vk_ctx *c, const vk_dispatch *d, VkPipeline *out, par_msg *msg)
{
    par_status st = vk_layouts(c, msg);
    if (st != PAR_OK) return st;
    for (int i = 0; i < c->n_pipes; i++)
        if (same_key(&c->pipes[i], d)) {
            *out = c->pipes[i].pipeline;
            return PAR_OK;
        }
    if (c->n_pipes == c->cap_pipes) {
        int cap = c->cap_pipes ? 2 * c->cap_pipes : 64;
        vk_pipe *p = realloc(c->pipes, (size_t)cap * sizeof *p);
        if (!p) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        c->pipes = p;
        c->cap_pipes = cap;
    }
    const vk_shader_code *code = vk_shader_find(d->shader, d->variant);
    if (!code)
        return par_msgf(msg, PAR_ERROR, "vulkan: internal: no shader '%s' (variant %d) in the table", d->shader,
                        (int)d->variant);
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = code->n_words * 4,
                                    .pCode = code->words};
    VkShaderModule mod;
    VkResult r = VK_CALL(c, "vkCreateShaderModule", vkCreateShaderModule(c->device, &mci, NULL, &mod));
    if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkCreateShaderModule(%s): %s", d->shader, vk_result_name(r));
    /* Constants 0 (workgroup size) and 1 (OP), then 2.. those the dispatch sets (tile sizes; 0 keeps the shader's
     * default). */
    uint32_t spec_data[2 + VK_MAX_SPEC] = {VK_WG_SIZE, (uint32_t)d->op};
    VkSpecializationMapEntry entries[2 + VK_MAX_SPEC] = {{0, 0, 4}, {1, 4, 4}};
    uint32_t n_spec = 2;
    for (uint32_t k = 0; k < VK_MAX_SPEC; k++)
        if (d->spec[k]) {
            spec_data[n_spec] = d->spec[k];
            entries[n_spec] = (VkSpecializationMapEntry){2 + k, 4 * n_spec, 4};
            n_spec++;
        }
    VkSpecializationInfo spec = {n_spec, entries, 4 * n_spec, spec_data};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod,
                  .pName = "main",
                  .pSpecializationInfo = &spec},
        .layout = c->pipe_layout,
    };
    VkPipeline pipe = VK_NULL_HANDLE;
    r = VK_CALL(c, "vkCreateComputePipelines", vkCreateComputePipelines(c->device, VK_NULL_HANDLE, 1, &ci, NULL, &pipe));
    vkDestroyShaderModule(c->device, mod, NULL); /* a pipeline does not need its module once created */
    if (r != VK_SUCCESS)
        return par_msgf(msg, PAR_ERROR, "vkCreateComputePipelines(%s, op %d): %s", d->shader, d->op, vk_result_name(r));
    vk_pipe *p = &c->pipes[c->n_pipes++];
    *p = (vk_pipe){.shader = d->shader, .variant = d->variant, .op = d->op, .pipeline = pipe};
    memcpy(p->spec, d->spec, sizeof p->spec);
    c->pipes_created++;
    *out = pipe;
    return PAR_OK;
}

void vk_pipes_destroy(vk_ctx *c)
{
    for (int i = 0; i < c->n_pipes; i++) vkDestroyPipeline(c->device, c->pipes[i].pipeline, NULL);
    free(c->pipes);
    c->pipes = NULL;
    c->n_pipes = c->cap_pipes = 0;
    if (c->pipe_layout) vkDestroyPipelineLayout(c->device, c->pipe_layout, NULL);
    if (c->set_layout) vkDestroyDescriptorSetLayout(c->device, c->set_layout, NULL);
    c->pipe_layout = VK_NULL_HANDLE;
    c->set_layout = VK_NULL_HANDLE;
}

/* The driver's warm-up, once per process tree (the fork server's warm start; its children inherit the flag): on a
 * CPU device (lavapipe), a logical device and one compute pipeline (unary, OP 0), made by vk_pipeline as every
 * case's are, then destroyed with the layouts and the device. What that initializes once per process in the driver
 * (measured on lavapipe: a child's first pipeline 8-10 -> 3 ms) is then inherited by every job's child. Only on a
 * CPU device: there it is measured, and vkDestroyDevice joins every thread the device started (the fork server has
 * one thread when it forks; tests/test_vulkan.c checks it); a GPU driver may keep threads or a file descriptor of
 * the device open past its destroy, which a fork would share. Failures are ignored: the case's own prepare creates
 * everything again and reports what fails; the context leaves with no pipeline, no device and nothing counted. */
void vk_warm_driver(vk_ctx *c)
{
    par_msg ignored;
    c->warm_due = 0;
    if (c->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU || vk_ctx_open(c, &ignored) != PAR_OK) return;
    vk_dispatch d = {.shader = "unary", .variant = VK_VAR_F32, .op = 0};
    VkPipeline pipe;
    (void)vk_pipeline(c, &d, &pipe, &ignored);
    vk_pipes_destroy(c);
    c->pipes_created = 0;
    c->lost[0] = '\0';
    vkDestroyDevice(c->device, NULL);
    c->device = VK_NULL_HANDLE;
    c->queue = VK_NULL_HANDLE;
}
