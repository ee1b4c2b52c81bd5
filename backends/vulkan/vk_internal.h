/*
 * vk_internal.h - the vulkan backend's internal types: the context (instance, chosen device, queue), the
 * sub-allocator, the tensors and dispatches of a prepared graph, and the shader table. Shared by vk_device.c,
 * vk_mem.c, vk_graph.c, vk_ops.c and vulkan.c; nothing outside backends/vulkan includes it (tests/test_vulkan.c
 * excepted, for the pure pieces: device choice, arena placement, the NC4HW4 mapping, the precision modes and the f16
 * conversion).
 */
#ifndef VK_INTERNAL_H
#define VK_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "core/parity_backend.h"
#include "vk_codes.h"

#define VK_NAME "vulkan"
#define VK_WG_SIZE 64u          /* workgroup size (specialization constant 0 of every shader) */
#define VK_MAX_SLOTS 5          /* storage buffers per dispatch: 0 output, 1..4 inputs (4: sdpa's mask only) */
#define VK_BLOCK_BYTES (64u << 20) /* one VkDeviceMemory block of the sub-allocator (larger tensors get their own) */
#define VK_MAX_DEVICES 16
#define VK_MAX_SPEC 2           /* specialization constants a dispatch may set beyond 0 (workgroup) and 1 (OP) */

/* ---- Device choice (pure; vk_device.c) ---- */
typedef struct vk_devinfo {
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    VkPhysicalDeviceType type;
    int has_compute;            /* a queue family with VK_QUEUE_COMPUTE_BIT */
} vk_devinfo;

/* The index of the device to use among n: want NULL or "" or "auto": the first discrete or integrated GPU with a
 * compute queue, else the first device with one (lavapipe). want all digits: that index. Otherwise the first device
 * whose name contains want (case-insensitive). -1 with a one-line reason in err when none fits. */
int vk_choose_device(const vk_devinfo *devs, int n, const char *want, char *err, size_t errlen);

const char *vk_result_name(VkResult r);
const char *vk_device_type_name(VkPhysicalDeviceType t);

/* ---- Precision modes (the `precision` knob; docs/backends/vulkan.md) ---- */
typedef enum vk_precision {
    VK_PREC_FP32 = 0,           /* f32 storage, f32 arithmetic */
    VK_PREC_FP16 = 1,           /* f16 storage of every float tensor but the staging, f32 arithmetic */
    VK_PREC_FP16_RELAXED = 2,   /* f16 storage, f16 arithmetic in the heavy ops */
} vk_precision;

/* The shader variants builtin.mk compiles (shaders/common.glsl). */
typedef enum vk_variant {
    VK_VAR_F32 = 0,             /* f32 buffers and arithmetic */
    VK_VAR_F16S,                /* f16 buffers, f32 arithmetic */
    VK_VAR_F16A,                /* f16 buffers, f16 arithmetic */
    VK_VAR_EDGEIN,              /* unary only: f32 input (staging), f16 output */
    VK_VAR_EDGEOUT,             /* unary only: f16 input, f32 output (staging) */
} vk_variant;

/* The mode of a knob value ("fp32", "fp16", "fp16_relaxed"), or -1. */
int vk_precision_parse(const char *s);
const char *vk_precision_name(vk_precision p);
/* The arithmetic the oracle budgets for a mode. */
par_arith vk_precision_arith(vk_precision p);
/* 0 when a device with these features runs mode p, else -1 with a one-line reason naming the missing feature. */
int vk_precision_check(vk_precision p, int storage16, int float16, const char *device, char *err, size_t errlen);
/* The f16 bits of x rounded to nearest, ties to even (IEEE binary16; |x| >= 65520 is Inf, NaN stays a quiet NaN,
 * f16 subnormals kept). */
uint16_t vk_f16_bits(float x);

