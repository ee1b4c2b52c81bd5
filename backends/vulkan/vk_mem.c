/*
 * vk_mem.c - the vulkan backend's sub-allocator: a prepared graph's tensors live at offsets in a few large
 * VkDeviceMemory blocks (VK_BLOCK_BYTES each; a larger tensor gets a block of its own), each covered by one
 * VkBuffer, never one allocation per tensor. Two pools: DEVICE (intermediates; device-local memory when the device
 * has it, which on lavapipe and integrated GPUs is host-visible too) and HOST (staging of the graph's inputs and
 * outputs and the constants: host-visible and host-coherent, mapped for the graph's lifetime). Also the NC4HW4
 * index mapping.
 *
 * Placement (vk_arena_*) is pure bookkeeping, tested without a device. Memory lives from prepare to release; it
 * does not reuse the memory of dead intermediates (planned).
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

uint64_t vk_nc4_count(const int64_t d[4])
{
    return (uint64_t)d[0] * (uint64_t)((d[1] + 3) / 4) * (uint64_t)d[2] * (uint64_t)d[3] * 4u;
}

uint64_t vk_nc4_offset(const int64_t d[4], const int64_t i[4])
{
    uint64_t c4 = (uint64_t)((d[1] + 3) / 4);
    return ((((uint64_t)i[0] * c4 + (uint64_t)(i[1] / 4)) * (uint64_t)d[2] + (uint64_t)i[2]) * (uint64_t)d[3] +
            (uint64_t)i[3]) * 4u + (uint64_t)(i[1] % 4);
}

void vk_arena_init(vk_arena *a, uint64_t block_bytes, uint64_t align)
{
    memset(a, 0, sizeof *a);
    a->block_bytes = block_bytes;
    a->align = align ? align : 1;
}

void vk_arena_free(vk_arena *a)
{
    free(a->block_size);
    free(a->block_used);
    a->block_size = a->block_used = NULL;
    a->n_blocks = a->cap_blocks = 0;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

int vk_arena_place(vk_arena *a, uint64_t size, int *block, uint64_t *offset)
{
    if (a->n_blocks > 0) {
        int b = a->n_blocks - 1;
        uint64_t off = align_up(a->block_used[b], a->align);
        if (off + size <= a->block_size[b]) {
            a->block_used[b] = off + size;
            *block = b;
            *offset = off;
            return 0;
        }
    }
    if (a->n_blocks == a->cap_blocks) {
        int cap = a->cap_blocks ? 2 * a->cap_blocks : 4;
        uint64_t *s = realloc(a->block_size, (size_t)cap * sizeof *s);
        if (!s) return -1;
        a->block_size = s;
        uint64_t *u = realloc(a->block_used, (size_t)cap * sizeof *u);
        if (!u) return -1;
        a->block_used = u;
        a->cap_blocks = cap;
    }
    int b = a->n_blocks++;
    a->block_size[b] = size > a->block_bytes ? align_up(size, a->align) : a->block_bytes;
    a->block_used[b] = size;
    *block = b;
    *offset = 0;
    return 0;
}

/* The first memory type in `bits` with all of `want`, or -1. */
static int find_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

par_status vk_pools_init(vk_graph *vg, par_msg *msg)
{
    uint64_t align = vg->ctx->props.limits.minStorageBufferOffsetAlignment;
    if (align < 16) align = 16; /* a vec4 at least */
    for (int k = 0; k < VK_POOL_COUNT; k++) vk_arena_init(&vg->pools[k].arena, VK_BLOCK_BYTES, align);
    return PAR_OK;
}

par_status vk_tensor_place(vk_graph *vg, int t, int kind, uint64_t bytes, par_msg *msg)
{
    vk_tensor *T = &vg->tensors[t];
    if (bytes > vg->ctx->props.limits.maxStorageBufferRange)
        return par_msgf(msg, PAR_UNSUPPORTED, "a tensor of %llu bytes exceeds the device's maxStorageBufferRange %u",
                        (unsigned long long)bytes, vg->ctx->props.limits.maxStorageBufferRange);
    T->pool = kind;
    T->bytes = bytes;
    if (vk_arena_place(&vg->pools[kind].arena, bytes, &T->block, &T->offset) != 0)
        return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
    return PAR_OK;
}

