/*
 * vk_device.c - the vulkan backend's device: the instance (API 1.1), the choice of a physical device (the `device`
 * knob, else the first discrete or integrated GPU, else the CPU device, lavapipe), the chosen device's 16-bit
 * features (storageBuffer16BitAccess, shaderFloat16), the logical device with one compute queue and the features
 * the precision mode needs, and the names of VkResult values for messages.
 *
 * Also: the validate knob (the instance re-created with VK_LAYER_KHRONOS_validation and a debug-utils messenger
 * that collects the layer's defects for diagnostics), the chosen device's timestamp abilities, and the bookkeeping
 * of VK_CALL (a lost device; the failures tests plant).
 *
 * And the warm start of the drivers (instance_create_pinned below; vk_warm_driver in vk_pipes.c): the libraries the
 * first instance loaded stay mapped and relocated after it is destroyed, and on a CPU device one pipeline is built and
 * thrown away, so that the fork server's warm start leaves a loaded, initialized driver to every job's child.
 *
 * It never sets VK_ICD_FILENAMES or any other environment (which drivers and layers the loader finds is the user's
 * business), never replaces the instance once a logical device exists, and never creates more than one logical
 * device per context.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
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

#define VK_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

/* What counts as a defect: every error (validation or general: the layer's own failures too) and every validation
 * warning (a use the specification allows but that is almost always a bug, such as a descriptor never written).
 * Performance messages (best practices) and info / verbose ones never count: they are advice, not defects. */
int vk_diag_counts(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type)
{
    if (type == VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) return 0;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) return 1;
    return (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) &&
           (type & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT);
}

/* The messenger's callback: may run on any thread the driver or the layer uses, hence the lock. Keeps the first
 * message (one line: newlines become spaces) and counts the rest. */
static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    vk_ctx *c = user;
    if (!c || !vk_diag_counts(severity, type)) return VK_FALSE;
    pthread_mutex_lock(&c->diag_lock);
    if (c->n_diag++ == 0) {
        /* The layer's text is "Validation Error: [ ID ] Object 0: handle = ..., type = ...; | MessageID = 0x... |
         * what is wrong. The Vulkan spec states: ...": keep the ID and what follows the last header field, which
         * say the rule and the fault without the handles' addresses first. */
        const char *id = data && data->pMessageIdName ? data->pMessageIdName : "?";
        const char *text = data && data->pMessage ? data->pMessage : "";
        const char *mid = strstr(text, "| MessageID = ");
        const char *bar = mid ? strstr(mid + 2, "| ") : NULL;
        if (bar) text = bar + 2;
        snprintf(c->diag, sizeof c->diag, "%s [%s] %s",
                 severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning", id, text);
        for (char *p = c->diag; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    }
    pthread_mutex_unlock(&c->diag_lock);
    return VK_FALSE; /* never abort the call */
}

size_t vk_ctx_diagnostics(vk_ctx *c, char *buf, size_t len)
{
    pthread_mutex_lock(&c->diag_lock);
    size_t need = 0;
    if (c->n_diag > 0) {
        char more[48] = "";
        if (c->n_diag > 1) snprintf(more, sizeof more, " (and %d more)", c->n_diag - 1);
        int w = snprintf(buf && len ? buf : NULL, buf ? len : 0, "vulkan validation: %s%s", c->diag, more);
        need = w < 0 ? 1 : (size_t)w + 1;
        if (buf && len) {
            c->n_diag = 0;
            c->diag[0] = 0;
        }
    }
    pthread_mutex_unlock(&c->diag_lock);
    return need;
}

static int layer_present(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkLayerProperties *lp = calloc(n, sizeof *lp);
    if (!lp) return 0;
    int found = 0;
    if (vkEnumerateInstanceLayerProperties(&n, lp) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++) found = strcmp(lp[i].layerName, name) == 0;
    free(lp);
    return found;
}

static void instance_destroy(vk_ctx *c)
{
    if (c->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(c->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(c->instance, c->messenger, NULL);
        c->messenger = VK_NULL_HANDLE;
    }
    if (c->instance) vkDestroyInstance(c->instance, NULL);
    c->instance = VK_NULL_HANDLE;
    c->n_phys = 0;
}

/* The instance (API 1.1) and its physical devices. With validation: the layer, VK_EXT_debug_utils, the messenger
 * info chained into VkInstanceCreateInfo (so instance creation and destruction are checked too) and then the
 * messenger itself (the layer reports to a callback only through one). */
static par_status instance_create(vk_ctx *c, int validate, par_msg *msg)
{
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "parity",
        .pEngineName = "parity-vulkan",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkDebugUtilsMessengerCreateInfoEXT mci = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity =
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        .pfnUserCallback = on_message,
        .pUserData = c,
    };
    /* Synchronization validation too: a missing or wrong barrier between dispatches is the defect this backend's
     * recording is most likely to have, and core validation does not look for it. */
    VkValidationFeatureEnableEXT enable[1] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = &mci,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enable,
    };
    const char *layers[1] = {VK_VALIDATION_LAYER};
    const char *exts[2] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    if (validate) {
        ici.pNext = &features;
        ici.enabledLayerCount = 1;
        ici.ppEnabledLayerNames = layers;
        ici.enabledExtensionCount = 2;
        ici.ppEnabledExtensionNames = exts;
    }
    VkResult r = vkCreateInstance(&ici, NULL, &c->instance);
    if (r != VK_SUCCESS) {
        c->instance = VK_NULL_HANDLE;
        if (validate)
            return par_msgf(msg, PAR_ERROR, "validate=1: vkCreateInstance with " VK_VALIDATION_LAYER ", "
                            VK_EXT_DEBUG_UTILS_EXTENSION_NAME " and " VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME ": %s",
                            vk_result_name(r));
        return par_msgf(msg, PAR_UNSUPPORTED, "no usable Vulkan loader or driver: vkCreateInstance: %s",
                        vk_result_name(r));
    }
    if (validate) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(c->instance, "vkCreateDebugUtilsMessengerEXT");
        r = create ? create(c->instance, &mci, NULL, &c->messenger) : VK_ERROR_EXTENSION_NOT_PRESENT;
        if (r != VK_SUCCESS) {
            c->messenger = VK_NULL_HANDLE;
            instance_destroy(c);
            return par_msgf(msg, PAR_ERROR, "validate=1: vkCreateDebugUtilsMessengerEXT: %s", vk_result_name(r));
        }
    }
    c->validate = validate;
    uint32_t n = VK_MAX_DEVICES;
    r = vkEnumeratePhysicalDevices(c->instance, &n, c->phys);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        instance_destroy(c);
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
    return PAR_OK;
}

