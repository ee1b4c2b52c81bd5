/*
 * vk_pcache.c - the vulkan backend's pipeline cache kept on disk: one VkPipelineCache per logical device, created
 * from the file of its device and driver, and the file written again when the driver's data changed.
 *
 * The file: <cache>/vk-pipelines-<vendorID>-<deviceID>-<driverVersion>-<pipelineCacheUUID>.bin, where <cache> is
 * PARITY_CACHE_DIR or <build>/cache (the reference cache's folder); PARITY_CACHE=0 turns it off with the reference
 * cache. Shader variant, OP and the other specialization constants are part of each pipeline's create info, which
 * the driver keys its entries on; device and driver are in the file's name and again in the data's header, which is
 * validated as the Vulkan specification lays it out (VkPipelineCacheHeaderVersionOne: length, version, vendorID,
 * deviceID, pipelineCacheUUID, each 32-bit field least significant byte first) before the driver sees it. A file too
 * short, damaged or of another device or driver is a miss: one line on stderr, the cache starts empty, and the next
 * save replaces the file. A folder that cannot be written is read, never written. Saves write a temporary file and rename it over the old one, so that two processes saving
 * at once leave one whole file, never a mix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/files.h"
#include "core/paths.h"
#include "vk_internal.h"

#define HDR_BYTES 32u           /* VkPipelineCacheHeaderVersionOne: 4 + 4 + 4 + 4 + VK_UUID_SIZE */
#define MAX_FILE (256u << 20)   /* a larger file is not read (a damaged length, not a cache) */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int vk_pcache_header_check(const void *data, size_t n, const VkPhysicalDeviceProperties *props, char *why, size_t len)
{
    const unsigned char *p = data;
    if (n < HDR_BYTES) {
        snprintf(why, len, "%zu bytes, shorter than the %u-byte header", n, HDR_BYTES);
        return -1;
    }
    uint32_t hlen = le32(p), version = le32(p + 4), vendor = le32(p + 8), device = le32(p + 12);
    if (hlen < HDR_BYTES || hlen > n) {
        snprintf(why, len, "header length %u is not within 32..%zu", hlen, n);
        return -1;
    }
    if (version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
        snprintf(why, len, "header version %u, not %d (VK_PIPELINE_CACHE_HEADER_VERSION_ONE)", version,
                 (int)VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
        return -1;
    }
    if (vendor != props->vendorID || device != props->deviceID) {
        snprintf(why, len, "written for vendor 0x%x device 0x%x, this is vendor 0x%x device 0x%x", vendor, device,
                 props->vendorID, props->deviceID);
        return -1;
    }
    if (memcmp(p + 16, props->pipelineCacheUUID, VK_UUID_SIZE) != 0) {
        snprintf(why, len, "pipelineCacheUUID differs from the driver's");
        return -1;
    }
    return 0;
}

/* The file's path for the chosen device; 0 when the cache is off or has no folder. */
static int cache_path(const vk_ctx *c, char *out, size_t len)
{
    const char *on = getenv("PARITY_CACHE"), *env = getenv("PARITY_CACHE_DIR");
    if (on && strcmp(on, "0") == 0) return 0;
    char dir[4096];
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else if (par_build_dir()[0]) snprintf(dir, sizeof dir, "%s/cache", par_build_dir());
    else return 0;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", c->props.pipelineCacheUUID[i]);
    int k = snprintf(out, len, "%s/vk-pipelines-%x-%x-%x-%s.bin", dir, c->props.vendorID, c->props.deviceID,
                     c->props.driverVersion, uuid);
    return k > 0 && (size_t)k < len;
}

/* The file's bytes (malloc'ed), or NULL with *n = 0 when there is none (not an error: the first run). */
static void *read_file(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size > 0 && (unsigned long)size <= MAX_FILE && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size))) {
        if (fread(buf, 1, (size_t)size, f) == (size_t)size) *n = (size_t)size;
        else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    if (!buf && size != 0) fprintf(stderr, "parity: vulkan pipeline cache %s: unreadable (%ld bytes); starting empty\n",
                                   path, size);
    return buf;
}

void vk_pcache_open(vk_ctx *c)
{
    c->pcache = VK_NULL_HANDLE;
    c->pcache_bytes = 0;
    char path[4200] = "";
    size_t n = 0;
    int have = cache_path(c, path, sizeof path);
    void *data = have ? read_file(path, &n) : NULL;
    char why[160];
    if (data && vk_pcache_header_check(data, n, &c->props, why, sizeof why) != 0) {
        fprintf(stderr, "parity: vulkan pipeline cache %s: %s; starting empty\n", path, why);
        free(data);
        data = NULL;
        n = 0;
    }
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = n,
                                    .pInitialData = data};
    if (vkCreatePipelineCache(c->device, &ci, NULL, &c->pcache) != VK_SUCCESS) {
        /* The driver refused the data its header accepted: start empty, without a cache if it refuses that too. */
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        if (vkCreatePipelineCache(c->device, &ci, NULL, &c->pcache) != VK_SUCCESS) c->pcache = VK_NULL_HANDLE;
        n = 0;
    }
    c->pcache_bytes = n;
    /* A folder this process cannot write is used read-only: nothing is saved, and nothing said per case. */
    char *slash = strrchr(path, '/');
    if (slash) *slash = 0;
    c->pcache_readonly = !have || !slash || par_mkdir_p(path) != 0 || access(path, W_OK | X_OK) != 0;
    free(data);
}

void vk_pcache_save(vk_ctx *c)
{
    char path[4200];
    size_t n = 0;
    if (!c->pcache || c->pcache_readonly || !cache_path(c, path, sizeof path) ||
        vkGetPipelineCacheData(c->device, c->pcache, &n, NULL) != VK_SUCCESS || n == c->pcache_bytes || n == 0)
        return;
    void *data = malloc(n);
    if (!data) return;
    par_msg m;
    if (vkGetPipelineCacheData(c->device, c->pcache, &n, data) == VK_SUCCESS) {
        if (par_write_bytes_atomic(path, data, n, &m) == 0) c->pcache_bytes = n;
        else {
            /* Once per context: a failed write costs the cache, not the case. */
            fprintf(stderr, "parity: vulkan pipeline cache: not written: %s\n", m.text);
            c->pcache_readonly = 1;
        }
    }
    free(data);
}

void vk_pcache_close(vk_ctx *c)
{
    if (c->pcache) vkDestroyPipelineCache(c->device, c->pcache, NULL);
    c->pcache = VK_NULL_HANDLE;
}
