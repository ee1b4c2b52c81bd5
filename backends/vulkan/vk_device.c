/*
 * vk_device.c - the vulkan backend's device: the instance (API 1.1), the choice of a physical device (the `device`
 * knob, else the first discrete or integrated GPU, else the CPU device, lavapipe), the chosen device's 16-bit
 * features (storageBuffer16BitAccess, shaderFloat16), the logical device with one compute queue and the features
 * the precision mode needs, and the names of VkResult values for messages.
 *
 * It never sets VK_ICD_FILENAMES or any other environment (which drivers the loader probes is the user's
 * business), and never creates more than one logical device per context.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

const char *vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VK_ERROR_UNKNOWN";
    }
}

const char *vk_device_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return n == 0;
}

int vk_choose_device(const vk_devinfo *devs, int n, const char *want, char *err, size_t errlen)
{
    if (n <= 0) {
        snprintf(err, errlen, "no Vulkan physical device");
        return -1;
    }
    if (!want || !want[0] || strcmp(want, "auto") == 0) {
        for (int i = 0; i < n; i++)
            if (devs[i].has_compute && (devs[i].type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
                                        devs[i].type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU))
                return i;
        for (int i = 0; i < n; i++)
            if (devs[i].has_compute) return i;
        snprintf(err, errlen, "none of the %d Vulkan devices has a compute queue", n);
        return -1;
    }
    int all_digits = 1;
    for (const char *p = want; *p; p++)
        if (!isdigit((unsigned char)*p)) all_digits = 0;
    int found = -1;
    if (all_digits) {
        long k = strtol(want, NULL, 10);
        if (k >= n) {
            snprintf(err, errlen, "device %ld does not exist (%d Vulkan device%s)", k, n, n == 1 ? "" : "s");
            return -1;
        }
        found = (int)k;
    } else {
        for (int i = 0; i < n && found < 0; i++)
            if (contains_nocase(devs[i].name, want)) found = i;
        if (found < 0) {
            int w = snprintf(err, errlen, "no Vulkan device name contains '%s' (devices:", want);
            for (int i = 0; i < n && w > 0 && (size_t)w < errlen; i++)
                w += snprintf(err + w, errlen - (size_t)w, "%s %d '%s'", i ? "," : "", i, devs[i].name);
            if (w > 0 && (size_t)w < errlen) snprintf(err + w, errlen - (size_t)w, ")");
            return -1;
        }
    }
    if (!devs[found].has_compute) {
        snprintf(err, errlen, "device %d '%s' has no compute queue", found, devs[found].name);
        return -1;
    }
    return found;
}

static int compute_family(VkPhysicalDevice pd, uint32_t *family)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    if (n == 0) return 0;
    VkQueueFamilyProperties *q = calloc(n, sizeof *q);
    if (!q) return 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    int found = 0;
    /* A compute-only family first (a GPU's async compute queue), else any family with compute. */
    for (uint32_t i = 0; i < n && !found; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) {
            *family = i;
            found = 1;
        }
    for (uint32_t i = 0; i < n && !found; i++)
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            *family = i;
            found = 1;
        }
    free(q);
    return found;
}

par_status vk_ctx_create(vk_ctx **out, par_msg *msg)
{
    *out = NULL;
    vk_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    c->chosen = -1;
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "parity",
        .pEngineName = "parity-vulkan",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = vkCreateInstance(&ici, NULL, &c->instance);
    if (r != VK_SUCCESS) {
        free(c);
        return par_msgf(msg, PAR_UNSUPPORTED, "no usable Vulkan loader or driver: vkCreateInstance: %s",
                        vk_result_name(r));
    }
    uint32_t n = VK_MAX_DEVICES;
    r = vkEnumeratePhysicalDevices(c->instance, &n, c->phys);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        vk_ctx_destroy(c);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE)
            return par_msgf(msg, PAR_UNSUPPORTED, "vkEnumeratePhysicalDevices: %s", vk_result_name(r));
        return par_msgf(msg, PAR_UNSUPPORTED, "no Vulkan physical device (install mesa-vulkan-drivers for lavapipe)");
    }
    c->n_phys = (int)n;
    for (int i = 0; i < c->n_phys; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(c->phys[i], &p);
        snprintf(c->info[i].name, sizeof c->info[i].name, "%s", p.deviceName);
        c->info[i].type = p.deviceType;
        uint32_t fam;
        /* Only devices of API 1.1 or later: the shaders are SPIR-V 1.3 (vulkan1.1). */
        c->info[i].has_compute = compute_family(c->phys[i], &fam) && p.apiVersion >= VK_API_VERSION_1_1;
    }
    par_status st = vk_ctx_select(c, NULL, msg);
    if (st != PAR_OK) {
        vk_ctx_destroy(c);
        return PAR_UNSUPPORTED;
    }
    *out = c;
    return PAR_OK;
}