par_status vk_pools_commit(vk_graph *vg, par_msg *msg)
{
    VkDevice dev = vg->ctx->device;
    for (int k = 0; k < VK_POOL_COUNT; k++) {
        vk_pool *P = &vg->pools[k];
        if (P->arena.n_blocks == 0) continue;
        P->blocks = calloc((size_t)P->arena.n_blocks, sizeof *P->blocks);
        if (!P->blocks) return par_msgf(msg, PAR_ERROR, "prepare: out of memory");
        for (int b = 0; b < P->arena.n_blocks; b++) {
            vk_block *B = &P->blocks[b];
            VkBufferCreateInfo bci = {
                .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                .size = P->arena.block_size[b],
                .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                         VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
            };
            VkResult r = vkCreateBuffer(dev, &bci, NULL, &B->buf);
            if (r != VK_SUCCESS)
                return par_msgf(msg, PAR_ERROR, "vkCreateBuffer (%llu bytes): %s",
                                (unsigned long long)bci.size, vk_result_name(r));
            VkMemoryRequirements req;
            vkGetBufferMemoryRequirements(dev, B->buf, &req);
            const VkPhysicalDeviceMemoryProperties *mp = &vg->ctx->memprops;
            int type = k == VK_POOL_HOST
                           ? find_type(mp, req.memoryTypeBits,
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)
                           : find_type(mp, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
            if (type < 0 && k == VK_POOL_DEVICE) type = find_type(mp, req.memoryTypeBits, 0);
            if (type < 0)
                return par_msgf(msg, PAR_UNSUPPORTED, "no %s memory type for storage buffers",
                                k == VK_POOL_HOST ? "host-visible coherent" : "usable");
            P->type_index = (uint32_t)type;
            P->host_visible = (mp->memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
            VkMemoryAllocateInfo mai = {
                .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                .allocationSize = req.size,
                .memoryTypeIndex = (uint32_t)type,
            };
            r = vkAllocateMemory(dev, &mai, NULL, &B->mem);
            if (r != VK_SUCCESS) {
                B->mem = VK_NULL_HANDLE;
                return par_msgf(msg, PAR_ERROR, "vkAllocateMemory (%llu bytes, type %d): %s",
                                (unsigned long long)req.size, type, vk_result_name(r));
            }
            r = vkBindBufferMemory(dev, B->buf, B->mem, 0);
            if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkBindBufferMemory: %s", vk_result_name(r));
            if (P->host_visible) {
                r = vkMapMemory(dev, B->mem, 0, VK_WHOLE_SIZE, 0, &B->map);
                if (r != VK_SUCCESS) return par_msgf(msg, PAR_ERROR, "vkMapMemory: %s", vk_result_name(r));
            }
        }
    }
    return PAR_OK;
}

int vk_add_tensor(vk_graph *vg, float *data, int64_t n, par_msg *msg)
{
    if (vg->n_tensors == vg->cap_tensors) {
        int cap = vg->cap_tensors ? 2 * vg->cap_tensors : 8;
        vk_tensor *t = realloc(vg->tensors, (size_t)cap * sizeof *t);
        if (!t) {
            free(data);
            par_msgf(msg, PAR_ERROR, "prepare: out of memory");
            return -1;
        }
        vg->tensors = t;
        vg->cap_tensors = cap;
    }
    int k = vg->n_tensors++;
    vk_tensor *T = &vg->tensors[k];
    memset(T, 0, sizeof *T);
    T->init = data;
    T->d4[0] = T->d4[1] = T->d4[2] = 1;
    T->d4[3] = n;
    T->f16 = vg->f16;
    if (vk_tensor_place(vg, k, VK_POOL_HOST, ((uint64_t)n * (T->f16 ? 2 : 4) + 3) / 4 * 4, msg) != PAR_OK) return -1;
    return k;
}

void *vk_tensor_map(vk_graph *vg, int t)
{
    const vk_tensor *T = &vg->tensors[t];
    const vk_pool *P = &vg->pools[T->pool];
    if (!P->blocks || !P->blocks[T->block].map) return NULL;
    return (char *)P->blocks[T->block].map + T->offset;
}

void vk_pools_free(vk_graph *vg)
{
    VkDevice dev = vg->ctx->device;
    for (int k = 0; k < VK_POOL_COUNT; k++) {
        vk_pool *P = &vg->pools[k];
        if (P->blocks) {
            for (int b = 0; b < P->arena.n_blocks; b++) {
                if (P->blocks[b].map) vkUnmapMemory(dev, P->blocks[b].mem);
                if (P->blocks[b].buf) vkDestroyBuffer(dev, P->blocks[b].buf, NULL);
                if (P->blocks[b].mem) vkFreeMemory(dev, P->blocks[b].mem, NULL);
            }
            free(P->blocks);
            P->blocks = NULL;
        }
        vk_arena_free(&P->arena);
    }
}
