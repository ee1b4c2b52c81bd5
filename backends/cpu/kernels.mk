# kernels.mk - the compute kernels of the cpu backend (GEMM, convolution, depthwise, packing, ISA choice,
# micro-benchmarks), included by backends/cpu/builtin.mk: `include backends/cpu/kernels.mk`.
# It appends the kernel sources to BUILTIN_SRC and gives each micro-kernel object its ISA flags; every other
# kernel file is portable C and runs only the kernels cpu_isa_detect() allows. Libraries: -lpthreadpool -lcpuinfo.
# Must not set flags on files outside the kernels (those belong to builtin.mk).

CPU_KERNEL_SRC := backends/cpu/isa.c backends/cpu/ukernels.c backends/cpu/pack.c backends/cpu/gemm.c \
                  backends/cpu/conv.c backends/cpu/dwconv.c backends/cpu/bench.c \
                  $(call arch_src,$(wildcard backends/cpu/f32-*.c))
BUILTIN_SRC += $(CPU_KERNEL_SRC)
BUILTIN_LIBS += -lpthreadpool -lcpuinfo

CPU_AVX512_FLAGS := -O3 -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma
CPU_AVX2_FLAGS := -O3 -mavx2 -mfma
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard backends/cpu/f32-*-avx512.c)): CFLAGS += $(CPU_AVX512_FLAGS)
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard backends/cpu/f32-*-avx2.c)): CFLAGS += $(CPU_AVX2_FLAGS)
# aarch64 (the Makefile's arch_src naming rule): *-neon.c get NEON_FLAGS, *-neondot.c (only they) NEONDOT_FLAGS.
$(call neon_obj,$(CPU_KERNEL_SRC)): CFLAGS += $(NEON_FLAGS)
$(call neondot_obj,$(CPU_KERNEL_SRC)): CFLAGS += $(NEONDOT_FLAGS)