/* ---- The context ---- */
/* One pipeline of the context (vk_pipes.c) and its key. */
typedef struct vk_pipe {
    const char *shader;         /* name in the shader table */
    vk_variant variant;
    int32_t op;                 /* specialization constant 1 */
    uint32_t spec[VK_MAX_SPEC]; /* specialization constants 2, 3, ... (0: the shader's default) */
    VkPipeline pipeline;
} vk_pipe;

typedef struct vk_ctx {
    VkInstance instance;
    int n_phys;
    VkPhysicalDevice phys[VK_MAX_DEVICES];
    vk_devinfo info[VK_MAX_DEVICES];
    int chosen;                 /* index into phys */
    /* validate=1 (vk_device.c): the instance has VK_LAYER_KHRONOS_validation and a debug-utils messenger whose
     * callback keeps the first message counted (vk_diag_counts) and how many there were, until diagnostics asks. */
    int validate;
    VkDebugUtilsMessengerEXT messenger;
    pthread_mutex_t diag_lock;
    int n_diag;
    char diag[1024];
    /* GPU timestamps (timestamps=1, the default): usable when ts_bits > 0 and ts_period > 0. */
    int timestamps;
    uint32_t ts_bits;           /* timestampValidBits of the queue family; 0: it cannot time */
    float ts_period;            /* nanoseconds per tick (limits.timestampPeriod) */
    /* Device loss: the call that returned VK_ERROR_DEVICE_LOST; "" while the device is fine. Once set, prepare and
     * run refuse with it. */
    char lost[64];
    /* Tests only (tests/test_vulkan.c sets them; nothing else does): the fail_nth-th VK_CALL from now returns
     * fail_result without making the call (0: off), and test_break plants one misuse of the API (VK_BREAK_*) so that
     * validate=1 has something real to find. */
    int fail_nth;
    VkResult fail_result;
    unsigned test_break;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memprops;
    char driver[128];           /* driverName / driverInfo when VK_KHR_driver_properties is there, else "" */
    uint32_t queue_family;
    int storage16;              /* the chosen device's storageBuffer16BitAccess */
    int float16;                /* its shaderFloat16 (VK_KHR_shader_float16_int8, listed by the device) */
    int float16_ext;            /* VK_KHR_shader_float16_int8 is a device extension to enable for it */
    vk_precision precision;     /* the `precision` knob */
    VkDevice device;            /* created at the first prepare, after the knobs */
    VkQueue queue;
    /* The context's pipelines (vk_pipes.c), kept for its life, on its one descriptor set and pipeline layout;
     * pipes_created counts the pipelines it created (tests/test_vulkan.c). */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipe_layout;
    int n_pipes, cap_pipes;
    vk_pipe *pipes;
    int64_t pipes_created;
    int warm_due;               /* the process's first context: init warms the driver (vk_warm_driver) */
    int prepared_once;          /* knobs are refused after this */
    int direct_kernels;         /* knob kernels=direct: no tiled conv2d / linear / matmul shaders */
} vk_ctx;

/* The planted misuses of test_break. */
#define VK_BREAK_DESC_RANGE 1u  /* prepare: an unused descriptor slot's range runs past its buffer (core validation) */
#define VK_BREAK_RESUBMIT 2u    /* run: the command buffer submitted twice, the second while the first is pending
                                 * (core validation, at submit; it lacks SIMULTANEOUS_USE) */
#define VK_BREAK_BARRIER 4u     /* prepare: no barrier between a dispatch and the one reading its output
                                 * (synchronization validation, at record) */

par_status vk_ctx_create(vk_ctx **out, par_msg *msg);
/* How many shared objects this process's first instance creation loaded and vk_ctx_create pinned, so that they stay
 * loaded after vkDestroyInstance and a forked child's instance finds them loaded (vk_device.c; 0 before the first
 * context, and with PARITY_VULKAN_PIN=0). */
