# backends/cpu/builtin.mk - the `cpu` built-in backend (XNNPACK-style f32 CPU engine): the planner and ops
# (cpu.c, plan.c, plan_util.c, ops_*.c), and the compute kernels of kernels.mk. Registered by PAR_BACKEND(cpu) in
# exec/backends.def. Libraries: pthreadpool (threads), cpuinfo (ISA detection).
CPU_PLAN_SRC := backends/cpu/cpu.c backends/cpu/plan.c backends/cpu/plan_util.c backends/cpu/ops_eltwise.c backends/cpu/ops_pool.c \
                backends/cpu/ops_norm.c backends/cpu/ops_shape.c backends/cpu/ops_select.c backends/cpu/ops_matrix.c \
                backends/cpu/ops_dynamic.c backends/cpu/ops_attention.c $(call arch_src,$(wildcard backends/cpu/ops_vec_*.c))
BUILTIN_SRC += $(CPU_PLAN_SRC)

include backends/cpu/kernels.mk

# The vector elementwise kernels: each file only runs when cpu_isa_detect() (or kernels=) allows its ISA.
$(BUILD)/obj/backends/cpu/ops_vec_avx2.o: CFLAGS += -O3 -mavx2 -mfma
$(BUILD)/obj/backends/cpu/ops_vec_avx512.o: CFLAGS += -O3 -mavx512f -mavx512dq -mfma
$(call neon_obj,$(CPU_PLAN_SRC)): CFLAGS += $(NEON_FLAGS)
$(call neondot_obj,$(CPU_PLAN_SRC)): CFLAGS += $(NEONDOT_FLAGS)
# Portable op loops (pooling, data movement): -O3 lets the compiler vectorize the channel loops (baseline x86-64).
$(patsubst %.c,$(BUILD)/obj/%.o,backends/cpu/ops_eltwise.c backends/cpu/ops_pool.c backends/cpu/ops_norm.c \
  backends/cpu/ops_shape.c backends/cpu/ops_select.c backends/cpu/ops_matrix.c backends/cpu/ops_dynamic.c \
  backends/cpu/ops_attention.c backends/cpu/plan.c backends/cpu/plan_util.c): CFLAGS += -O3