/* Whether physical device pd lists device extension `name`. */
static int has_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkExtensionProperties *e = calloc(n, sizeof *e);
    if (!e) return 0;
    int found = 0;
    if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(e[i].extensionName, name) == 0;
    free(e);
    return found;
}

/* The chosen device's 16-bit features: storageBuffer16BitAccess (VkPhysicalDevice16BitStorageFeatures, core 1.1)
 * and shaderFloat16 (VkPhysicalDeviceShaderFloat16Int8Features, asked only where the device lists
 * VK_KHR_shader_float16_int8: the instance is 1.1, so the extension is what enables it). */
static void query_16bit(vk_ctx *c)
{
    VkPhysicalDevice pd = c->phys[c->chosen];
    c->float16_ext = has_extension(pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .pNext = c->float16_ext ? &f16 : NULL};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    c->storage16 = s16.storageBuffer16BitAccess == VK_TRUE;
    c->float16 = c->float16_ext && f16.shaderFloat16 == VK_TRUE;
}

par_status vk_ctx_select(vk_ctx *c, const char *want, par_msg *msg)
{
    char err[PAR_MSG_LEN];
    int k = vk_choose_device(c->info, c->n_phys, want, err, sizeof err);
    if (k < 0) return par_msgf(msg, PAR_ERROR, "%s", err);
    c->chosen = k;
    vkGetPhysicalDeviceProperties(c->phys[k], &c->props);
    vkGetPhysicalDeviceMemoryProperties(c->phys[k], &c->memprops);
    compute_family(c->phys[k], &c->queue_family);
    c->driver[0] = 0;
    /* The driver's name through VkPhysicalDeviceDriverProperties (core in 1.2), when the device has 1.2. */
    if (c->props.apiVersion >= VK_API_VERSION_1_2) {
        VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
        vkGetPhysicalDeviceProperties2(c->phys[k], &p2);
        snprintf(c->driver, sizeof c->driver, "%s %s", dp.driverName, dp.driverInfo);
    }
    query_16bit(c);
    return PAR_OK;
}

par_status vk_ctx_open(vk_ctx *c, par_msg *msg)
{
    if (c->device) return PAR_OK;
    char err[PAR_MSG_LEN];
    if (vk_precision_check(c->precision, c->storage16, c->float16, c->props.deviceName, err, sizeof err) != 0)
        return par_msgf(msg, PAR_UNSUPPORTED, "%s", err);
    /* Only the features the mode uses are enabled. */
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                     .shaderFloat16 = VK_TRUE};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .pNext = c->precision == VK_PREC_FP16_RELAXED ? &f16 : NULL,
                                                .storageBuffer16BitAccess = VK_TRUE};
    const char *ext[1] = {VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};
    int relaxed = c->precision == VK_PREC_FP16_RELAXED;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = c->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &prio,
    };
    VkDeviceCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = c->precision != VK_PREC_FP32 ? &s16 : NULL,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &qci,
        .enabledExtensionCount = relaxed ? 1u : 0u,
        .ppEnabledExtensionNames = relaxed ? ext : NULL,
    };
    VkResult r = vkCreateDevice(c->phys[c->chosen], &dci, NULL, &c->device);
    if (r != VK_SUCCESS) {
        c->device = VK_NULL_HANDLE;
        return par_msgf(msg, PAR_UNSUPPORTED, "vkCreateDevice on '%s': %s", c->props.deviceName, vk_result_name(r));
    }
    vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);
    return PAR_OK;
}

void vk_ctx_destroy(vk_ctx *c)
{
    if (!c) return;
    if (c->device) {
        vkDeviceWaitIdle(c->device);
        vkDestroyDevice(c->device, NULL);
    }
    if (c->instance) vkDestroyInstance(c->instance, NULL);
    free(c);
}