int vk_pinned_libraries(void);
/* The storage buffers a dispatch binds on the chosen device: VK_MAX_SLOTS, or 4 (the least Vulkan guarantees,
 * maxPerStageDescriptorStorageBuffers) on a device that allows no more; then no dispatch uses slot 4. */
int vk_slots(const vk_ctx *c);
void vk_ctx_destroy(vk_ctx *c);
/* Chooses the physical device by the `device` knob's value. */
par_status vk_ctx_select(vk_ctx *c, const char *want, par_msg *msg);
/* Creates the logical device and the compute queue if not yet done, with the features the precision mode needs
 * (PAR_UNSUPPORTED naming the missing one when the chosen device lacks it). */
par_status vk_ctx_open(vk_ctx *c, par_msg *msg);
/* The validate knob: re-creates the instance (no device exists yet) with or without the validation layer and its
 * messenger, keeping the chosen device. PAR_UNSUPPORTED naming the layer and its package when it is not installed. */
par_status vk_ctx_set_validate(vk_ctx *c, int on, par_msg *msg);

/* ---- The context's pipelines (vk_pipes.c) ---- */
/* The context's descriptor set layout and pipeline layout, created at the first prepare. */
par_status vk_layouts(vk_ctx *c, par_msg *msg);
struct vk_dispatch;
/* The pipeline of d's (shader, variant, OP, constants): the context's, created when it has none. */
par_status vk_pipeline(vk_ctx *c, const struct vk_dispatch *d, VkPipeline *out, par_msg *msg);
/* Destroys every pipeline and the layouts (before the device). */
void vk_pipes_destroy(vk_ctx *c);
/* The driver's warm-up at the process's first context (c->warm_due): on a CPU device, one pipeline made by
 * vk_pipeline on a device of its own, then all of it destroyed; failures are ignored. */
void vk_warm_driver(vk_ctx *c);
/* Whether a debug-utils message of this severity and type is a defect (pure; the policy in vk_device.c). */
int vk_diag_counts(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT type);
/* The messages counted since the last call, as one line in buf (truncated to len), then forgotten; the length the
 * whole line needs, 0 when there was none. buf NULL or len 0 only asks the length and forgets nothing. */
size_t vk_ctx_diagnostics(vk_ctx *c, char *buf, size_t len);

/* Every Vulkan call of prepare and run whose result matters goes through VK_CALL: a VK_ERROR_DEVICE_LOST is noted
 * (the context refuses further work, naming `name`), and in tests a planted failure (fail_nth) replaces the call. */
#define VK_CALL(c, name, call) vk_note((c), (name), vk_fault_due(c) ? (c)->fail_result : (call))
int vk_fault_due(vk_ctx *c);
VkResult vk_note(vk_ctx *c, const char *name, VkResult r);

/* ---- The sub-allocator (vk_mem.c) ---- */
typedef enum vk_pool_kind {
    VK_POOL_DEVICE = 0,         /* intermediates: device-local when the device has it */
    VK_POOL_HOST = 1,           /* staging and constants: host-visible and host-coherent, persistently mapped */
    VK_POOL_COUNT
} vk_pool_kind;

/* Placement only (pure, tested without a device): blocks of `block_bytes` (a larger request gets a block of its own
 * size), offsets aligned to `align` (a power of two), bump allocation within the newest block. */
typedef struct vk_arena {
    uint64_t block_bytes;
    uint64_t align;
    int n_blocks;
    int cap_blocks;
    uint64_t *block_size;       /* size of each block */
    uint64_t *block_used;       /* bytes used in each block */
} vk_arena;

void vk_arena_init(vk_arena *a, uint64_t block_bytes, uint64_t align);
void vk_arena_free(vk_arena *a);
/* Places `size` bytes: *block and *offset; returns 0, or -1 when out of host memory for the bookkeeping. */
int vk_arena_place(vk_arena *a, uint64_t size, int *block, uint64_t *offset);