/* ---- Pinning the drivers ----
 *
 * vkCreateInstance makes the loader dlopen every installed driver (ICD) and, through them, their libraries (lavapipe:
 * libLLVM, libexpat, libdrm, ...); vkDestroyInstance dlcloses them all again. The fork server runs init and destroy
 * once (its warm start) and then forks one child per job, whose init would load and relocate them all afresh:
 * measured on lavapipe with four ICDs installed, 12 of a case's ~40 ms (symbol lookups and relocations in ld.so,
 * page faults). So the first context of a process takes one more reference (dlopen RTLD_NOLOAD) on every object
 * its instance creation loaded: the loader's dlclose then leaves them mapped, and a child's vkCreateInstance finds
 * them loaded (a reference count, no relocation).
 *
 * Why this is safe across fork: loading a library starts no thread; what a driver starts (lavapipe's disk-cache
 * queue, a device's rasterizer threads) belongs to an instance or a device and ends with it, and the server has
 * destroyed both before it forks. Every child creates its own instance, device and threads. What a child inherits
 * is what any process that creates a second instance after destroying a first one sees: the libraries' one-time
 * initialization (LLVM's targets, CPU detection) already done. It changes no number: the same driver code runs.
 *
 * On a CPU device (lavapipe) the first context also warms the driver (c->warm_due: vk_warm_driver, vk_pipes.c).
 *
 * PARITY_VULKAN_WARM=0 turns both off (measurements; a driver that should misbehave with them). */
#define VK_PIN_MAX 256
typedef struct pin_set {
    int n;
    ElfW(Addr) base[VK_PIN_MAX];
} pin_set;

static int pin_collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    pin_set *s = data;
    if (s->n < VK_PIN_MAX) s->base[s->n++] = info->dlpi_addr;
    return 0;
}

typedef struct pin_walk {
    const pin_set *before;
    int pinned;
} pin_walk;

static int pin_new(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    pin_walk *w = data;
    for (int i = 0; i < w->before->n; i++)
        if (w->before->base[i] == info->dlpi_addr) return 0;
    /* RTLD_NOLOAD: only a reference on what is loaded (never a second copy); the handle is kept on purpose. */
    if (info->dlpi_name && info->dlpi_name[0] && dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD)) w->pinned++;
    return 0;
}

static int pin_state;   /* 0: not yet, 1: done (or off) */
static int pin_count;   /* objects pinned by this process (tests) */

int vk_pinned_libraries(void)
{
    return pin_count;
}

/* Instance creation (without validation), pinning what the process's first one loads; *first is set for that one
 * unless PARITY_VULKAN_WARM=0 (its context then warms the driver). Serialized: contexts may be created on several
 * threads (--no-isolate). */
