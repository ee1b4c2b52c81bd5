# backends/qnnpack/builtin.mk - the qnnpack int8 backend, built into parity (registered in exec/backends.def).
# The VNNI kernels are compiled with clang (GCC 12 schedules vpdpbusd accumulator loops about 2.3x worse) and only
# they get the AVX-512 flags; the AVX2 kernels get clang too (the C around their assembly block schedules better) and
# -mavx2 -mfma; everything else is portable C. The kernel set is chosen at run time with cpuinfo (knob
# kernels=auto|vnni|avx2|scalar). Kernel files are named for their ISA and built only for its architecture (the
# Makefile's arch_src: *_avx2.c, *_vnni.c on x86-64; *_neon.c, *_neondot.c on aarch64, with NEON_FLAGS and
# NEONDOT_FLAGS below).
QNN_DIR := backends/qnnpack
BUILTIN_SRC += $(QNN_DIR)/qnnpack.c $(QNN_DIR)/qnn_common.c $(QNN_DIR)/qnn_conv.c $(QNN_DIR)/qnn_ops.c $(QNN_DIR)/qnn_reduce.c $(QNN_DIR)/qnn_dynamic.c \
               $(QNN_DIR)/qnn_8da4w.c $(QNN_DIR)/qnn_float.c $(QNN_DIR)/qnn_16a8w.c \
               $(call arch_src,$(wildcard $(QNN_DIR)/qnn_ukernel_*.c))
BUILTIN_LIBS += -lpthreadpool -lcpuinfo
# linear_8da4w's row quantization (qd8_row) is a branch-free loop that -O3 vectorizes with the baseline ISA.
$(BUILD)/obj/$(QNN_DIR)/qnn_8da4w.o: CFLAGS += -O3
$(BUILD)/obj/$(QNN_DIR)/qnn_ukernel_avx2.o: CC := clang
$(BUILD)/obj/$(QNN_DIR)/qnn_ukernel_avx2.o: CFLAGS += -O3 -mavx2 -mfma -Wno-unknown-warning-option
$(BUILD)/obj/$(QNN_DIR)/qnn_ukernel_vnni.o: CC := clang
$(BUILD)/obj/$(QNN_DIR)/qnn_ukernel_vnni.o: CFLAGS += -O3 -mavx512f -mavx512bw -mavx512vl -mavx512vnni \
                                                      -Wno-unknown-warning-option
# aarch64 (the Makefile's arch_src naming rule): *_neon.c get NEON_FLAGS, *_neondot.c (only they) NEONDOT_FLAGS.
$(call neon_obj,$(wildcard $(QNN_DIR)/*.c)): CFLAGS += $(NEON_FLAGS)
$(call neondot_obj,$(wildcard $(QNN_DIR)/*.c)): CFLAGS += $(NEONDOT_FLAGS)