typedef struct vk_block {
    VkDeviceMemory mem;
    VkBuffer buf;
    void *map;                  /* mapped pointer (host pool, and a device pool whose memory is host-visible) */
} vk_block;

typedef struct vk_pool {
    vk_arena arena;
    vk_block *blocks;           /* arena.n_blocks of them once vk_pool_commit has run */
    uint32_t type_index;        /* memory type */
    int host_visible;
} vk_pool;

/* NC4HW4 (channel-packed by 4) mapping of logical NCHW: the element's float offset, and the tensor's float count. */
uint64_t vk_nc4_offset(const int64_t d[4], const int64_t i[4]);
uint64_t vk_nc4_count(const int64_t d[4]);

/* ---- Shaders (generated table, $(BUILD)/gen/backends/vulkan/vk_shaders.c) ---- */
typedef struct vk_shader_code {
    const char *name;
    vk_variant variant;
    const uint32_t *words;
    size_t n_words;
} vk_shader_code;
const vk_shader_code *vk_shader_find(const char *name, vk_variant variant);

/* ---- A prepared graph ---- */
/* The push constants every shader declares (shaders/common.glsl, struct P): 112 bytes. */
typedef struct vk_push {
    int32_t od[4], ad[4], bd[4];
    int32_t p0[4], p1[4], p2[4];
    int32_t lay;                /* bit 0: output NC4HW4, bits 1, 2, 3: input a, b, c NC4HW4, bit 4: slot 4's */
    int32_t total;              /* work items */
    float f0, f1;
} vk_push;

typedef struct vk_tensor {
    int pool;                   /* vk_pool_kind */
    int block;
    uint64_t offset, bytes;
    int nc4;                    /* stored NC4HW4 (4-D activations) */
    int f16;                    /* float data stored as 16-bit floats (the f16 modes; never staging) */
    int64_t d4[4];              /* logical dims right-aligned to 4 (leading 1s) */
    float *init;                /* a tensor the lowering derived (folded parameters): its data, uploaded at commit
                                 * (converted to f16 when f16 is set) */
} vk_tensor;

typedef struct vk_dispatch {
    const char *shader;         /* name in the shader table */
    int32_t op;                 /* specialization constant 1 */
    uint32_t spec[VK_MAX_SPEC]; /* specialization constants 2, 3, ... (tile sizes); 0: the shader's default */
    vk_variant variant;         /* the shader's precision variant: the graph's, or an edge conversion */
    int slot[VK_MAX_SLOTS];     /* tensor indices; -1 unused */
    vk_push pc;
    uint32_t groups_x, groups_y;
    VkPipeline pipeline;        /* the context's (vk_pipes.c), shared with every dispatch of the same key */
    VkDescriptorSet set;
    int32_t node;               /* the graph node it computes (set by vk_graph.c's prepare after lowering the node);
                                 * -1 an edge conversion (vk_new_dispatch's default) */
} vk_dispatch;

typedef struct vk_graph {
    vk_ctx *ctx;
    const par_graph_desc *g;
    vk_variant variant;         /* of the precision mode: every dispatch's unless it says otherwise */
    int f16;                    /* float values stored as f16 (the f16 modes) */
    vk_pool pools[VK_POOL_COUNT];
    int n_tensors, cap_tensors;
    vk_tensor *tensors;         /* [0, n_values): the values; then one staging per graph input, then per output;
                                 * then the tensors the lowering adds (vk_add_tensor) */
    int n_disp, cap_disp;
    vk_dispatch *disp;
    VkDescriptorSetLayout set_layout; /* the context's (vk_pipes.c) */
    VkPipelineLayout pipe_layout;
    VkDescriptorPool desc_pool;
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkFence fence;
    unsigned char *skip;        /* per node: 1 when an earlier dispatch computes it (vk_ops_tiled.c's fusion) */
    const void *const *inputs;  /* bound */
    void *const *outputs;
    /* Timestamps: query 0 at the start, query k after the k-th run of consecutive dispatches of one node (or of
     * edge conversions): span k is ts[k] - ts[k-1], and group_node[k] its node (-1 for conversions). */
    VkQueryPool qpool;
    uint32_t n_queries;
    int32_t *group_node;
    uint64_t *ts;
    int ts_valid;               /* the last run's timestamps were read */
} vk_graph;