static par_status instance_create_pinned(vk_ctx *c, int *first, par_msg *msg)
{
    *first = 0;
    static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&pin_lock);
    if (pin_state) {
        pthread_mutex_unlock(&pin_lock);
        return instance_create(c, 0, msg);
    }
    const char *env = getenv("PARITY_VULKAN_WARM");
    pin_set *before = env && strcmp(env, "0") == 0 ? NULL : calloc(1, sizeof *before);
    if (before) dl_iterate_phdr(pin_collect, before);
    par_status st = instance_create(c, 0, msg);
    if (st == PAR_OK) {
        pin_state = 1;
        *first = before != NULL;
        if (before && before->n < VK_PIN_MAX) { /* a list that overflowed pins nothing (only slower) */
            pin_walk w = {before, 0};
            dl_iterate_phdr(pin_new, &w);
            pin_count = w.pinned;
        }
    }
    free(before);
    pthread_mutex_unlock(&pin_lock);
    return st;
}

int vk_slots(const vk_ctx *c)
{
    return c->props.limits.maxPerStageDescriptorStorageBuffers < VK_MAX_SLOTS ? 4 : VK_MAX_SLOTS;
}

par_status vk_ctx_create(vk_ctx **out, par_msg *msg)
{
    *out = NULL;
    vk_ctx *c = calloc(1, sizeof *c);
    if (!c) return par_msgf(msg, PAR_ERROR, "init: out of memory");
    if (pthread_mutex_init(&c->diag_lock, NULL) != 0) {
        free(c);
        return par_msgf(msg, PAR_ERROR, "init: pthread_mutex_init failed");
    }
    c->chosen = -1;
    c->timestamps = 1;
    int first;
    par_status st = instance_create_pinned(c, &first, msg);
    if (st == PAR_OK && (st = vk_ctx_select(c, NULL, msg)) != PAR_OK) st = PAR_UNSUPPORTED;
    c->warm_due = st == PAR_OK && first;
    if (st != PAR_OK) {
        vk_ctx_destroy(c);
        return st;
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
    c->ts_bits = 0;
    c->ts_period = c->props.limits.timestampPeriod;
    {
        uint32_t nq = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(c->phys[k], &nq, NULL);
        VkQueueFamilyProperties *q = nq ? calloc(nq, sizeof *q) : NULL;
        if (q) {
            vkGetPhysicalDeviceQueueFamilyProperties(c->phys[k], &nq, q);
            /* timestampValidBits alone decides for the family: timestampComputeAndGraphics only promises it for
             * every graphics and compute family at once. */
            if (c->queue_family < nq) c->ts_bits = q[c->queue_family].timestampValidBits;
            free(q);
        }
    }
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
    instance_destroy(c);
    pthread_mutex_destroy(&c->diag_lock);
    free(c);
}

/* Chooses device `chosen` of a new instance again, if it is still the device called `name`. */
static par_status reselect(vk_ctx *c, int chosen, const char *name, par_msg *msg)
{
    if (chosen < 0 || chosen >= c->n_phys || strcmp(c->info[chosen].name, name) != 0)
        return par_msgf(msg, PAR_ERROR, "validate=%d: device %d '%s' is not found again in the new instance",
                        c->validate, chosen, name);
    char idx[16];
    snprintf(idx, sizeof idx, "%d", chosen);
    return vk_ctx_select(c, idx, msg);
}

par_status vk_ctx_set_validate(vk_ctx *c, int on, par_msg *msg)
{
    if (on == c->validate && c->instance) return PAR_OK;
    if (on && !layer_present(VK_VALIDATION_LAYER))
        return par_msgf(msg, PAR_UNSUPPORTED, "validate=1: the layer " VK_VALIDATION_LAYER
                        " is not installed (package vulkan-validationlayers)");
    /* No logical device exists yet (knobs come before the first prepare): the instance can be replaced. The chosen
     * device is found again by its index, which the loader keeps from one instance to the next. */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    int chosen = c->chosen;
    snprintf(name, sizeof name, "%s", chosen >= 0 ? c->info[chosen].name : "");
    instance_destroy(c);
    c->chosen = -1;
    if (instance_create(c, on, msg) != PAR_OK) {
        /* Back to an instance without the layer, so that the context stays as it was (the knob still fails). */
        par_msg ignored;
        if (on && instance_create(c, 0, &ignored) == PAR_OK) reselect(c, chosen, name, &ignored);
        return PAR_ERROR;
    }
    return reselect(c, chosen, name, msg);
}

int vk_fault_due(vk_ctx *c)
{
    return c->fail_nth > 0 && --c->fail_nth == 0;
}

VkResult vk_note(vk_ctx *c, const char *name, VkResult r)
{
    if (r == VK_ERROR_DEVICE_LOST && !c->lost[0]) snprintf(c->lost, sizeof c->lost, "%s", name);
    return r;
}