/* vk_mem.c */
par_status vk_pools_init(vk_graph *vg, par_msg *msg);
/* Places a tensor of `bytes` in pool `kind`. */
par_status vk_tensor_place(vk_graph *vg, int t, int kind, uint64_t bytes, par_msg *msg);
/* Adds a host-pool tensor of n floats holding `data` (taken over, freed at release; stored as f16 in the f16
 * modes); its index, or -1. */
int vk_add_tensor(vk_graph *vg, float *data, int64_t n, par_msg *msg);
/* Creates the blocks (VkDeviceMemory + one VkBuffer over each) for every placement made. */
par_status vk_pools_commit(vk_graph *vg, par_msg *msg);
void vk_pools_free(vk_graph *vg);
/* The mapped pointer of tensor t, or NULL when its memory is not host-visible. */
void *vk_tensor_map(vk_graph *vg, int t);

/* vk_ops.c */
par_status vk_op_supports(const par_graph_desc *g, int32_t node, par_msg *msg);
/* Appends the dispatches of node `node` (its tensors are placed). */
par_status vk_op_lower(vk_graph *vg, int32_t node, par_msg *msg);
/* Appends a layout-converting copy from tensor src to tensor dst (same logical dims). */
par_status vk_emit_copy(vk_graph *vg, int dst, int src, par_msg *msg);
/* 4-D right-aligned dims of a value; -1 when its rank is above 4. */
int vk_dims4(const par_value *v, int64_t d4[4]);
/* Appends a dispatch of `total` work items (groups over x, then y beyond maxComputeWorkGroupCount[0]). */
vk_dispatch *vk_new_dispatch(vk_graph *vg, const char *shader, int32_t op, uint32_t total, par_msg *msg);

/* Appends a dispatch of `shader` with output tensor o and inputs a, b, c (-1 absent), `total` work items; the dims
 * and layout bits of o, a, b are filled in. */
vk_dispatch *vk_emit(vk_graph *vg, const char *shader, int32_t op, int o, int a, int b, int c, int64_t total,
                     par_msg *msg);

/* conv2d's explicit padding [pt, pl, pb, pr] from its pad_mode (same and valid as NNAPI). */
void vk_conv_padding(const par_node *n, const int64_t in[4], const int64_t out[4], int64_t kh, int64_t kw,
                     int64_t pad[4]);

/* vk_ops_tiled.c: the tiled lowerings of conv2d, linear and matmul, and the nodes a conv absorbed. Sets *done to 1
 * when it appended the node's dispatches or the node was absorbed by an earlier one (vg->skip), to 0 when the
 * node is not its own or its conditions do not hold (vk_op_lower then lowers it the general way). */
par_status vk_lower_tiled(vk_graph *vg, int32_t node, int *done, par_msg *msg);

/* vk_graph.c */
par_status vk_graph_prepare(vk_ctx *c, const par_graph_desc *g, vk_graph **out, par_msg *msg);
par_status vk_graph_bind(vk_graph *vg, const void *const *inputs, void *const *outputs, par_msg *msg);
par_status vk_graph_run(vk_graph *vg, par_msg *msg);
/* The last run's device time (PAR_PROC_DEVICE_TIME): 1 and the times, or 0 when it was not measured. */
int vk_graph_device_time(const vk_graph *vg, double *total_ms, double *node_ms, int32_t n_nodes);
void vk_graph_release(vk_graph *vg);

#endif /* VK_INTERNAL_H */
